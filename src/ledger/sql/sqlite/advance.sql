-- The start-up sweep: the same WHERE terms as the due index, so it walks only open intents.
UPDATE intents SET next_check_at = :at
WHERE next_check_at IS NOT NULL AND {live} AND next_check_at > :at AND kind <> 'match'
