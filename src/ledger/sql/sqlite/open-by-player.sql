SELECT {columns} FROM intents WHERE player_id = ? AND {live} ORDER BY created_at, seq
