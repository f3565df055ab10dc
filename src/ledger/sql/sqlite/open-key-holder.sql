SELECT id FROM intents WHERE open_key = ? AND {live}
