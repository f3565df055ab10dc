-- A house account's shards summed: each of its rows holds a part of its balance.
SELECT account, unit, sum(balance)::text AS balance FROM {s}.balances
WHERE account = ANY($1::text[]) GROUP BY account, unit ORDER BY unit COLLATE "C"
