SELECT {columns} FROM {s}.intents WHERE kind = $1 AND remote_id = $2
ORDER BY created_at, seq LIMIT 1
