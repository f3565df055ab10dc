INSERT INTO intents (id, kind, status, live, room_id, player_id, amount, unit, description,
  callback_token, idempotency_key, open_key, group_id, expires_at, created_at,
  updated_at, next_check_at, checks, meta)
VALUES (:id, :kind, :status, :live, :room_id, :player_id, :amount, :unit, :description,
  :callback_token, :idempotency_key, :open_key, :group_id, :expires_at, :now,
  :now, :next_check_at, 0, :meta)
RETURNING {columns}
