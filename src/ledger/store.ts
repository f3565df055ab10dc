/**
 * The one interface every ledger store implements (SQLite for one process, PostgreSQL for
 * several processes or machines).
 * Every method is async so that a networked store fits; every status change is an atomic
 * compare-and-set, so two processes or two callbacks can never both apply one.
 */
import type { Intent, IntentPatch, IntentStatus, NewIntent } from './intent.js';
import type { AccountBalance, JournalPage, JournalQuery, Posting } from './journal.js';
import type {
  NewOperatorAction,
  OperatorAction,
  OperatorLogPage,
  OperatorLogQuery,
} from './operator-log.js';
import type { RateStore } from './rate.js';

export interface TransitionOptions {
  /** Fields written in the same atomic step as the status. */
  patch?: IntentPatch;
  /** A short note kept in the intent's history (never a secret). */
  note?: string;
  /** epoch ms; defaults to the store's clock (Date.now() unless configured). */
  now?: number;
  /**
   * Journal postings written in the same atomic step as the move, and only if it is made
   * (see `LedgerStore.create` for the rules they follow).
   */
  postings?: readonly Posting[];
  /**
   * The intent as the caller read it from this store (unchanged), when `from` is its status: the
   * store may take from it the history, with the move appended, and the fields no write changes,
   * instead of reading them back (the intent still had that status when the move was made, so it
   * had not moved since: moves only go forward). Whatever the store does with it, the answer is
   * the same; a store may ignore it (PostgreSQL keeps the history in the intent's own record,
   * which its move answers in its one round trip anyway).
   */
  read?: Intent;
  /**
   * Another intent made due in the same atomic step, and only if the move is made: while its
   * status is still `status`, its `nextCheckAt` becomes `at` unless it is already earlier (never
   * later; one with none becomes due at `at`). Its status, lease and updatedAt stay. A move that
   * a group's record must look at (a fee paid into a match) makes that record due this way, so
   * whichever process's reconciler comes next does the follow-up, whatever stops this one.
   */
  dueAlso?: DueAlso;
}

/** What TransitionOptions.dueAlso makes due. */
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
  /** Refuse with LimitExceededError when the player already has this many open intents. */
  maxOpenPerPlayer?: number;
  /**
   * Refuse with LimitExceededError when the whole game already has this many open intents,
   * whoever holds them. Matches (kind `match`) are not counted: a match's record moves no money
   * by itself, while its fees, payouts and refunds are intents of their own that count. Each
   * store keeps this count as it writes, in the same atomic step, so a check reads one number.
   */
  maxOpenPerGame?: number;
  /**
   * Payout budgets, over the payout kinds (rewards and payments, PAYOUT_KINDS): refuse with
   * BudgetExceededError when the new payout would take a window past its cap. Its amount is
   * reserved by its very record, and given back when it ends expired or failed. Other kinds
   * ignore budgets. Every process of a game must use the same windows.
   */
  budgets?: readonly BudgetWindow[];
  /**
   * Payout approvals, over the payout kinds (PAYOUT_KINDS; other kinds ignore it): a payout the
   * hold takes is recorded in status `held` instead of `creating`, with no `nextCheckAt` (the
   * reconciler never looks at it), and nothing is sent until an operator approves it. The hold
   * takes a payout whose amount is above `aboveMsat`, or that would take its player's payouts
   * created in the last `perPlayer.windowMs` (held ones included, expired and failed ones not)
   * above `perPlayer.limitMsat`; decided in the create's own atomic step, so two payouts racing
   * past the player's line cannot both go unheld. Its postings are written as given: a held
   * payout's amount sits where a `creating` one's does (journal.ts).
   */
  hold?: PayoutHold;
  /**
   * The payout queue, over the payout kinds (others ignore it): the payout is recorded in status
   * `queued` instead of `creating`, with the `nextCheckAt` given (the engine makes it due at
   * once, so that the reconciler's leased claim hands it to one process, which moves it
   * `queued -> creating` by compare-and-set and sends it). The hold wins: a payout it takes is
   * `held`. Journaled as a create in flight (journal.ts).
   */
  queue?: boolean;
  /**
   * A seat in the new intent's group (`groupId`, which it must have) for its player, held in the
   * create's own atomic step: a player holds at most one seat of a group, and a group has at most
   * `seats` of them taken (none given: no cap, the player's one seat is still kept). The seat is
   * taken by the create and given back when the intent that holds it ends expired or failed (a
   * completed one keeps it). Refused with LimitExceededError (`seats`) when every seat is taken,
   * and with DuplicateIntentError (`seat`, `existingId` the holder) when the player holds one
   * already, unless `replaces` names that holder: the seat then passes to the new intent, taken
   * no second time, and the holder keeps none (a charge whose create answer was lost, replaced).
   * Each store keeps the group's count of taken seats as it writes, so a check reads one number.
   */
  seat?: SeatGuard;
}

