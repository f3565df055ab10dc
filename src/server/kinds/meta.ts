/**
 * What each kind keeps in its intents' `meta` (the ledger stores it as JSON and reads none of it),
 * merged into the ledger's IntentMetas so that `IntentOf<K>` reads its kind's meta typed.
 */

/**
 * What any intent's `meta` may carry, kept as JSON: every field is optional to the type, so a
 * reader of a field its kind always writes checks it is there (never guessed).
 */
export interface CommonMeta {
  [field: string]: unknown;
  /** When its code was first given out (engine.ts): decides whether it may be issued again. */
  shownAt?: number;
  /** The operator who approved a held payout, rejected it, or issued it again. */
  approvedBy?: string;
  rejectedBy?: string;
  reissuedBy?: string;
  /** A match's fee, payout or refund: its part in its group (its `groupId`). */
  matchRole?: 'fee' | 'payout' | 'refund';
  /** A payout's or refund's fixed key (its first attempt's id), its attempt and why it is paid. */
  payKey?: string;
  attempt?: number;
  why?: string;
  /** The fee a refund gives back. */
  feeId?: string;
}

export type RewardMeta = CommonMeta;

export interface PaymentMeta extends CommonMeta {
  /** The Lightning address it pays, and the comment sent with it. */
  lnAddress?: string;
  comment?: string;
}

export interface EntryFeeMeta extends CommonMeta {
  /** The charge's paid slots when it was made: more than these is a payment. */
  slotsBaseline?: number;
  /** Paid after it expired (the journal's `late` step), told once. */
  latePaymentReported?: boolean;
  /** The lost charge this one replaces (a match's seat). */
  replaces?: string;
  /** Where the player's payout or refund from its match goes, when given at entry. */
  lnAddress?: string;
}

export interface SpendMeta extends CommonMeta {
  /** The widget user whose points are depleted. */
  userId?: string;
}

/** A match's terms, as its record keeps them. */
export interface MatchTerms {
  entryFeeMsat: string;
  /** The rake in basis points (1000 = 10%). */
  rakeBps: number;
  feeExpiresIn: number;
  timeoutMs: number;
  claimExpiresIn: number;
  description: string;
  /** The players the match was opened for; absent when it was not opened for a roster. */
  roster?: string[];
  /** How many players it seats: the roster's size, or `seats`; absent: no roster, no funded. */
  seats?: number;
  /** Its seats are held by the ledger (CreateGuards.seat); absent: a read of its group. */
  seatGuard?: true;
}

/** One winner's part of a settled pot. */
export interface Payout {
  playerId: string;
  amountMsat: string;
}

/** The one decision a match takes, by compare-and-set: settled or aborted, never both. */
export interface MatchDecision {
  kind: 'settle' | 'abort';
  reason: string | null;
  /** Shares of the pot by player id (a settle's). */
  shares: Record<string, number> | null;
  /** The fees the ledger saw paid at the decision: the pot. Any fee paid later is refunded. */
  paidFeeIds: string[];
  potMsat: string;
  rakeMsat: string;
  payouts: Payout[];
  at: number;
}

export interface MatchMeta extends CommonMeta {
  /** Written when it is opened: a match record always has them. */
  terms?: MatchTerms;
  decision?: MatchDecision;
  /** The roster has paid (its event is told once, by a once-marker). */
  funded?: boolean;
  /** Every payout and refund is made: settled or aborted, its event told or about to be. */
  ended?: boolean;
}

export interface CreditMeta extends CommonMeta {
  /** The game's idempotency key its id was derived from, when it gave one. */
  key?: string;
}

export type WithdrawalMeta = CommonMeta;

declare module '../../ledger/intent.js' {
  /** Each kind's meta, by kind. */
  interface IntentMetas {
    credit: CreditMeta;
    withdrawal: WithdrawalMeta;
    reward: RewardMeta;
    entryFee: EntryFeeMeta;
    spend: SpendMeta;
    payment: PaymentMeta;
    match: MatchMeta;
  }
}
