-- Kept for good: a signed event has no timestamp, so only its id tells a late replay.
INSERT OR IGNORE INTO events (id, seen_at) VALUES (?, ?)
