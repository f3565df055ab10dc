INSERT INTO journal (intent, tag, debit, credit, amount, unit, why, at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (intent, tag) DO NOTHING
