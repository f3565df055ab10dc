/**
 * Intents: the record of every money movement the plugin starts, written before the
 * service is called. One shape for every store, one list of statuses and
 * the one table of moves between them.
 *
 *   held     -> creating | failed                          (an operator's approval or rejection)
 *   queued   -> creating | failed                          (its turn to be sent, or never sent)
 *   creating -> pending | unknown | failed
 *   pending  -> completed | expired | failed
 *   unknown  -> pending | completed | expired | failed   (only on a certain answer)
 *
 * `completed`, `expired` and `failed` are terminal: nothing moves out of them. `held` is only
 * ever an intent's first status: a payout the approvals held when it was recorded (nothing sent
 * until an operator approves it, see CreateGuards.hold); so is `queued`: a payout recorded to be
 * sent in its turn by whichever process drains the queue (CreateGuards.queue), due at once.
 */

/**
 * `match` is the record of a match's pot: its fees, payouts and refunds are ordinary intents
 * whose `groupId` is the match's id (see server/match/).
 */
export const INTENT_KINDS = ['reward', 'entryFee', 'spend', 'payment', 'match'] as const;
export type IntentKind = (typeof INTENT_KINDS)[number];

/**
 * Money the game pays out to a player: a reward (a claim code) or a payment (to their Lightning
 * address). These, and only these, count against payout budgets.
 */
export const PAYOUT_KINDS: readonly IntentKind[] = ['reward', 'payment'];

export function isPayout(kind: IntentKind): boolean {
  return PAYOUT_KINDS.includes(kind);
}

export const INTENT_STATUSES = [
  'held',
  'queued',
  'creating',
  'pending',
  'unknown',
  'completed',
  'expired',
  'failed',
] as const;
export type IntentStatus = (typeof INTENT_STATUSES)[number];

export const TERMINAL_STATUSES: readonly IntentStatus[] = ['completed', 'expired', 'failed'];
export const OPEN_STATUSES: readonly IntentStatus[] = [
  'held',
  'queued',
  'creating',
  'pending',
  'unknown',
];

/** The allowed moves; a transition not listed here is refused by every store. */
export const TRANSITIONS: Readonly<Record<IntentStatus, readonly IntentStatus[]>> = {
  held: ['creating', 'failed'],
  queued: ['creating', 'failed'],
  creating: ['pending', 'unknown', 'failed'],
  pending: ['completed', 'expired', 'failed'],
  unknown: ['pending', 'completed', 'expired', 'failed'],
  completed: [],
  expired: [],
  failed: [],
};

export function isTerminal(status: IntentStatus): status is 'completed' | 'expired' | 'failed' {
  return TERMINAL_STATUSES.includes(status);
}

export function canMove(from: IntentStatus, to: IntentStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export interface IntentHistoryEntry {
  /** epoch milliseconds */
  at: number;
  from: IntentStatus | null;
  to: IntentStatus;
  note?: string;
}

export interface Intent {
  /** UUID v7: sortable by creation time. */
  id: string;
  kind: IntentKind;
  status: IntentStatus;
  /** The room that started it; null for server-level movements. */
  roomId: string | null;
  playerId: string;
  /** Decimal string: millisatoshis for rewards and entry fees, minor units for points. */
  amount: string;
  /** 'msats', or a point currency code such as 'USDZ'. */
  unit: string;
  description: string;
  /** The service's id for the resource (withdrawal request, static charge, transfer). */
  remoteId: string | null;
  /** The LNURL code to render as a QR code; a bearer secret for rewards. */
  code: string | null;
  /** The same code with the `lightning:` scheme. */
  uri: string | null;
  /** The unguessable token in the callback URL (base64url, >= 128 bits). */
  callbackToken: string | null;
  /** Sent with every attempt of an idempotent call (deplete). */
  idempotencyKey: string | null;
  /** While this intent is open, no other open intent holds the same key (one open fee per seat). */
  openKey: string | null;
  /** The match this intent belongs to (a fee, a payout, a refund); a match's own id for itself. */
  groupId: string | null;
  /** epoch ms after which the resource can no longer settle as paid, if known. */
  expiresAt: number | null;
  createdAt: number;
  updatedAt: number;
  /** epoch ms when the reconciler should next re-read the resource; null: never. */
  nextCheckAt: number | null;
  /** How many times the reconciler has re-read it. */
  checks: number;
  /** Reconciler lease: who is checking it now, and until when (epoch ms). */
  leaseOwner: string | null;
  leaseUntil: number | null;
  /** Last error message (never a secret). */
  error: string | null;
  /** Free data for the layer that owns the intent (e.g. a static charge's slot baseline). */
  meta: Record<string, unknown>;
  history: IntentHistoryEntry[];
}

/** What a caller supplies to record a new intent; the store fills in the rest. */
export interface NewIntent {
  id?: string;
  kind: IntentKind;
  roomId: string | null;
  playerId: string;
  amount: string;
  unit: string;
  description: string;
  callbackToken?: string | null;
  idempotencyKey?: string | null;
  openKey?: string | null;
  groupId?: string | null;
  expiresAt?: number | null;
  nextCheckAt?: number | null;
  meta?: Record<string, unknown>;
}

/** Fields that may change along with, or without, a status move. */
export type IntentPatch = Partial<
  Pick<
    Intent,
    | 'remoteId'
    | 'code'
    | 'uri'
    | 'expiresAt'
    | 'nextCheckAt'
    | 'checks'
    | 'leaseOwner'
    | 'leaseUntil'
    | 'error'
    | 'meta'
  >
>;
