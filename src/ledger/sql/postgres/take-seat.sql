INSERT INTO {s}.seats (group_id, player_id, intent_id) VALUES ($1, $2, $3)
ON CONFLICT (group_id, player_id) DO NOTHING RETURNING 1 AS took
