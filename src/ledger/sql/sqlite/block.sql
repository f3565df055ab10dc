INSERT INTO blocked (player_id, since) VALUES (?, ?) ON CONFLICT (player_id) DO NOTHING
