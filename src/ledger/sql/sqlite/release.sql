UPDATE intents SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?
