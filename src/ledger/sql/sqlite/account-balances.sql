SELECT b.unit, b.balance FROM accounts AS a
JOIN balances AS b ON b.account = a.id WHERE a.name = ? ORDER BY b.unit
