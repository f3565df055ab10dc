/**
 * The embedded ledger store: SQLite on `node:sqlite`, in a file (durable, shared by every
 * process on the machine) or in memory (tests, demos).
 *
 * Usage:
 *   const ledger = new SqliteLedger('./lightning.sqlite'); // or new SqliteLedger() for memory
 *   const intent = await ledger.create({ kind: 'reward', roomId, playerId, amount: '21000',
 *     unit: 'msats', description: 'Level 3', callbackToken });
 *   await ledger.transition(intent.id, 'creating', 'pending', { patch: { remoteId, code } });
 *
 * Footprint: a file ledger runs its connection on a worker thread (sqlite-worker.ts; about
 * 16 MB of RSS with its connection, 25 ms to start), so its SQL, commits and fsyncs
 * (synchronous=FULL) never stall the rooms: the event loop pays one message each way per
 * call, tens of microseconds. Calls that queue up meanwhile commit together, with one fsync.
 * A ':memory:' ledger runs inline by default (about 20 µs per move, 9 µs per read, no fsync
 * to wait for, less than the hand-off): option `worker`. Inputs are validated here, before
 * they cross; what the statements cost is in sqlite-core.ts, the file layout in
 * sql/sqlite/schema.sql.
 *
 * Every write is one transaction that never spans an await, so instances in one process never
 * wait on each other, and instances in several processes serialise on SQLite's write lock:
 * on the worker, SQLite's busy handler waits for it (only the thread waits); inline, SQLite
 * gives up after LOCK_SPIN_MS and the store retries on a timer, leaving the loop free. Either
 * way a write fails with LedgerBusyError after `busyTimeoutMs`. A status change is a
 * compare-and-set on the status column: of two writers moving the same intent, exactly one
 * gets a row back.
 */

import type { DatabaseSync } from 'node:sqlite';
import { v7 as uuidv7 } from 'uuid';
import { type Clock, systemClock } from '../clock.js';
import { ConfigurationError } from '../errors.js';
import { LedgerBusyError, LedgerClosedError } from './errors.js';
import type { Intent, IntentPatch, IntentStatus, NewIntent } from './intent.js';
import type { AccountBalance, JournalPage, JournalQuery, Posting } from './journal.js';
import {
  type NewOperatorAction,
  type OperatorAction,
  type OperatorLogPage,
  type OperatorLogQuery,
  parseBlock,
  parseOperatorAction,
  parseOperatorLogQuery,
  parsePause,
  parsePlayerId,
} from './operator-log.js';
import { LocalRateBucket, type RateLimit } from './rate.js';
import { afterMove, SqliteCore } from './sqlite-core.js';
import { openLedgerDatabase } from './sqlite-schema.js';
import { SqliteThread } from './sqlite-thread.js';
import type { CoreMethod } from './sqlite-wire.js';
import type { CreateGuards, LedgerStore, TransitionOptions } from './store.js';
import {
  parseAccounts,
  parseClaim,
  parseCreate,
  parseEpochMs,
  parseEventId,
  parseJournalQuery,
  parseLimit,
  parseMove,
  parsePostings,
  parseUpdate,
} from './validate.js';

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
  'recordOperatorAction',
  'recordBlock',
  'recordPause',
]);

export class SqliteLedger implements LedgerStore {
  readonly path: string;
  /** Inline mode's connection (the scale bench reads its page count); undefined on a worker. */
  private readonly db: DatabaseSync | undefined;
  private readonly core: SqliteCore | undefined;
  private readonly thread: SqliteThread | undefined;
  private readonly clock: Clock;
  private readonly busyTimeoutMs: number;
  private closed = false;
  readonly #rate = new LocalRateBucket();

