-- Under the exclusive moves lock, taken before this statement: its snapshot holds every
-- acknowledged write. SKIP LOCKED passes over a row something outside this protocol holds.
-- Leases record who is looking, not a change: updated_at stays. With a share for the queue
-- ($5), queued payouts are taken apart from the others.
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
    FOR UPDATE SKIP LOCKED),
  claimed AS (UPDATE {s}.intents SET lease_owner = $1, lease_until = $2::bigint
    WHERE seq IN (SELECT seq FROM others UNION ALL SELECT seq FROM share)
    RETURNING {columns})
SELECT * FROM claimed ORDER BY next_check_at, created_at, seq
