INSERT INTO moves (intent, step, at, note) VALUES (?, ?, ?, ?)
