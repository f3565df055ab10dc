SELECT a.name AS account, b.unit, CAST(b.balance AS TEXT) AS balance FROM accounts AS a
JOIN balances AS b ON b.account = a.id WHERE a.name = ? ORDER BY b.unit
