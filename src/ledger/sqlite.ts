/**
 * The embedded ledger store: SQLite on `node:sqlite`, in a file (durable, shared by every
 * process on the machine) or in memory (tests, demos).
 *
 *   const ledger = new SqliteLedger('./lightning.sqlite'); // or new SqliteLedger() for memory
 *
 * A file ledger runs its connection on a worker thread (sqlite-worker.ts), so that its commits
 * and fsyncs (synchronous=FULL) never stall the rooms, and calls that queue up meanwhile commit
 * together; a ':memory:' ledger runs inline (option `worker`). Every write is one transaction
 * that never spans an await: processes on one file serialise on SQLite's write lock, waited
 * for by the thread's busy handler, or inline retried on a timer so the loop stays free; a
 * write fails with LedgerBusyError after `busyTimeoutMs`. The file's layout is
 * sql/sqlite/schema.sql.
 */
import { type Clock, systemClock } from '../clock.js';
import { ConfigurationError } from '../errors.js';
import type { ClaimCall, CreateCall, LedgerDriver, MoveCall } from './core.js';
import { LedgerCore } from './core.js';
import { LedgerBusyError, LedgerClosedError } from './errors.js';
import type { Intent, IntentPatch, IntentStatus } from './intent.js';
import type { AccountBalance, JournalEntry, Posting } from './journal.js';
import type { NewOperatorAction, OperatorAction, OperatorLogFilter } from './operator-log.js';
import { LocalRateBucket, type RateLimit } from './rate.js';
import type { LineChange } from './rules.js';
import { afterMove, SqliteCore } from './sqlite-core.js';
import { openLedgerDatabase } from './sqlite-schema.js';
import { SqliteThread } from './sqlite-thread.js';
import type { CoreMethod } from './sqlite-wire.js';
import type { JournalFilter } from './validate.js';

export interface SqliteLedgerOptions {
  /** A file path, or ':memory:' for a private in-memory ledger. Default ':memory:'. */
  path?: string;
  /** The time source used when a call gives no `now`. Default the system clock. */
  clock?: Clock;
  /**
   * How long a write waits, in all, for another process's write lock before failing with
   * LedgerBusyError, in ms. The event loop runs meanwhile. Default 5000.
   */
  busyTimeoutMs?: number;
  /**
   * Run SQLite on a worker thread (true) or on the caller's event loop (false). Default true
   * for a file (its commits wait for the disk), false for ':memory:' (a call takes
   * microseconds, less than the hand-off to a thread).
   */
  worker?: boolean;
}

/** Inline: how long one attempt may block the event loop on a held lock (SQLite's own busy handler). */
const LOCK_SPIN_MS = 2;
/** Inline: the asynchronous retries' backoff, first and longest pause, in ms. */
const RETRY_FIRST_MS = 1;
const RETRY_MAX_MS = 25;

/** The core's write methods: inline, these are retried on a timer while another process holds the lock. */
const WRITES: ReadonlySet<CoreMethod> = new Set<CoreMethod>([
  'create',
  'transition',
  'update',
  'claimDue',
  'release',
  'advanceChecks',
  'recordEvent',
  'appendLine',
]);

/** The SQLite driver: SqliteCore's primitives, inline or on the worker thread. */
class SqliteDriver implements LedgerDriver {
  readonly path: string;
  private readonly core: SqliteCore | undefined;
  private readonly thread: SqliteThread | undefined;
  private readonly busyTimeoutMs: number;
  private closed = false;
  readonly #rate = new LocalRateBucket();

  constructor(opts: SqliteLedgerOptions) {
    this.path = opts.path ?? ':memory:';
    this.busyTimeoutMs = opts.busyTimeoutMs ?? 5000;
    if (typeof this.path !== 'string') {
      throw new ConfigurationError(
        'SqliteLedger options.path',
        "must be a file path or ':memory:'",
      );
    }
    if (!Number.isSafeInteger(this.busyTimeoutMs) || this.busyTimeoutMs < 0) {
      throw new ConfigurationError(
        'SqliteLedger options.busyTimeoutMs',
        'must be a whole number of ms, 0 or more',
      );
    }
    const memory = this.path === ':memory:' || this.path === '';
    if (opts.worker ?? !memory) {
      // A file is opened (created, laid out, checked) here first, so that a file this library
      // cannot read fails the constructor, as inline; the thread then opens it ready.
      if (!memory) openLedgerDatabase(this.path, this.busyTimeoutMs).close();
      this.thread = new SqliteThread({ path: this.path, busyTimeoutMs: this.busyTimeoutMs });
    } else {
      // The full busy timeout holds while the schema is set up: two processes opening a new
      // file at once would otherwise fail with SQLITE_BUSY. Then each attempt spins briefly.
      const db = openLedgerDatabase(this.path, this.busyTimeoutMs);
      db.exec(`PRAGMA busy_timeout = ${LOCK_SPIN_MS}`);
      this.core = new SqliteCore(db);
    }
  }

  open(): void {}

  create(call: CreateCall) {
    return this.run<Intent>('create', [call]);
  }

