SELECT s.intent, i.id FROM seats AS s JOIN intents AS i ON i.seq = s.intent
WHERE s.group_id = ? AND s.player_id = ?
