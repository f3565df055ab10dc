-- Never later: a due look stays due; status, lease and updated_at stay.
UPDATE intents SET next_check_at = :at
WHERE id = :id AND status = :status AND (next_check_at IS NULL OR next_check_at > :at)
