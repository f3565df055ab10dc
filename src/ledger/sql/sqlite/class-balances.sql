SELECT class AS account, unit, CAST(balance AS TEXT) AS balance FROM class_balances
ORDER BY class, unit
