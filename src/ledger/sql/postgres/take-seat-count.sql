-- One more taken, only below the cap ($2; null: none): no row back when every seat is.
INSERT INTO {s}.seat_counts AS c (group_id, taken) VALUES ($1, 1)
ON CONFLICT (group_id) DO UPDATE SET taken = c.taken + 1
  WHERE $2::integer IS NULL OR c.taken < $2::integer
RETURNING taken
