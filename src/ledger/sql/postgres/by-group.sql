SELECT {columns} FROM {s}.intents WHERE group_id = $1 AND group_id IS NOT NULL
ORDER BY created_at, seq
