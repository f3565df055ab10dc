-- The pause's row names its line: made first (line 0), linked by pause-line once appended.
INSERT INTO payouts_paused (only_row, line) VALUES (1, 0) ON CONFLICT DO NOTHING
