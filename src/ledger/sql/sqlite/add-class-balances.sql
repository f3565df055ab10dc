INSERT INTO class_balances (class, unit, balance) VALUES (?, ?, ?), (?, ?, ?)
ON CONFLICT (class, unit) DO UPDATE SET balance = balance + excluded.balance
