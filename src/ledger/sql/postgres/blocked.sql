SELECT 1 FROM {s}.blocked WHERE player_id = $1
