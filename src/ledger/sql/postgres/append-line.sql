INSERT INTO {s}.operator_log (at, by, action, intent_id, player_id, before, after, note)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING {lines}