/** What CreateGuards.seat takes. */
export interface SeatGuard {
  seats?: number;
  replaces?: string;
}

/** What CreateGuards.hold takes (both optional; neither given: nothing is held). */
export interface PayoutHold {
  aboveMsat?: number;
  perPlayer?: { limitMsat: number; windowMs: number };
}

/** Intents and their journal. */
export interface IntentStore {
  /**
   * Records a new intent in status `creating`, with a UUID v7 id unless one is given. Rejects a
   * duplicate id or callback token (DuplicateIntentError), an `openKey` that an open intent
   * holds (DuplicateIntentError with `existingId`), an invalid intent, e.g. an amount that is
   * not a decimal string (InvalidIntentError), and a create its guards refuse
   * (LimitExceededError, BudgetExceededError); in every case nothing is stored.
   *
   * `postings` (here, and on `transition` and `update`) are journal entries written in the same
   * atomic step as the intent, and only with it: each becomes the entry `<intent id>:<tag>`,
   * stamped with the intent's player and group and the write's time, and moves the balances
   * of its two accounts. They are checked before anything is written (InvalidIntentError for a
   * bad account, tag or amount, two postings with one tag, or debit equal to credit). A move or
   * update whose posting's id is already in the journal is refused whole: nothing is written
   * and it answers null, so a step is journaled at most once, whoever races to write it.
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
  /** Open intents (creating, pending, unknown) of a room, oldest (createdAt) first. */
  openByRoom(roomId: string): Promise<Intent[]>;
  /** Open intents of a player, oldest first. */
  openByPlayer(playerId: string): Promise<Intent[]>;
  /** Every intent of a group (a match and its fees, payouts, refunds), any status, oldest first. */
  byGroup(groupId: string): Promise<Intent[]>;
  /**
   * The intent that holds the player's seat in the group (CreateGuards.seat), or null: one keyed
   * read, whatever the size of the group.
   */
  seatHolder(groupId: string, playerId: string): Promise<Intent | null>;

  /**
   * Moves `id` from one of `from` to `to` atomically. Returns the updated intent, or null
   * when the intent's status was not in `from` (another writer won, or it was already
   * there). Throws IllegalTransitionError, before touching the store, when any listed source
   * may not move to `to`. A move to a terminal status clears nextCheckAt and the lease, and its
   * patch may not set them.
   */
  transition(
    id: string,
    from: IntentStatus | readonly IntentStatus[],
    to: IntentStatus,
    options?: TransitionOptions,
  ): Promise<Intent | null>;

  /**
   * Writes non-status fields while the status is still `status`. Returns the updated intent,
   * or null when the status had changed. A terminal intent may be annotated (error, meta) but
   * never scheduled or leased. `postings` as for `create`: written only with the update, and an
   * update whose posting is already journaled answers null and writes nothing.
   */
  update(
    id: string,
    status: IntentStatus,
    patch: IntentPatch,
    now?: number,
    postings?: readonly Posting[],
  ): Promise<Intent | null>;

