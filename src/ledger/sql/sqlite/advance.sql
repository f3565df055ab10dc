-- The start-up sweep of what moves money (live = 1); the due index's terms, so it walks open ones.
UPDATE intents SET next_check_at = :at
WHERE next_check_at IS NOT NULL AND {live} AND next_check_at > :at AND live = 1
