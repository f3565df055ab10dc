SELECT {columns} FROM intents WHERE room_id = ? AND {live} ORDER BY created_at, seq