  constructor(options: string | SqliteLedgerOptions = {}) {
    const opts = typeof options === 'string' ? { path: options } : options;
    this.path = opts.path ?? ':memory:';
    this.clock = opts.clock ?? systemClock;
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
      this.db = openLedgerDatabase(this.path, this.busyTimeoutMs);
      this.db.exec(`PRAGMA busy_timeout = ${LOCK_SPIN_MS}`);
      this.core = new SqliteCore(this.db);
    }
  }

  async create(
    intent: NewIntent,
    now: number = this.clock.now(),
    guards: CreateGuards = {},
    postings?: readonly Posting[],
  ): Promise<Intent> {
    this.assertOpen();
    const { input, checks, budgets, hold } = parseCreate(intent, now, guards);
    const applied: CreateGuards = { ...checks, budgets };
    const entries = parsePostings(postings);
    return this.run('create', [
      { ...input, id: input.id ?? uuidv7() },
      now,
      applied,
      entries,
      hold,
    ]);
  }

  async get(id: string): Promise<Intent | null> {
    this.assertOpen();
    return this.run('get', [id]);
  }

  async byCallbackToken(token: string): Promise<Intent | null> {
    this.assertOpen();
    return this.run('byCallbackToken', [token]);
  }

  async byRemoteId(kind: Intent['kind'], remoteId: string): Promise<Intent | null> {
    this.assertOpen();
    return this.run('byRemoteId', [kind, remoteId]);
  }

  async openByRoom(roomId: string): Promise<Intent[]> {
    this.assertOpen();
    return this.run('openByRoom', [roomId]);
  }

  async openByPlayer(playerId: string): Promise<Intent[]> {
    this.assertOpen();
    return this.run('openByPlayer', [playerId]);
  }

  async byGroup(groupId: string): Promise<Intent[]> {
    this.assertOpen();
    return this.run('byGroup', [groupId]);
  }

  async seatHolder(groupId: string, playerId: string): Promise<Intent | null> {
    this.assertOpen();
    return this.run('seatHolder', [groupId, playerId]);
  }

  async transition(
    id: string,
    from: IntentStatus | readonly IntentStatus[],
    to: IntentStatus,
    options: TransitionOptions = {},
  ): Promise<Intent | null> {
    this.assertOpen();
    const { sources, now, patch, dueAlso } = parseMove(from, to, options, () => this.clock.now());
    const postings = parsePostings(options.postings);
    const note = options.note ?? null;
    const read = options.read;
    if (
      read !== undefined &&
      read.id === id &&
      sources.length === 1 &&
      read.status === sources[0] &&
      read.history.at(-1)?.to === read.status
    ) {
      // Still in the status it was read in when the move is made, it has not moved since (every
      // move goes up STEPS): its history and the fields no write changes are the reading's.
      const row = await this.run<unknown[] | null>('moveRead', [
        id,
        read.status,
        to,
        patch,
        now,
        note,
        postings,
        dueAlso,
      ]);
      return row === null ? null : afterMove(read, to, patch, now, note, row);
    }
    return this.run('transition', [id, sources, to, patch, now, note, postings, dueAlso]);
  }

  async update(
    id: string,
    status: IntentStatus,
    patch: IntentPatch,
    now: number = this.clock.now(),
    postings?: readonly Posting[],
  ): Promise<Intent | null> {
    this.assertOpen();
    const input = parseUpdate(status, patch, now);
    const entries = parsePostings(postings);
    return this.run('update', [id, status, input, now, entries]);
  }

  async journal(query?: JournalQuery): Promise<JournalPage> {
    this.assertOpen();
    return this.run('journal', [parseJournalQuery(query)]);
  }

  async balances(accounts?: readonly string[]): Promise<AccountBalance[]> {
    this.assertOpen();
    return this.run('balances', [parseAccounts(accounts)]);
  }

  async claimDue(
    now: number,
    limit: number,
    owner: string,
    leaseMs: number,
    queued?: number,
  ): Promise<Intent[]> {
    this.assertOpen();
    parseEpochMs(now, 'now');
    parseClaim(limit, owner, leaseMs, queued);
    if (limit === 0 && !queued) return [];
    return this.run('claimDue', [now, limit, owner, leaseMs, queued ?? -1]);
  }

  async release(id: string, owner: string): Promise<void> {
    this.assertOpen();
    await this.run('release', [id, owner]);
  }

  async open(): Promise<void> {
    this.assertOpen();
  }

  async unknowns(limit = 100): Promise<Intent[]> {
    this.assertOpen();
    parseLimit(limit);
    return this.run('unknowns', [limit]);
  }

  async held(limit = 100): Promise<Intent[]> {
    this.assertOpen();
    parseLimit(limit);
    return this.run('held', [limit]);
  }

  async openCount(): Promise<number> {
    this.assertOpen();
    return this.run('openCount', []);
  }

  async advanceChecks(at: number): Promise<number> {
    this.assertOpen();
    parseEpochMs(at, 'at');
    return this.run('advanceChecks', [at]);
  }

  async recordEvent(eventId: string, now: number = this.clock.now()): Promise<boolean> {
    this.assertOpen();
    parseEventId(eventId);
    parseEpochMs(now, 'now');
    return this.run('recordEvent', [eventId, now]);
  }

  async recordOperatorAction(
    line: NewOperatorAction,
    now: number = this.clock.now(),
  ): Promise<OperatorAction> {
    this.assertOpen();
    const parsed = parseOperatorAction(line);
    parseEpochMs(now, 'now');
    return this.run('recordOperatorAction', [parsed, now]);
  }

  async recordBlock(
    line: NewOperatorAction,
    now: number = this.clock.now(),
  ): Promise<OperatorAction | null> {
    this.assertOpen();
    const parsed = parseBlock(line);
    parseEpochMs(now, 'now');
    return this.run('recordBlock', [parsed, now]);
  }

  /** In process: each SqliteLedger instance keeps its own bucket (rate.ts). */
  async takeToken(limit: RateLimit, now: number, keep = 0): Promise<number> {
    this.assertOpen();
    return this.#rate.takeToken(limit, now, keep);
  }

  async holdCalls(until: number): Promise<void> {
    this.assertOpen();
    return this.#rate.holdCalls(until);
  }

  async isBlocked(playerId: string): Promise<boolean> {
    this.assertOpen();
    return this.run('isBlocked', [parsePlayerId(playerId)]);
  }

  async recordPause(
    line: NewOperatorAction,
    now: number = this.clock.now(),
  ): Promise<OperatorAction | null> {
    this.assertOpen();
    const parsed = parsePause(line);
    parseEpochMs(now, 'now');
    return this.run('recordPause', [parsed, now]);
  }

  async payoutPause(): Promise<OperatorAction | null> {
    this.assertOpen();
    return this.run('payoutPause', []);
  }

  async operatorLog(query?: OperatorLogQuery): Promise<OperatorLogPage> {
    this.assertOpen();
    return this.run('operatorLog', [parseOperatorLogQuery(query)]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
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
