-- Leases are bookkeeping about who is looking, not a change to the intent: updated_at stays.
-- With a share for the queue (:split), queued payouts are taken apart from the others.
-- Due: open, next_check_at passed, the lease free or run out.
UPDATE intents SET lease_owner = :owner, lease_until = :until
WHERE seq IN (
  SELECT seq FROM (SELECT seq FROM intents
    WHERE next_check_at <= :now AND next_check_at IS NOT NULL AND {live}
      AND (lease_owner IS NULL OR lease_until IS NULL OR lease_until <= :now)
      AND (:split = 0 OR status <> 'queued')
    ORDER BY next_check_at, created_at, seq LIMIT :limit)
  UNION ALL
  SELECT seq FROM (SELECT seq FROM intents
    WHERE next_check_at <= :now AND next_check_at IS NOT NULL AND {live}
      AND (lease_owner IS NULL OR lease_until IS NULL OR lease_until <= :now)
      AND :split = 1 AND status = 'queued'
    ORDER BY next_check_at, created_at, seq LIMIT :share))
RETURNING {columns}
