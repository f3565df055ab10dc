SELECT {columns} FROM {s}.intents WHERE status = 'unknown'
ORDER BY created_at, seq LIMIT $1
