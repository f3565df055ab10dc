SELECT intent_id FROM {s}.seats WHERE group_id = $1 AND player_id = $2
