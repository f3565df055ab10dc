INSERT INTO operator_log (at, by, action, intent_id, player_id, before, after, note)
VALUES (:at, :by, :action, :intentId, :playerId, :before, :after, :note)
RETURNING {lines}
