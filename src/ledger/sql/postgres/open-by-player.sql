SELECT {columns} FROM {s}.intents WHERE player_id = $1 AND {open} ORDER BY created_at, seq
