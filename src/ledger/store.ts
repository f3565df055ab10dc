/**
 * The interface every ledger store implements (SQLite for one process, PostgreSQL for several),
 * one part per job. Every method is async so that a networked store fits; every status change is
 * an atomic compare-and-set, so two processes or two callbacks can never both apply one.
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
   * The intent as the caller read it from this store, when `from` is its status: the store may
   * take the history and the fields no write changes from it instead of reading them back (it
   * had not moved since: moves only go forward). The answer is the same either way.
   */
  read?: Intent;
  /**
   * Another intent made due in the same atomic step, only if the move is made: while its status
   * is still `status`, its `nextCheckAt` becomes `at` unless already earlier. A fee paid into a
   * match makes the match due this way, so whichever process comes next does the follow-up.
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

/**
 * Checks `create` makes in the same atomic step as the insert, so that they hold across
 * processes. A refused create records nothing.
 */
export interface CreateGuards {
  /** LimitExceededError when the player already has this many open intents. */
  maxOpenPerPlayer?: number;
  /**
   * LimitExceededError when the game already has this many open intents. Matches do not count
   * (a match's record moves no money; its fees, payouts and refunds do).
   */
  maxOpenPerGame?: number;
  /**
   * Payout budgets (payout kinds only): BudgetExceededError when the new payout would take a
   * window past its cap. Its record reserves its amount until it ends expired or failed.
   */
  budgets?: readonly BudgetWindow[];
  /**
   * Payout approvals (payout kinds only): a payout the hold takes is recorded `held`, never due,
   * sent only once an operator approves it. It takes an amount above `aboveMsat`, or one that
   * would take the player's payouts of the last `perPlayer.windowMs` above `perPlayer.limitMsat`
   * (decided in the create's atomic step, so two racing payouts cannot both pass unheld).
   */
  hold?: PayoutHold;
  /**
   * The payout queue (payout kinds only): recorded `queued` with the `nextCheckAt` given, so
   * that one process's claim moves it `queued -> creating` and sends it. The hold wins.
   */
  queue?: boolean;
  /**
   * A seat in the new intent's group for its player: at most one per player, at most `seats`
   * taken, given back when the holder ends expired or failed. LimitExceededError (`seats`) when
   * every seat is taken; DuplicateIntentError (`seat`, `existingId`) when the player holds one,
   * unless `replaces` names that holder: the seat then passes to the new intent.
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
   * Records a new intent in status `creating` (or `held`, `queued`: the guards), with a UUID v7
   * id unless one is given. Refuses a duplicate id or callback token, an `openKey` an open intent
   * holds (DuplicateIntentError, `existingId`), an invalid intent (InvalidIntentError) and what
   * the guards refuse; a refused create stores nothing.
   *
   * `postings` (here, on `transition` and on `update`) are journal entries written in the same
   * atomic step and only with it: each is the entry `<intent id>:<tag>`, stamped with the
   * intent's player and group and the write's time, moving the balances of its two accounts.
   * A move or update whose entry is already journaled writes nothing and answers null, so a step
   * is journaled at most once, whoever races to write it.
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
   * Moves `id` from one of `from` to `to` atomically: the updated intent, or null when its status
   * was not in `from`. IllegalTransitionError, before touching the store, when a listed source
   * may not move to `to`. A move to a terminal status clears nextCheckAt and the lease.
   */
  transition(
    id: string,
    from: IntentStatus | readonly IntentStatus[],
    to: IntentStatus,
    options?: TransitionOptions,
  ): Promise<Intent | null>;
  /**
   * Writes non-status fields while the status is still `status`: the updated intent, or null. A
   * terminal intent may be annotated (error, meta), never scheduled or leased.
   */
  update(
    id: string,
    status: IntentStatus,
    patch: IntentPatch,
    now?: number,
    postings?: readonly Posting[],
  ): Promise<Intent | null>;
  /**
   * Journal entries, oldest first, filtered by every field given, `limit` (1 to 1000, default
   * 100) at a time; paging with `after` never skips or repeats one.
   */
  journal(query?: JournalQuery): Promise<JournalPage>;
  /**
   * Balances of the named accounts (each answered, '0' msats when it never moved), or with no
   * names of every class summed over its owners; kept as postings are written, never summed.
   */
  balances(accounts?: readonly string[]): Promise<AccountBalance[]>;
  /** Intents in status `unknown`, oldest first, at most `limit` (default 100). */
  unknowns(limit?: number): Promise<Intent[]>;
  /** Payouts in status `held`, oldest first, at most `limit` (default 100). */
  held(limit?: number): Promise<Intent[]>;
  /** How many intents of the game are open (matches aside): what maxOpenPerGame guards. */
  openCount(): Promise<number>;
}

