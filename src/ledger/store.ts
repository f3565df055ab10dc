/** The interface every store implements, one part per job; a status change is a compare-and-set. */
import type { Intent, IntentPatch, IntentStatus, NewIntent, WindowOver } from './intent.js';
import type {
  AccountBalance,
  AccountPage,
  AccountsQuery,
  JournalPage,
  JournalQuery,
  Posting,
} from './journal.js';
import type {
  NewOperatorAction,
  OperatorAction,
  OperatorLogPage,
  OperatorLogQuery,
} from './operator-log.js';

export interface TransitionOptions {
  /** Fields written in the same atomic step as the status. */
  patch?: IntentPatch;
  /** A short note kept in the intent's history (never a secret). */
  note?: string;
  /** epoch ms; defaults to the store's clock. */
  now?: number;
  /** Journal postings written in the same atomic step, only if the move is made (see create). */
  postings?: readonly Posting[];
  /** The intent as the caller read it: a store may take its history from it (same answer). */
  read?: Intent;
  /** Another intent made due with the move: while still `status`, nextCheckAt at most `at`. */
  dueAlso?: DueAlso;
}

interface DueAlso {
  id: string;
  status: IntentStatus;
  /** epoch ms */
  at: number;
}

/**
 * A cap over a rolling window, for one scope of a create of the kinds it counts: payouts
 * (PAYOUT_KINDS, the default), or a player's tab credits or withdrawals (`over`, scope `player`
 * only), refused with BudgetExceededError, EarningCapError or WithdrawalCapError.
 */
export interface BudgetWindow {
  scope: 'player' | 'room' | 'game';
  /** What the window's creates (not expired or failed) may add up to, in msats. */
  limitMsat: number;
  windowMs: number;
  /** The kinds it sums and applies to (WINDOW_KINDS). Default `payouts`. */
  over?: WindowOver;
}

/** Checks `create` makes in its atomic step, so that they hold across processes. */
export interface CreateGuards {
  /** LimitExceededError when the player already has this many open intents. */
  maxOpenPerPlayer?: number;
  /** LimitExceededError when the game has this many open intents (`movesMoney: false` aside). */
  maxOpenPerGame?: number;
  /** Refused past a window's cap (reserved until expired or failed); each applies to its kinds. */
  budgets?: readonly BudgetWindow[];
  /** Payouts only: above `aboveMsat` or the player's window, recorded `held` until approved. */
  hold?: { aboveMsat?: number; perPlayer?: { limitMsat: number; windowMs: number } };
  /** Payouts only: recorded `queued`, due; the hold wins. */
  queue?: boolean;
  /**
   * One seat per player in the group, at most `seats` (LimitExceededError), given back when its
   * holder ends expired or failed; DuplicateIntentError for a second, unless it `replaces` it.
   */
  seat?: SeatGuard;
  /** The postings leave `account` (a player's they debit) at 0 or more, else InsufficientFundsError. */
  funds?: { account: string };
  /** Recorded `completed` at once with its postings (money that moves in the ledger alone). */
  settled?: boolean;
}

export interface SeatGuard {
  seats?: number;
  replaces?: string;
}

/** Intents and their journal. */
export interface IntentStore {
  /**
   * Records a new intent, `creating` (or as its guards say), its id a UUID v7 unless given;
   * DuplicateIntentError for a taken id, token or open `openKey`. `postings` (on every write) are
   * journaled in its step as `<intent id>:<tag>`: one already journaled makes the write a no-op
   * answering null, so a step is journaled once whoever races.
   */
  create(
    intent: NewIntent,
    now?: number,
    guards?: CreateGuards,
    postings?: readonly Posting[],
  ): Promise<Intent>;
  get(id: string): Promise<Intent | null>;
  byCallbackToken(token: string): Promise<Intent | null>;
  byRemoteId(kind: Intent['kind'], remoteId: string): Promise<Intent | null>;
  /** Open intents of a room, oldest first. */
  openByRoom(roomId: string): Promise<Intent[]>;
  /** Open intents of a player, oldest first. */
  openByPlayer(playerId: string): Promise<Intent[]>;
  /** Every intent of a group (a match and its fees, payouts, refunds), oldest first. */
  byGroup(groupId: string): Promise<Intent[]>;
  /** The intent that holds the player's seat in the group, or null: one keyed read. */
  seatHolder(groupId: string, playerId: string): Promise<Intent | null>;
  /** Moves `id` from one of `from` to `to`, or null; an ending move clears the schedule. */
  transition(
    id: string,
    from: IntentStatus | readonly IntentStatus[],
    to: IntentStatus,
    options?: TransitionOptions,
  ): Promise<Intent | null>;
  /** Writes non-status fields while the status is `status`, or null. */
  update(
    id: string,
    status: IntentStatus,
    patch: IntentPatch,
    now?: number,
    postings?: readonly Posting[],
  ): Promise<Intent | null>;
  /** Journal entries, oldest first, filtered; paging with `after` never skips or repeats one. */
  journal(query?: JournalQuery): Promise<JournalPage>;
  /** Balances of the named accounts, or of every class; kept as postings are written. */
  balances(accounts?: readonly string[]): Promise<AccountBalance[]>;
  /** One class's accounts holding msats (not `house`), richest first, a page at a time. */
  accounts(query: AccountsQuery): Promise<AccountPage>;
  /** Intents in status `unknown`, oldest first, at most `limit` (default 100). */
  unknowns(limit?: number): Promise<Intent[]>;
  /** Payouts in status `held`, oldest first, at most `limit` (default 100). */
  held(limit?: number): Promise<Intent[]>;
  /** The game's open intents that move money: what maxOpenPerGame guards. */
  openCount(): Promise<number>;
}