  move({ read, ...move }: MoveCall) {
    const { id, sources, to, patch, now, note } = move;
    if (
      read !== undefined &&
      read.id === id &&
      sources.length === 1 &&
      read.status === sources[0] &&
      read.history.at(-1)?.to === read.status
    ) {
      // Still in the status it was read in when the move is made, it has not moved since (every
      // move goes up STEPS): its history and the fields no write changes are the reading's.
      const row = this.run<unknown[] | null>('moveRead', [move]);
      const after = (r: unknown[] | null) =>
        r === null ? null : afterMove(read, to, patch, now, note, r);
      return row instanceof Promise ? row.then(after) : after(row);
    }
    return this.run<Intent | null>('transition', [move]);
  }

  update(id: string, status: IntentStatus, patch: IntentPatch, now: number, postings: Posting[]) {
    return this.run<Intent | null>('update', [id, status, patch, now, postings]);
  }

  openKeyHolder(openKey: string) {
    return this.run<string | null>('openKeyHolder', [openKey]);
  }

  get(id: string) {
    return this.run<Intent | null>('get', [id]);
  }

  byCallbackToken(token: string) {
    return this.run<Intent | null>('byCallbackToken', [token]);
  }

  byRemoteId(kind: Intent['kind'], remoteId: string) {
    return this.run<Intent | null>('byRemoteId', [kind, remoteId]);
  }

  openByRoom(roomId: string) {
    return this.run<Intent[]>('openByRoom', [roomId]);
  }

  openByPlayer(playerId: string) {
    return this.run<Intent[]>('openByPlayer', [playerId]);
  }

  byGroup(groupId: string) {
    return this.run<Intent[]>('byGroup', [groupId]);
  }

  seatHolder(groupId: string, playerId: string) {
    return this.run<Intent | null>('seatHolder', [groupId, playerId]);
  }

  inStatus(status: 'unknown' | 'held', limit: number) {
    return this.run<Intent[]>('inStatus', [status, limit]);
  }

  openCount() {
    return this.run<number>('openCount', []);
  }

  journal(query: JournalFilter) {
    return this.run<JournalEntry[]>('journal', [query]);
  }

  classBalances() {
    return this.run<AccountBalance[]>('classBalances', []);
  }

  accountBalances(accounts: readonly string[]) {
    return this.run<AccountBalance[]>('accountBalances', [accounts]);
  }

  claimDue(claim: ClaimCall) {
    return this.run<Intent[]>('claimDue', [claim]);
  }

  release(id: string, owner: string) {
    return this.run<void>('release', [id, owner]);
  }

  advanceChecks(at: number) {
    return this.run<number>('advanceChecks', [at]);
  }

  recordEvent(eventId: string, now: number) {
    return this.run<boolean>('recordEvent', [eventId, now]);
  }

  appendLine(line: NewOperatorAction, now: number, change: LineChange | null) {
    return this.run<OperatorAction | null>('appendLine', [line, now, change]);
  }

  isBlocked(playerId: string) {
    return this.run<boolean>('isBlocked', [playerId]);
  }

  payoutPause() {
    return this.run<OperatorAction | null>('payoutPause', []);
  }

  operatorLog(query: OperatorLogFilter) {
    return this.run<OperatorAction[]>('operatorLog', [query]);
  }

  /** In process: each SqliteLedger instance keeps its own bucket (rate.ts). */
  takeToken(limit: RateLimit, now: number, keep: number) {
    return this.#rate.takeToken(limit, now, keep);
  }

  holdCalls(until: number) {
    return this.#rate.holdCalls(until);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.thread) await this.thread.close();
    else this.core?.close();
  }

  /**
   * One core call: posted to the thread, or run here at once, its answer handed back as it is
   * (the async method that calls it resolves with it: no promise of a promise, whose resolution
   * costs a call two more turns of the microtask queue); a write that finds another process
   * holding the lock is retried on a timer (writeSoon).
   */
  private run<T>(method: CoreMethod, args: unknown[]): T | Promise<T> {
    if (this.thread) return this.thread.call<T>(method, args);
    const core = this.core as SqliteCore;
    const once = () => (core[method] as (...a: unknown[]) => T).apply(core, args);
    if (!WRITES.has(method)) return once();
    const started = performance.now();
    try {
      return once();
    } catch (err) {
      if (!(err instanceof LedgerBusyError)) throw err;
      return this.writeSoon(once, started, err);
    }
  }

  /**
   * Inline: a write transaction that found the lock held (`busy`, `started` ms ago), retried on a
   * timer while another process holds it: each attempt blocks the loop for at most LOCK_SPIN_MS,
   * and a busy attempt has written nothing (the lock is taken first, and a failed commit is
   * rolled back), so retrying is safe.
   */
  private async writeSoon<T>(fn: () => T, started: number, busy: LedgerBusyError): Promise<T> {
    let pause = RETRY_FIRST_MS;
    let last = busy;
    for (;;) {
      const waited = performance.now() - started;
      if (waited >= this.busyTimeoutMs) throw last;
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(pause, this.busyTimeoutMs - waited)),
      );
      pause = Math.min(pause * 2, RETRY_MAX_MS);
      this.assertOpen();
      try {
        return fn();
      } catch (err) {
        if (!(err instanceof LedgerBusyError)) throw err;
        last = err;
      }
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new LedgerClosedError();
  }
}

export class SqliteLedger extends LedgerCore {
  readonly path: string;

  constructor(options: string | SqliteLedgerOptions = {}) {
    const opts = typeof options === 'string' ? { path: options } : options;
    const driver = new SqliteDriver(opts);
    super(driver, opts.clock ?? systemClock);
    this.path = driver.path;
  }
}
