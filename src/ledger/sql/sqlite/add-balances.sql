-- A posting's two sides in one statement (the rows are upserted one after the other, so two
-- sides of one class, claimable:a -> claimable:b, add up); add-class-balances likewise.
INSERT INTO balances (account, unit, balance) VALUES (?, ?, ?), (?, ?, ?)
ON CONFLICT (account, unit) DO UPDATE SET balance = balance + excluded.balance
