INSERT INTO {s}.blocked (player_id, since) VALUES ($1, $2)
ON CONFLICT (player_id) DO NOTHING RETURNING player_id
