/**
 * Intents: the record of every money movement the plugin starts, written before the service is
 * called; one list of statuses and the one table of moves between them (TRANSITIONS). `held`
 * and `queued` are only ever first statuses (CreateGuards.hold, .queue); `completed`, `expired`
 * and `failed` are terminal. A settled create (CreateGuards.settled) is recorded `completed`.
 */

/** Every kind's name: what each means is its module in server/kinds/. */
export const INTENT_KINDS = [
  'reward',
  'entryFee',
  'spend',
  'payment',
  'match',
  'credit',
  'withdrawal',
] as const;
export type IntentKind = (typeof INTENT_KINDS)[number];

/** Money the game pays out to a player: what payout budgets count. */
export const PAYOUT_KINDS: readonly IntentKind[] = ['reward', 'payment', 'withdrawal'];

/** What a budget window sums, and the creates it applies to (BudgetWindow.over). */
export const WINDOW_KINDS: Readonly<Record<WindowOver, readonly IntentKind[]>> = {
  payouts: PAYOUT_KINDS,
  /** Money added to players' tabs, and drawn from them. */
  credits: ['credit'],
  withdrawals: ['withdrawal'],
};
export type WindowOver = 'payouts' | 'credits' | 'withdrawals';

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
export const OPEN_STATUSES = INTENT_STATUSES.filter((s) => !TERMINAL_STATUSES.includes(s));

/** The allowed moves; `unknown` moves only on a certain answer. */
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

/**
 * The note of a settled create's one move (CreateGuards.settled): its history is `creating`,
 * then `completed` in the same atomic step, the one `creating -> completed` a ledger holds.
 */
export const SETTLED_NOTE = 'settled in the ledger at its record';

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

/** The fields every intent has, whatever its kind. */
interface IntentFields {
  /** UUID v7: sortable by creation time. */
  id: string;
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
  history: IntentHistoryEntry[];
}

/**
 * Each kind's meta, kept as JSON: what a kind keeps there is its own, declared beside it
 * (server/kinds/meta.ts merges its types in here); any other kind's is any JSON object.
 */
export interface IntentMetas {
  [kind: string]: Record<string, unknown>;
}

/** An intent of one kind, its meta typed. */
export type IntentOf<K extends IntentKind> = IntentFields & {
  kind: K;
  /** Data for the layer that owns the intent (e.g. a static charge's slot baseline). */
  meta: IntentMetas[K];
};

/** Every intent: one member per kind, told apart by `kind`. */
export type Intent = { [K in IntentKind]: IntentOf<K> }[IntentKind];

/** What a caller supplies to record a new intent of one kind; the store fills in the rest. */
export interface NewIntentOf<K extends IntentKind> {
  id?: string;
  kind: K;
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
  /** False for a record of ours that moves no money (its kind's `movesMoney`): not counted open. */
  movesMoney?: boolean;
  meta?: IntentMetas[K];
}

/** What a caller supplies to record a new intent; the store fills in the rest. */
export type NewIntent = { [K in IntentKind]: NewIntentOf<K> }[IntentKind];

/** Fields that may change along with, or without, a status move; each store's column is snake_case. */
const PATCH_FIELDS = [
  ...['remoteId', 'code', 'uri', 'expiresAt', 'nextCheckAt', 'checks', 'leaseOwner'],
  ...['leaseUntil', 'error', 'meta'],
] as const satisfies readonly (keyof Intent)[];
export type IntentPatch = Partial<Pick<Intent, (typeof PATCH_FIELDS)[number]>>;

/** Each patch field's column: `nextCheckAt` is `next_check_at`. */
export const PATCH_COLUMN = Object.fromEntries(
  PATCH_FIELDS.map((f) => [f, f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]),
) as Record<keyof IntentPatch, string>;

/** The fields that schedule an intent: cleared by a terminal move, never set on an ended one. */
export const SCHEDULE_FIELDS: ReadonlySet<keyof IntentPatch> = new Set([
  'nextCheckAt',
  'leaseOwner',
  'leaseUntil',
]);

/** The fields a patch writes, in a fixed order: a terminal move clears the schedule instead. */
export function patchFields(patch: IntentPatch, terminal: boolean): (keyof IntentPatch)[] {
  return PATCH_FIELDS.filter(
    (f) => patch[f] !== undefined && !(terminal && SCHEDULE_FIELDS.has(f)),
  );
}
