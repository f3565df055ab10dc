WITH {moves}
UPDATE {s}.intents SET lease_owner = NULL, lease_until = NULL FROM moves
WHERE id = $1 AND lease_owner = $2
