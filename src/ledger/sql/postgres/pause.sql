-- The pause's row names its line, so it is written after the line (pause-line), in the same
-- transaction, under the log's lock that every pause and resume takes.
SELECT 1 AS free WHERE NOT EXISTS (SELECT 1 FROM {s}.payouts_paused)
