-- Whether an intent was recorded in a first status of its own (held, queued: step < 0).
SELECT 1 AS own FROM moves WHERE intent = ? AND step < 0 LIMIT 1
