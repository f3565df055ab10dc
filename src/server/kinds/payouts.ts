/** The send of a payout recorded unsent (held or queued), so that neither caller names a kind. */
import type { Intent, IntentPatch } from '../../ledger/intent.js';
import type { Engine } from '../engine.js';
import type { Ticket } from '../outbound.js';
import { sendApprovedPayment } from './payment.js';
import { heldClaimSeconds, sendApprovedReward } from './reward.js';

/**
 * Sends a recorded payout now in `creating` (`ticket`: the token taken for it, if any). A send
 * that fails is logged as `what` payout's; what it left (failed, unknown) is in the ledger, read
 * back, and told by its move.
 */
export async function sendRecordedPayout(
  engine: Engine,
  intent: Intent,
  ticket: Ticket | null,
  what: string,
): Promise<Intent> {
  try {
    return await (intent.kind === 'payment'
      ? sendApprovedPayment(engine, intent, ticket)
      : sendApprovedReward(engine, intent, ticket));
  } catch (err) {
    const { kind, id } = intent;
    engine.logger.warn(`${what} ${kind} ${id} could not be sent: ${(err as Error).message}`);
    return (await engine.ledger.get(id)) ?? intent;
  }
}

/** What a recorded payout's move to `creating` writes: its grace, a claim code's time anew. */
export function claimTimeFromNow(engine: Engine, intent: Intent): IntentPatch {
  const now = engine.now();
  return {
    nextCheckAt: now + engine.settings.reconciler.creatingGraceMs,
    // A claim code's (a reward's, a withdrawal's): every payout but an address payment.
    ...(intent.kind !== 'payment' ? { expiresAt: now + heldClaimSeconds(intent) * 1000 } : {}),
  };
}
