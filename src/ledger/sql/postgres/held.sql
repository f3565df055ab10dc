SELECT {columns} FROM {s}.intents WHERE status = 'held'
ORDER BY created_at, seq LIMIT $1
