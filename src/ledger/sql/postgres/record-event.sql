-- Remembers an id for good: a signed event has no timestamp, so only its id tells a replay.
INSERT INTO {s}.events (id, seen_at) VALUES ($1, $2::bigint)
ON CONFLICT (id) DO NOTHING RETURNING id
