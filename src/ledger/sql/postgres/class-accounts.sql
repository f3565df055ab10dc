-- One class's accounts holding msats, richest first, from a page's cursor ($2, $3). Not the
-- house's (spread over shards): a row is an account's whole balance.
SELECT account, unit, balance::text AS balance FROM {s}.balances
WHERE class = $1 AND unit = 'msats' AND balance <> 0
  AND ($2::bigint IS NULL OR balance < $2::bigint
    OR (balance = $2::bigint AND account COLLATE "C" > $3))
ORDER BY balance DESC, account COLLATE "C" LIMIT $4
