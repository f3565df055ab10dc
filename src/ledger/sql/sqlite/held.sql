SELECT {columns} FROM intents WHERE status = 'held'
ORDER BY created_at, seq LIMIT ?