/** Leases and the queue: the reconciler's claims. */
export interface LeaseStore {
  /**
   * Atomically leases to `owner`, until now + leaseMs, up to `limit` open intents whose
   * `nextCheckAt` is due and whose lease is free or run out, by `nextCheckAt`: no two callers get
   * one while its lease runs. Leases leave updatedAt alone. With `queued`, queued payouts are
   * claimed in a share of their own (up to `queued`) beside up to `limit` others.
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
  /**
   * The start-up sweep: every open intent (matches aside) due later than `at` becomes due at
   * `at`, so that a process re-reads what settled while it was down. Answers how many.
   */
  advanceChecks(at: number): Promise<number>;
}

/** Once-markers: event ids remembered for good. */
export interface OnceStore {
  /**
   * True the first time an id is seen, false for every repeat, from any process, however late
   * (a signed webhook has no timestamp, so only its id tells a replay); one of racing calls wins.
   */
  recordEvent(eventId: string, now?: number): Promise<boolean>;
}

/** The operator's audit log, with the blocks and the pause it sets. */
export interface OperatorLogStore {
  /** Appends a line (operator-log.ts): no call changes or removes one. */
  recordOperatorAction(line: NewOperatorAction, now?: number): Promise<OperatorAction>;
  /**
   * A block or unblock of `line.playerId` as a compare-and-set: set with its line in one atomic
   * step, or null (nothing written) when the player already is so.
   */
  recordBlock(line: NewOperatorAction, now?: number): Promise<OperatorAction | null>;
  isBlocked(playerId: string): Promise<boolean>;
  /** A pause or resume of the game's payouts as a compare-and-set, like recordBlock. */
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
   * Takes one call's token: 0 when taken, else the ms to wait (until the next token or the
   * hold's end). A fresh bucket is full. With `keep` (under `burst`), the token is taken only if
   * `keep` more remain: a call of low priority leaves the last tokens to those that matter more.
   * `now` is the caller's clock; a shared bucket counts by its store's own.
   */
  takeToken(limit: RateLimit, now: number, keep?: number): Promise<number>;
  /**
   * No token before `until` (the caller's clock, read as `now`) in any process sharing the store,
   * and the bucket empty from then (the service's was, when it said 429). An earlier hold than
   * the one in force changes nothing.
   */
  holdCalls(until: number, now?: number): Promise<void>;
}

/** What the engine uses: every job's interface, the outbound rate, and the store's life. */
export interface LedgerStore
  extends IntentStore,
    LeaseStore,
    OnceStore,
    OperatorLogStore,
    RateStore {
  /**
   * Connects and checks that the store can keep its promise (a layout it reads, storage that
   * keeps an acknowledged write). Idempotent; every other call runs it first anyway.
   */
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

/**
 * A frozen object of `store`'s reads alone, so that no cast reaches a write. Token lookups are
 * left out too: a callback token is a bearer secret of the route.
 */
export function readOnlyView(store: LedgerStore): LedgerView {
  const call =
    (m: (typeof VIEW)[number]) =>
    (...a: unknown[]) =>
      (store[m] as (...args: unknown[]) => unknown).apply(store, a);
  const view = VIEW.map((m) => [m, call(m)]);
  return Object.freeze(Object.fromEntries(view)) as LedgerView;
}
