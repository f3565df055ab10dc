SELECT id FROM {s}.intents WHERE open_key = $1 AND {open}
