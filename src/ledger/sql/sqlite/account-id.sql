SELECT id FROM accounts WHERE name = ?
