-- The start-up sweep: the same WHERE terms as the due index, so it walks only open intents.
WITH {moves}, advanced AS (
  UPDATE {s}.intents SET next_check_at = $1::bigint FROM moves
  WHERE next_check_at IS NOT NULL AND {open} AND next_check_at > $1::bigint
    AND moves_money
  RETURNING 1)
SELECT count(*)::int AS n FROM advanced
