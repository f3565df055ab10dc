/** Where a payout's money sits: one journal rule for a claim code and an address payment. */
import type { Intent } from '../../ledger/intent.js';
import {
  accounts,
  attemptOf,
  fromPot,
  mayReissue,
  type Position,
  reissuedByOperator,
  rejectedByOperator,
} from '../../ledger/journal.js';

export function payoutPosition(
  intent: Intent,
  pending: { account: string; why: string },
  completed: string,
): Position {
  const { status, playerId, amount, unit, groupId } = intent;
  const source = fromPot(intent) && groupId !== null ? accounts.escrow(groupId) : accounts.rewards;
  const at = (account: string, why: string): Position => ({ account, source, amount, unit, why });
  if (status === 'creating' || status === 'unknown') return at(accounts.inflight, status);
  // Held and queued are journaled like a create in flight, so their move to `creating` writes
  // no entry and a queue never spends the pot twice.
  if (status === 'held') return at(accounts.inflight, 'held for approval');
  if (status === 'queued') return at(accounts.inflight, 'queued');
  if (status === 'pending') return at(pending.account, pending.why);
  if (status === 'completed') return at(accounts.wallet, completed);
  if (source === accounts.rewards || mayReissue(intent)) return at(source, status);
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