  /**
   * Journal entries, oldest first (see `JournalEntry.seq`), filtered by every field given
   * (player, match, intent, written since), a page of `limit` (1 to 1000, default 100) at a
   * time; paging with `after` never skips or repeats one.
   */
  journal(query?: JournalQuery): Promise<JournalPage>;

  /**
   * Balances: of the named accounts (every one named is answered, '0' when it never moved,
   * once per unit it moved in, and 'msats' for one that never moved), or, with no names, of
   * every account class summed over its owners (`claimable` is every player's codes), one row
   * per class and unit that ever moved. Kept by the store as it writes postings, so a read
   * costs no scan of the journal.
   */
  balances(accounts?: readonly string[]): Promise<AccountBalance[]>;

  /** Intents in status `unknown`, oldest (createdAt) first, at most `limit` (default 100). */
  unknowns(limit?: number): Promise<Intent[]>;

  /** Payouts in status `held` (waiting for an operator), oldest first, at most `limit` (100). */
  held(limit?: number): Promise<Intent[]>;

  /**
   * How many intents of the game are open (matches aside): the number `maxOpenPerGame` guards,
   * read from what each store keeps as it writes (one row, a sum of stripes).
   */
  openCount(): Promise<number>;
}

/** Leases and the queue: the reconciler's claims. */
export interface LeaseStore {
  /**
   * Atomically takes up to `limit` open intents whose `nextCheckAt` is due (<= now) and whose
   * lease is free or expired, ordered by `nextCheckAt`, and leases them to `owner` until
   * now + leaseMs. No two callers get the same intent while its lease runs. A lease is held
   * while leaseOwner is set and now < leaseUntil. Leasing and releasing leave updatedAt alone:
   * they record who is looking, not a change to the intent.
   *
   * With `queued` given, payouts in status `queued` are claimed in a share of their own: up to
   * `queued` of them (0: none) beside up to `limit` others, so re-reads due before a long queue
   * never keep it waiting (nor it them). Without it every due intent counts against `limit`.
   * The answer is ordered by `nextCheckAt` either way.
   */
  claimDue(
    now: number,
    limit: number,
    owner: string,
    leaseMs: number,
    queued?: number,
  ): Promise<Intent[]>;

  /** Releases a lease held by `owner` (no-op if it is not held by them). */
  release(id: string, owner: string): Promise<void>;

  /**
   * The start-up sweep: every open intent whose `nextCheckAt` is later than `at` becomes due
   * at `at`, so that a process that starts re-reads what may have settled while it was down.
   * Statuses, leases and updatedAt are left alone; intents without a nextCheckAt too, and
   * matches (kind `match`): theirs is a timeout of ours, not a resource to re-read.
   * Resolves with how many intents were brought forward.
   */
  advanceChecks(at: number): Promise<number>;
}

/** Once-markers: event ids remembered for good. */
export interface OnceStore {
  /**
   * Remembers an event id for good: true the first time it is seen, false for every repeat,
   * however much later (and from whichever process) it comes; of many racing calls with one id,
   * exactly one gets true. Used for signed webhook events (`ramp:` or `widget:` and a hash of
   * the signed body: the service signs no timestamp, so an old body can only be told by its id)
   * and as a once-marker (`once:...`, e.g. a match's `match.funded`, an audit finding). Ids are
   * never forgotten, so a replay a year later is still a repeat; each costs one short row. `now` is recorded as when it was first seen.
   */
  recordEvent(eventId: string, now?: number): Promise<boolean>;
}

/** The operator's audit log, with the blocks and the pause it sets. */
export interface OperatorLogStore {
  /**
   * Appends one line to the operator's audit log (operator-log.ts) and answers it with its seq
   * and time. A line that is not one (an empty `by`, an unknown action, a block naming no player)
   * is refused with InvalidIntentError and nothing is written. There is no call that changes or
   * removes a line.
   */
  recordOperatorAction(line: NewOperatorAction, now?: number): Promise<OperatorAction>;

