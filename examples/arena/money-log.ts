/**
 * The arena's money in the server log, one line per thing an operator may be asked about:
 * every intent that ended, every match funded, settled or aborted, every refund issued (with
 * why: the round was called off, a fee was paid after its deadline or into a round already
 * decided) and every create whose outcome is unknown. Refunds are made by the matches
 * themselves, exactly once; these lines only say that they were.
 *
 * Costs: six listeners on the server's events, one line each time one fires.
 */
import type { Lightning } from 'colyseus-lightning';

export function logMoney(lightning: Lightning, log: (line: string) => void): void {
  lightning.on('settled', (intent) =>
    log(
      `[arena] ${intent.kind} ${intent.status}: ${intent.amount} ${intent.unit} (player ${intent.playerId})`,
    ),
  );
  lightning.on('match.funded', (match) =>
    log(`[arena] match ${match.id} funded: pot ${match.potMsat} msat`),
  );
  lightning.on('match.settled', (match) =>
    log(
      `[arena] match ${match.id} settled: pot ${match.potMsat} msat, rake ${match.rakeMsat} msat, ${match.payouts
        .map((p) => `${p.amountMsat} msat to player ${p.playerId}`)
        .join(', ')}`,
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
