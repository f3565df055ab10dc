-- A take from the game's bucket (rate.ts) by the database's clock, refilled under the row's
-- lock, written only when taken. $1 perSecond, $2 burst, $3 keep; `wait`: 0 (taken) or the ms.
WITH c AS (
    SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now
  ), o AS (
    SELECT hold, at, c.now,
      least($2::float8, tokens + greatest(0, c.now - at) * $1::float8 / 1000) AS t
    FROM {s}.rate, c WHERE id = 1 FOR UPDATE OF rate
  ), taken AS (
    UPDATE {s}.rate AS r SET tokens = o.t - 1, at = greatest(o.at, o.now)
    FROM o WHERE r.id = 1 AND o.now >= o.hold AND o.t >= 1 + $3::int
    RETURNING 1
  )
SELECT (CASE WHEN now < hold THEN hold - now
  WHEN t >= 1 + $3::int THEN 0
  ELSE greatest(1, ceil((1 + $3::int - t) * 1000 / $1::float8))::bigint END)::text AS wait
FROM o
