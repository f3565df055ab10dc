/** Where a payout's money sits: one journal rule for a claim code and an address payment. */
import type { Intent } from '../../ledger/intent.js';
import { accounts, fromPot, type Position } from '../../ledger/journal.js';

/** How many times a match's payout or refund is issued before it is left to an operator. */
export const MAX_PAYOUT_ATTEMPTS = 3;

/** Was the intent's code ever given out (to its room, its caller)? A fact recorded when it was. */
export function wasShown(intent: Pick<Intent, 'meta' | 'history'>): boolean {
  return typeof intent.meta.shownAt === 'number' || intent.history.some((h) => h.to === 'pending');
}

/** Which attempt at a match's payout or refund this intent is (1 for anything else). */
export function attemptOf(intent: Pick<Intent, 'meta' | 'id'>): number {
  const recorded = intent.meta.attempt;
  if (typeof recorded === 'number' && Number.isInteger(recorded) && recorded > 0) return recorded;
  const suffix = /:(\d+)$/.exec(intent.id);
  return typeof intent.meta.payKey === 'string' && suffix ? Number(suffix[1]) : 1;
}

/**
 * May a match's payout or refund that ended unpaid be issued again? Only when nobody can have
 * its code: refused by the service, or expired without ever being shown. A code that was shown
 * may still be in a player's hands until its deadline, so it is never issued twice.
 */
export function mayReissue(intent: Intent): boolean {
  if (!fromPot(intent) || attemptOf(intent) >= MAX_PAYOUT_ATTEMPTS) return false;
  if (rejectedByOperator(intent)) return false;
  return intent.status === 'failed' || (intent.status === 'expired' && !wasShown(intent));
}

/** Whether an operator rejected this held payout (`meta.rejectedBy`): it is never issued again. */
export function rejectedByOperator(intent: Pick<Intent, 'meta'>): boolean {
  return typeof intent.meta.rejectedBy === 'string';
}

/** Whether an operator issued this ended payout or refund again (`meta.reissuedBy`, once). */
export function reissuedByOperator(intent: Pick<Intent, 'meta'>): boolean {
  return typeof intent.meta.reissuedBy === 'string';
}

/**
 * Where a payout's money sits: paid from `own` (the game's rewards; a tab's withdrawal, its
 * tab), or from its match's pot; what ends unpaid and is not the pot's goes back to `own`.
 */
export function payoutPosition(
  intent: Intent,
  pending: { account: string; why: string },
  completed: string,
  own: string = accounts.rewards,
): Position {
  const { status, playerId, amount, unit, groupId } = intent;
  const pot = fromPot(intent) && groupId !== null;
  const source = pot ? accounts.escrow(groupId) : own;
  const at = (account: string, why: string): Position => ({ account, source, amount, unit, why });
  if (status === 'creating' || status === 'unknown') return at(accounts.inflight, status);
  // Held and queued are journaled like a create in flight, so their move to `creating` writes
  // no entry and a queue never spends the pot twice.
  if (status === 'held') return at(accounts.inflight, 'held for approval');
  if (status === 'queued') return at(accounts.inflight, 'queued');
  if (status === 'pending') return at(pending.account, pending.why);
  if (status === 'completed') return at(accounts.wallet, completed);
  if (!pot || mayReissue(intent)) return at(source, status);
  // An operator rejected it while held: a match's payout is the house's (never paid twice).
  if (rejectedByOperator(intent)) return at(accounts.rejected, 'rejected by an operator');
  // Reissued by an operator: back to the pot, and the new attempt takes it out.
  if (status === 'expired' && reissuedByOperator(intent)) {
    return at(source, 'reissued by an operator');
  }
  return status === 'expired'
    ? at(accounts.unclaimed, 'expired unclaimed')
    : at(accounts.owed(playerId), `failed ${attemptOf(intent)} times: to be paid by hand`);
}
