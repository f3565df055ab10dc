/**
 * The interface every ledger store implements, one part per job. Every status change is an
 * atomic compare-and-set: two processes or two callbacks never both apply one.
 */
import type { Intent, IntentPatch, IntentStatus, NewIntent } from './intent.js';
import type { AccountBalance, JournalPage, JournalQuery, Posting } from './journal.js';
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
  /**
   * The intent as the caller read it, when `from` is its status: a store may take its history
   * from it instead of reading it back (moves only go forward). The answer is the same.
   */
  read?: Intent;
  /**
   * Another intent made due in the same step, only if the move is made: while its status is
   * still `status`, its `nextCheckAt` becomes `at` unless earlier (a fee paid makes its match due).
   */
  dueAlso?: DueAlso;
}

export interface DueAlso {
  id: string;
  status: IntentStatus;
  /** epoch ms */
  at: number;
}

/** A payout cap over a rolling window, for one scope of a payout (PAYOUT_KINDS). */
export interface BudgetWindow {
  /** Whose payouts count: the new intent's player's, its room's, or every payout. */
  scope: 'player' | 'room' | 'game';
  /** The most that payouts created in the window (not expired or failed) may add up to, in msats. */
  limitMsat: number;
  windowMs: number;
}

/** Checks `create` makes in its atomic step, so that they hold across processes. */
export interface CreateGuards {
  /** LimitExceededError when the player already has this many open intents. */
  maxOpenPerPlayer?: number;
  /** LimitExceededError when the game has this many open intents (`movesMoney: false` aside). */
  maxOpenPerGame?: number;
  /**
   * Payout budgets (payout kinds only): BudgetExceededError when the new payout would take a
   * window past its cap. Its record reserves its amount until it ends expired or failed.
   */
  budgets?: readonly BudgetWindow[];
  /**
   * Payout approvals (payout kinds only): a payout above `aboveMsat`, or one that would take the
   * player's payouts of the window above `perPlayer.limitMsat`, is recorded `held`, never due,
   * sent only once an operator approves it.
   */
  hold?: PayoutHold;
  /** The payout queue (payout kinds only): recorded `queued`, due; the hold wins. */
  queue?: boolean;
  /**
   * A seat in the new intent's group for its player: one per player, at most `seats`, given back
   * when the holder ends expired or failed. LimitExceededError (`seats`) when every seat is taken;
   * DuplicateIntentError (`seat`, `existingId`) when the player holds one, unless `replaces`
   * names that holder: the seat then passes to the new intent.
   */
  seat?: SeatGuard;
}

export interface SeatGuard {
  seats?: number;
  replaces?: string;
}

export interface PayoutHold {
  aboveMsat?: number;
  perPlayer?: { limitMsat: number; windowMs: number };
}

/** Intents and their journal. */
export interface IntentStore {
  /**
   * Records a new intent, `creating` (or `held`, `queued`: the guards), its id a UUID v7 unless
   * given. DuplicateIntentError for a taken id, callback token or open `openKey` (`existingId`);
   * a refused create stores nothing.
   *
   * `postings` (here, on `transition` and `update`) are journaled in the same atomic step: each
   * the entry `<intent id>:<tag>`. A write whose entry is already journaled writes nothing and
   * answers null, so a step is journaled at most once, whoever races to write it.
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
  /**
   * Moves `id` from one of `from` to `to`: the moved intent, or null when its status was not in
   * `from` (IllegalTransitionError for a move TRANSITIONS refuses). An ending move clears
   * nextCheckAt and the lease.
   */
  transition(
    id: string,
    from: IntentStatus | readonly IntentStatus[],
    to: IntentStatus,
    options?: TransitionOptions,
  ): Promise<Intent | null>;
  /** Writes non-status fields while the status is `status`, or null; an ended one is never scheduled. */
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
  /** Intents in status `unknown`, oldest first, at most `limit` (default 100). */
  unknowns(limit?: number): Promise<Intent[]>;
  /** Payouts in status `held`, oldest first, at most `limit` (default 100). */
  held(limit?: number): Promise<Intent[]>;
  /** The game's open intents that move money: what maxOpenPerGame guards. */
  openCount(): Promise<number>;
}

/** Leases and the queue: the reconciler's claims. */
export interface LeaseStore {
  /**
   * Leases to `owner` until now + leaseMs up to `limit` due open intents whose lease is free or
   * run out, by `nextCheckAt`: no two callers get one while its lease runs. With `queued`, queued
   * payouts are claimed in a share of their own beside the others.
   */
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
  /**
   * Takes one call's token: 0 when taken, else the ms to wait. A fresh bucket is full. With
   * `keep`, only if `keep` more remain (a call of low priority leaves the last ones to others).
   */
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
  ...['openCount', 'journal', 'balances', 'operatorLog', 'isBlocked', 'payoutPause'],
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
