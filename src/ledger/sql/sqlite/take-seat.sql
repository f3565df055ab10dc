INSERT INTO seats (group_id, player_id, intent) VALUES (?, ?, ?)
