SELECT {columns} FROM intents WHERE kind = ? AND remote_id = ?
ORDER BY created_at, seq LIMIT 1
