-- Under the exclusive moves lock (taken by the transaction before this statement, so its
-- snapshot already holds every acknowledged write). SKIP LOCKED passes over a row that
-- something outside this protocol holds (an operator's open transaction) instead of waiting.
-- Leases are bookkeeping about who is looking, not a change to the intent: updated_at stays.
-- With a share for the queue ($5), queued payouts are taken apart from the others.
WITH others AS (SELECT seq FROM {s}.intents
    WHERE next_check_at <= $3::bigint AND {open}
      AND (lease_owner IS NULL OR lease_until IS NULL OR lease_until <= $3::bigint)
      AND (NOT $5::boolean OR status <> 'queued')
    ORDER BY next_check_at, created_at, seq
    LIMIT $4
    FOR UPDATE SKIP LOCKED),
  share AS (SELECT seq FROM {s}.intents
    WHERE next_check_at <= $3::bigint AND {open}
      AND (lease_owner IS NULL OR lease_until IS NULL OR lease_until <= $3::bigint)
      AND $5::boolean AND status = 'queued'
    ORDER BY next_check_at, created_at, seq
    LIMIT $6
    FOR UPDATE SKIP LOCKED)
UPDATE {s}.intents SET lease_owner = $1, lease_until = $2::bigint
WHERE seq IN (SELECT seq FROM others UNION ALL SELECT seq FROM share)
RETURNING {columns}
