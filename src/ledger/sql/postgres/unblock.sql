DELETE FROM {s}.blocked WHERE player_id = $1 RETURNING player_id
