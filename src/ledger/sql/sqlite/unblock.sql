DELETE FROM blocked WHERE player_id = ?
