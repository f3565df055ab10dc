-- Class totals: a GROUP BY of the balances (a few rows per account), never of the journal.
SELECT class AS account, unit, sum(balance)::text AS balance
FROM {s}.balances GROUP BY class, unit ORDER BY class COLLATE "C", unit COLLATE "C"
