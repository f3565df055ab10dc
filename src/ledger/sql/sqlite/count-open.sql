SELECT COUNT(*) AS open FROM intents WHERE player_id = ? AND {live}
