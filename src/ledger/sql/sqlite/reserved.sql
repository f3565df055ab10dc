-- What a budget window holds: payouts created after the window's start, unless expired or
-- failed ({who}: whose payouts, then the start's parameter).
SELECT COALESCE(SUM(CAST(amount AS INTEGER)), 0) AS reserved FROM intents
WHERE {who}{payout} AND created_at > ? AND status NOT IN ('expired', 'failed')
