UPDATE {s}.seats SET intent_id = $1
WHERE group_id = $2 AND player_id = $3 AND intent_id = $4 RETURNING 1 AS passed
