/**
 * What a game sees of a match: one plain object built from the match record and the intents
 * of its group (fees, payouts, refunds). Amounts are decimal strings in msats.
 */
import type { Intent, IntentStatus } from '../../ledger/intent.js';
import { matchMeta } from './terms.js';

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
  /** Every entered player has paid (and at least one entered). */
  funded: boolean;
  players: MatchPlayer[];
  payouts: MatchMoney[];
  refunds: (MatchMoney & { why: string })[];
  /** Why it was aborted. */
  reason: string | null;
  createdAt: number;
  updatedAt: number;
}

export function matchStatus(match: Intent): MatchStatus {
  const decision = matchMeta(match.meta).decision;
  if (match.status === 'creating') return 'open';
  if (match.status === 'completed') return 'settled';
  if (match.status === 'failed') return 'aborted';
  return decision?.kind === 'settle' ? 'settling' : 'aborting';
}

/** The fees of a group, the latest one per player. */
export function latestFees(group: readonly Intent[]): Map<string, Intent> {
  const fees = new Map<string, Intent>();
  for (const intent of group) if (intent.kind === 'entryFee') fees.set(intent.playerId, intent);
  return fees;
}

export function viewOf(match: Intent, group: readonly Intent[]): MatchView {
  const meta = matchMeta(match.meta);
  const decision = meta.decision;
  const fees = latestFees(group);
  const paid = group.filter((i) => i.kind === 'entryFee' && i.status === 'completed');
  const pot = decision
    ? decision.potMsat
    : paid.reduce((sum, fee) => sum + BigInt(fee.amount), 0n).toString();
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
    entryFeeMsat: meta.terms.entryFeeMsat,
    rake: meta.terms.rakeBps / 10_000,
    potMsat: pot,
    rakeMsat: decision?.kind === 'settle' ? decision.rakeMsat : null,
    funded: meta.funded === true,
    players: [...fees.values()].map((fee) => ({
      playerId: fee.playerId,
      feeId: fee.id,
      feeStatus: fee.status,
    })),
    payouts: group.filter((i) => role(i) === 'payout').map(money),
    refunds: group
      .filter((i) => role(i) === 'refund')
      .map((i) => ({ ...money(i), why: String(i.meta.why ?? '') })),
    reason: decision?.reason ?? null,
    createdAt: match.createdAt,
    updatedAt: match.updatedAt,
  };
}
