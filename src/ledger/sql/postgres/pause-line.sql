INSERT INTO {s}.payouts_paused (line) VALUES ($1)
