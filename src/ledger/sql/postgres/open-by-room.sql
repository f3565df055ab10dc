SELECT {columns} FROM {s}.intents WHERE room_id = $1 AND {open} ORDER BY created_at, seq
