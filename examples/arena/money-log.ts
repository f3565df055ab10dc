/**
 * The arena's money in the server log, one line per thing an operator may be asked about:
 * every intent that ended, every payout held for approval, every match funded, settled or
 * aborted, every refund issued (with why: the round was called off, a fee was paid after its
 * deadline or into a round already decided) and every create whose outcome is unknown. Each
 * payout is said as what it is now (a code issued, held, paid, rejected), never "paid" before
 * it is. Refunds are made by the matches themselves, exactly once; these lines only say that
 * they were.
 *
 * Costs: seven listeners on the server's events, one line each time one fires.
 */
import type { Intent, Lightning, MatchView } from 'colyseus-lightning';

/** What a payout's status means, in an operator's words. */
const MEANS: Record<string, string> = {
  creating: 'being made',
  pending: 'claim code issued, not claimed yet',
  held: "held: waits for an operator's approval (console)",
  queued: 'queued: made when the rate allows',
  completed: 'paid',
  expired: 'expired unclaimed',
  failed: 'not paid',
  unknown: 'outcome unknown: see the console',
};

const means = (status: string) => MEANS[status] ?? status;

/** An intent that ended, as an operator reads it: a rejected payout says so. */
function ended(intent: Intent): string {
  const rejectedBy = (intent.meta as { rejectedBy?: unknown }).rejectedBy;
  const outcome =
    typeof rejectedBy === 'string' ? `REJECTED by ${rejectedBy}, not paid` : means(intent.status);
  return `[arena] ${intent.kind} ${intent.id}: ${intent.amount} ${intent.unit} (player ${intent.playerId}) ${outcome}`;
}

function payoutsOf(match: MatchView): string {
  return match.payouts
    .map((p) => `${p.amountMsat} msat for player ${p.playerId} (${means(p.status)})`)
    .join(', ');
}

export function logMoney(lightning: Lightning, log: (line: string) => void): void {
  lightning.on('settled', (intent) => log(ended(intent)));
  lightning.on('held', (intent) =>
    log(
      `[arena] ${intent.kind} ${intent.id}: ${intent.amount} msat (player ${intent.playerId}) ${means('held')}`,
    ),
  );
  lightning.on('match.funded', (match) =>
    log(`[arena] match ${match.id} funded: pot ${match.potMsat} msat`),
  );
  lightning.on('match.settled', (match) =>
    log(
      `[arena] match ${match.id} settled: pot ${match.potMsat} msat, rake ${match.rakeMsat} msat, ${payoutsOf(match)}`,
    ),
  );
  lightning.on('match.aborted', (match) =>
    log(`[arena] match ${match.id} aborted (${match.reason}): ${match.refunds.length} refund(s)`),
  );
  lightning.on('match.refund', (refund, why) =>
    log(
      `[arena] REFUND ${refund.amount} msat to player ${refund.playerId} (${why}): claim code ${refund.status === 'pending' ? 'issued' : refund.status}, refund ${refund.id}`,
    ),
  );
  lightning.on('unknown', (intent, err) =>
    log(
      `[arena] UNKNOWN ${intent.kind} ${intent.id} of player ${intent.playerId}: ${err.message} (never re-sent; see lightning.operator.unknowns())`,
    ),
  );
}
