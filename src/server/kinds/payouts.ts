/**
 * The second half of a payout recorded without being sent (held for an operator, or queued): the
 * service called for it, by its kind, once it is `creating`. The operator's approval and the
 * payout queue both send through here, so neither names a kind's call.
 */
import type { Intent } from '../../ledger/intent.js';
import type { Engine } from '../engine.js';
import type { Ticket } from '../outbound.js';
import { sendApprovedPayment } from './payment.js';
import { heldClaimSeconds, sendApprovedReward } from './reward.js';

/** Sends a recorded payout now in `creating`; `ticket`: the token taken for it, if any. */
export function sendRecordedPayout(
  engine: Engine,
  intent: Intent,
  ticket: Ticket | null,
): Promise<Intent> {
  return intent.kind === 'payment'
    ? sendApprovedPayment(engine, intent, ticket)
    : sendApprovedReward(engine, intent, ticket);
}

/**
 * What a recorded payout's move to `creating` writes besides its status: a check when the grace
 * period ends, and for a reward its claim time counted from now (as long as it was given).
 */
export function claimTimeFromNow(
  engine: Engine,
  intent: Intent,
): Pick<Intent, 'nextCheckAt'> & {
  expiresAt?: number;
} {
  const now = engine.now();
  return {
    nextCheckAt: now + engine.settings.reconciler.creatingGraceMs,
    ...(intent.kind === 'reward' ? { expiresAt: now + heldClaimSeconds(intent) * 1000 } : {}),
  };
}