  /**
   * A block or an unblock (`line.action`) of `line.playerId`, as a compare-and-set: the block is
   * set (or lifted) and the line appended in one atomic step, or, when the player already is
   * so, nothing is written and it answers null. Other actions are refused (InvalidIntentError).
   */
  recordBlock(line: NewOperatorAction, now?: number): Promise<OperatorAction | null>;

  /** Whether an operator blocked the player (and has not unblocked them): one keyed read. */
  isBlocked(playerId: string): Promise<boolean>;

  /**
   * An operator's pause or resume (`line.action`) of the whole game's payouts, as a
   * compare-and-set: the pause is set (or lifted) and the line appended in one atomic step, or,
   * when the payouts already are so, nothing is written and it answers null. Other actions, and
   * a line that names a player or an intent, are refused (InvalidIntentError).
   */
  recordPause(line: NewOperatorAction, now?: number): Promise<OperatorAction | null>;

  /** The line of the operator's pause of the game's payouts in force, or null: one keyed read. */
  payoutPause(): Promise<OperatorAction | null>;

  /**
   * The operator log's lines, oldest first (by seq), filtered by every field given (intent,
   * player, appended since), a page of `limit` (1 to 1000, default 100) at a time; paging with
   * `after` never skips or repeats one, however appends race.
   */
  operatorLog(query?: OperatorLogQuery): Promise<OperatorLogPage>;
}

/**
 * What the engine uses: every job's interface, the outbound rate (`RateStore`, rate.ts: a token
 * bucket shared by every process that shares the store, in process for SQLite), and the store's
 * life.
 */
export interface LedgerStore
  extends IntentStore,
    LeaseStore,
    OnceStore,
    OperatorLogStore,
    RateStore {
  /**
   * Connects and checks that the store can keep its promise: a layout it can read, and storage
   * that keeps an acknowledged write (a PostgreSQL with fsync off is refused with
   * LedgerNotDurableError). Idempotent; the server awaits it before it starts, and every other
   * call runs it first anyway.
   */
  open(): Promise<void>;

  /** Idempotent; every other call afterwards rejects with LedgerClosedError. */
  close(): Promise<void>;
}

/** The reads of a ledger: what the public face hands a game (`lightning.books.ledger`). */
export type LedgerView = Pick<
  LedgerStore,
  | 'get'
  | 'byRemoteId'
  | 'openByRoom'
  | 'openByPlayer'
  | 'byGroup'
  | 'unknowns'
  | 'held'
  | 'openCount'
  | 'journal'
  | 'balances'
  | 'operatorLog'
  | 'isBlocked'
  | 'payoutPause'
>;

/**
 * A read-only view of `store`: a frozen object of its reads alone, so that no cast reaches a
 * write (a move, a create, a close) the engine did not make. Token lookups are left out too: a
 * callback token is a bearer secret of the route.
 */
export function readOnlyView(store: LedgerStore): LedgerView {
  return Object.freeze({
    get: (id: string) => store.get(id),
    byRemoteId: (kind: Parameters<LedgerStore['byRemoteId']>[0], remoteId: string) =>
      store.byRemoteId(kind, remoteId),
    openByRoom: (roomId: string) => store.openByRoom(roomId),
    openByPlayer: (playerId: string) => store.openByPlayer(playerId),
    byGroup: (groupId: string) => store.byGroup(groupId),
    unknowns: (limit?: number) => store.unknowns(limit),
    held: (limit?: number) => store.held(limit),
    openCount: () => store.openCount(),
    journal: (query?: Parameters<LedgerStore['journal']>[0]) => store.journal(query),
    balances: (accounts?: readonly string[]) => store.balances(accounts),
    operatorLog: (query?: Parameters<LedgerStore['operatorLog']>[0]) => store.operatorLog(query),
    isBlocked: (playerId: string) => store.isBlocked(playerId),
    payoutPause: () => store.payoutPause(),
  });
}
