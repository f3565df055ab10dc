SELECT 1 FROM blocked WHERE player_id = ?
