SELECT {columns} FROM intents WHERE group_id = ? AND group_id IS NOT NULL
ORDER BY created_at, seq
