/**
 * What a game sees of a match: one plain object built from the match record and the intents
 * of its group (fees, payouts, refunds). Amounts are decimal strings in msats.
 */
import type { Intent, IntentStatus } from '../../ledger/intent.js';
import { type EntryFeeIntent, isEntryFee } from '../kinds/guards.js';
import { type MatchIntent, termsOf } from '../kinds/match.js';
import type { MatchDecision, MatchTerms } from '../kinds/meta.js';
import { seatsOf } from './terms.js';

export type MatchStatus = 'open' | 'settling' | 'aborting' | 'settled' | 'aborted';

export interface MatchPlayer {
  playerId: string;
  /** The player's latest fee: `pending` to pay, `completed` paid. */
  feeId: string;
  feeStatus: IntentStatus;
}

export interface MatchMoney {
  intentId: string;
  playerId: string;
  amountMsat: string;
  status: IntentStatus;
  /** `reward` for a claim code, `payment` for a Lightning address. */
  kind: Intent['kind'];
}

export interface MatchView {
  id: string;
  roomId: string | null;
  status: MatchStatus;
  entryFeeMsat: string;
  /** 0 to 0.5. */
  rake: number;
  /** Paid fees so far; once decided, the pot the decision split. */
  potMsat: string;
  /** The house's part, once settled (rake plus rounding); null before. */
  rakeMsat: string | null;
  /** The roster (`players` or `seats`) has paid; false without a roster. */
  funded: boolean;
  /** How many players entered: their latest fee is open or paid (one that expired or failed left). */
  entered: number;
  /** How many of them paid. */
  paid: number;
  /** How many players the match waits for (its roster's size, or `seats`); 0 without a roster. */
  seats: number;
  /** The players it was opened for (`players`), or null. */
  roster: string[] | null;
  /** Each entered player's latest fee. */
  players: MatchPlayer[];
  payouts: MatchMoney[];
  refunds: (MatchMoney & { why: string })[];
  /** Once decided, how many payouts and refunds are made, of `total`; 0 of 0 while open. */
  made: number;
  total: number;
  /** Why it was aborted. */
  reason: string | null;
  createdAt: number;
  updatedAt: number;
}

export function matchStatus(match: MatchIntent): MatchStatus {
  const decision = match.meta.decision;
  if (match.status === 'creating') return 'open';
  if (match.status === 'completed') return 'settled';
  if (match.status === 'failed') return 'aborted';
  const ended = match.meta.ended === true;
  if (decision?.kind === 'settle') return ended ? 'settled' : 'settling';
  return ended ? 'aborted' : 'aborting';
}

/** The fees a new charge replaced (`meta.replaces`): never a seat nor in a pot. */
export function replacedFees(group: readonly Intent[]): Set<string> {
  return new Set(group.filter(isEntryFee).flatMap((fee) => fee.meta.replaces ?? []));
}

/** The fees paid into a match that count for a seat and the pot (a replaced fee does not). */
export function paidFees(group: readonly Intent[]): EntryFeeIntent[] {
  const replaced = replacedFees(group);
  return group.filter(isEntryFee).filter((i) => i.status === 'completed' && !replaced.has(i.id));
}

/**
 * Whether the roster has paid. A match without one is never funded: "every fee so far" would
 * start a round on the first payer while an opponent's fee is still being made.
 */
export function rosterPaid(terms: MatchTerms, group: readonly Intent[]): boolean {
  const seats = seatsOf(terms);
  if (seats === 0) return false;
  const payers = new Set(paidFees(group).map((i) => i.playerId));
  if (terms.roster) return terms.roster.every((player) => payers.has(player));
  return payers.size >= seats;
}

export function viewOf(match: MatchIntent, group: readonly Intent[]): MatchView {
  const { meta } = match;
  const terms = termsOf(match);
  const decision = meta.decision;
  // Each player's latest fee; those open or paid hold a seat.
  const fees = new Map(group.filter(isEntryFee).map((fee) => [fee.playerId, fee]));
  const sitting = [...fees.values()].filter((f) => f.status !== 'expired' && f.status !== 'failed');
  const pot =
    decision?.potMsat ??
    paidFees(group)
      .reduce((sum, fee) => sum + BigInt(fee.amount), 0n)
      .toString();
  const money = (i: Intent): MatchMoney => ({
    intentId: i.id,
    playerId: i.playerId,
    amountMsat: i.amount,
    status: i.status,
    kind: i.kind,
  });
  const role = (i: Intent) => i.meta.matchRole;
  return {
    id: match.id,
    roomId: match.roomId,
    status: matchStatus(match),
    entryFeeMsat: terms.entryFeeMsat,
    rake: terms.rakeBps / 10_000,
    potMsat: pot,
    rakeMsat: decision?.kind === 'settle' ? decision.rakeMsat : null,
    funded: meta.funded === true,
    entered: sitting.length,
    paid: sitting.filter((fee) => fee.status === 'completed').length,
    seats: seatsOf(terms),
    roster: terms.roster ? [...terms.roster] : null,
    players: [...fees.values()].map((fee) => ({
      playerId: fee.playerId,
      feeId: fee.id,
      feeStatus: fee.status,
    })),
    payouts: group.filter((i) => role(i) === 'payout').map(money),
    refunds: group
      .filter((i) => role(i) === 'refund')
      .map((i) => ({ ...money(i), why: String(i.meta.why ?? '') })),
    ...progressOf(decision, group),
    reason: decision?.reason ?? null,
    createdAt: match.createdAt,
    updatedAt: match.updatedAt,
  };
}

/** Pay keys whose latest attempt is pending or completed, of those the decision owes. */
function progressOf(
  decision: MatchDecision | undefined,
  group: readonly Intent[],
): { made: number; total: number } {
  if (decision === undefined) return { made: 0, total: 0 };
  const latest = new Map<string, Intent>();
  for (const intent of group) {
    if (typeof intent.meta.payKey === 'string') latest.set(intent.meta.payKey, intent);
  }
  const attempts = [...latest.values()];
  const refunds = new Set(
    attempts.filter((i) => i.meta.matchRole === 'refund').map((i) => i.meta.payKey),
  );
  if (decision.kind === 'abort') {
    for (const feeId of decision.paidFeeIds) refunds.add(`${feeId}:refund`);
  }
  const owed = decision.kind === 'settle' ? decision.payouts.length : 0;
  const made = attempts.filter((i) => i.status === 'pending' || i.status === 'completed').length;
  return { made, total: owed + refunds.size };
}
