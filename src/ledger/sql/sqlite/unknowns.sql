SELECT {columns} FROM intents WHERE status = 'unknown'
ORDER BY created_at, seq LIMIT ?
