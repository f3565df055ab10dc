-- A hold of $1 ms from the database's now, unless a later one is in force.
WITH h AS (
  SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint + $1::bigint AS until
)
UPDATE {s}.rate SET hold = h.until, tokens = 0, at = greatest(at, h.until)
FROM h WHERE id = 1 AND hold < h.until