/** Leases and the queue: the reconciler's claims. */
export interface LeaseStore {
  /** Leases up to `limit` due intents (and `queued` queued payouts beside them) to `owner`. */
  claimDue(
    now: number,
    limit: number,
    owner: string,
    leaseMs: number,
    queued?: number,
  ): Promise<Intent[]>;
  /** Releases a lease held by `owner` (no-op otherwise). */
  release(id: string, owner: string): Promise<void>;
  /** The start-up sweep: every open intent that moves money due later than `at` is due at `at`. */
  advanceChecks(at: number): Promise<number>;
}

/** Once-markers: event ids remembered for good. */
export interface OnceStore {
  /** True the first time an id is seen, from any process, however late; false for a repeat. */
  recordEvent(eventId: string, now?: number): Promise<boolean>;
}

/** The operator's audit log, with the blocks and the pause it sets. */
export interface OperatorLogStore {
  /** Appends a line (operator-log.ts): no call changes or removes one. */
  recordOperatorAction(line: NewOperatorAction, now?: number): Promise<OperatorAction>;
  /** A block or unblock with its line, in one step; null (nothing written) when already so. */
  recordBlock(line: NewOperatorAction, now?: number): Promise<OperatorAction | null>;
  isBlocked(playerId: string): Promise<boolean>;
  /** A pause or resume of the game's payouts, like recordBlock. */
  recordPause(line: NewOperatorAction, now?: number): Promise<OperatorAction | null>;
  /** The line of the pause in force, or null. */
  payoutPause(): Promise<OperatorAction | null>;
  /** Lines oldest first, filtered, a page at a time; paging never skips or repeats one. */
  operatorLog(query?: OperatorLogQuery): Promise<OperatorLogPage>;
}

/** The game's outbound rate: a token bucket (rate.ts; sql/postgres/rate-take.sql). */
export interface RateLimit {
  /** Calls per second, on average: the bucket's refill. */
  perSecond: number;
  /** Calls at once after a quiet spell: the bucket's size (at least 1). */
  burst: number;
}

export interface RateStore {
  /** Takes a token (0) or says the ms to wait; with `keep`, only if `keep` more remain. */
  takeToken(limit: RateLimit, now: number, keep?: number): Promise<number>;
  /** No token before `until` in any process sharing the store, and none left then (a 429). */
  holdCalls(until: number, now?: number): Promise<void>;
}

/** What the engine uses: every job's interface, the outbound rate, and the store's life. */
export interface LedgerStore
  extends IntentStore,
    LeaseStore,
    OnceStore,
    OperatorLogStore,
    RateStore {
  /** Connects and checks the layout and durability; every other call runs it first anyway. */
  open(): Promise<void>;
  /** Idempotent; every other call afterwards rejects with LedgerClosedError. */
  close(): Promise<void>;
}

/** The reads of a ledger: what the public face hands a game (`lightning.books.ledger`). */
const VIEW = [
  ...['get', 'byRemoteId', 'openByRoom', 'openByPlayer', 'byGroup', 'unknowns', 'held'],
  ...['openCount', 'journal', 'balances', 'accounts', 'operatorLog', 'isBlocked', 'payoutPause'],
] as const;
export type LedgerView = Pick<LedgerStore, (typeof VIEW)[number]>;

/** A frozen object of `store`'s reads alone (not the token lookup: a bearer secret's). */
export function readOnlyView(store: LedgerStore): LedgerView {
  const call =
    (m: (typeof VIEW)[number]) =>
    (...a: unknown[]) =>
      (store[m] as (...args: unknown[]) => unknown).apply(store, a);
  const view = VIEW.map((m) => [m, call(m)]);
  return Object.freeze(Object.fromEntries(view)) as LedgerView;
}
