/**
 * What is still in flight in the ledger, and what of it only time can end. A match's payout or
 * refund whose create answer was lost (its process SIGKILLed mid-create, or no answer within the
 * API's timeout on a loaded machine) is `unknown`: its code was only in that answer, so it is
 * never sent again while it might exist; it ends at its deadline (docs/MATCHES.md, "a payout's
 * create answer is lost"), and so does its match. A run shorter than that deadline excuses such
 * intents, counts them, and still checks that the service holds at most one request for each.
 */
import type pg from 'pg';

export interface Flying {
  id: string;
  kind: string;
  status: string;
  groupId: string | null;
  createdAt: number;
  expiresAt: number | null;
  fromPot: boolean;
}

/** In flight: anything creating or unknown, a match not ended, a fee still open. */
export async function inFlight(pgPool: pg.Pool): Promise<Flying[]> {
  const { rows } = await pgPool.query<{
    id: string;
    kind: string;
    status: string;
    group_id: string | null;
    created_at: string;
    expires_at: string | null;
    pay_key: string | null;
  }>(
    `SELECT id, kind, status, group_id, created_at, expires_at, meta->>'payKey' AS pay_key
       FROM lightning.intents
      WHERE status IN ('creating', 'unknown') OR (status = 'pending' AND kind IN ('match', 'entryFee'))`,
  );
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    status: r.status,
    groupId: r.group_id,
    createdAt: Number(r.created_at),
    expiresAt: r.expires_at === null ? null : Number(r.expires_at),
    fromPot: r.group_id !== null && r.pay_key !== null,
  }));
}

/**
 * The ids only time can end: a match's payout or refund left `unknown` (its deadline still
 * ahead), and a match that waits for nothing else.
 */
export function waitingForDeadline(flying: readonly Flying[], now: number): Set<string> {
  const lost = flying.filter(
    (i) => i.kind === 'reward' && i.status === 'unknown' && i.fromPot && (i.expiresAt ?? 0) > now,
  );
  const ids = new Set(lost.map((i) => i.id));
  for (const match of flying.filter((i) => i.kind === 'match' && i.status === 'pending')) {
    const children = flying.filter((i) => i.groupId === match.id && i.id !== match.id);
    if (children.length > 0 && children.every((c) => ids.has(c.id))) ids.add(match.id);
  }
  return ids;
}
