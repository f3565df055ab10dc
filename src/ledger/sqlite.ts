/**
 * The embedded store: SQLite on `node:sqlite`, in a file (durable, shared by the machine's
 * processes) or in memory: `new SqliteLedger('./lightning.sqlite')`. A file's connection runs on
 * a worker thread (sqlite-worker.ts), so its fsyncs never stall the rooms and calls queued
 * meanwhile commit together; ':memory:' runs inline. A write is one transaction that never spans
 * an await; another process's lock is waited for by the thread, or inline retried on a timer,
 * for `busyTimeoutMs`, then LedgerBusyError.
 */
import { type Clock, systemClock } from '../clock.js';
import { ConfigurationError } from '../errors.js';
import type { LedgerDriver, MoveCall } from './core.js';
import { LedgerCore } from './core.js';
import { LedgerBusyError, LedgerClosedError } from './errors.js';
import type { Intent, IntentHistoryEntry } from './intent.js';
import { LocalRateBucket, type RateLimit } from './rate.js';
import { type Forwarded, SqliteCore } from './sqlite-core.js';
import { openLedgerDatabase } from './sqlite-schema.js';
import { type CoreMethod, SqliteThread } from './sqlite-thread.js';

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

/** Inline: how long one attempt may block the loop on a held lock, and the retries' backoff. */
const LOCK_SPIN_MS = 2;
const RETRY_FIRST_MS = 1;
const RETRY_MAX_MS = 25;

/** The core's write methods: inline, retried on a timer while another process holds the lock. */
const WRITES: ReadonlySet<CoreMethod> = new Set<CoreMethod>([
  ...['create', 'transition', 'update', 'claimDue', 'release', 'advanceChecks'],
  ...['recordEvent', 'appendLine'],
] as const);

/** The primitives handed to SqliteCore as they are, inline or on the thread: its other methods. */
const FORWARDED = Object.getOwnPropertyNames(SqliteCore.prototype).filter(
  (m) => !['constructor', 'transition', 'batch', 'close'].includes(m),
) as Forwarded[];

/** One inline call, its answer handed back as it is; a busy write (nothing written) retried. */
function inline(core: SqliteCore, busyTimeoutMs: number, closed: () => boolean) {
  return <T>(method: CoreMethod, args: unknown[]): T | Promise<T> => {
    const once = () => (core[method] as (...a: unknown[]) => T).apply(core, args);
    if (!WRITES.has(method)) return once();
    const started = performance.now();
    try {
      return once();
    } catch (err) {
      if (!(err instanceof LedgerBusyError)) throw err;
      return (async () => {
        let last = err;
        for (let pause = RETRY_FIRST_MS; ; pause = Math.min(pause * 2, RETRY_MAX_MS)) {
          const waited = performance.now() - started;
          if (waited >= busyTimeoutMs) throw last;
          await new Promise((resolve) =>
            setTimeout(resolve, Math.min(pause, busyTimeoutMs - waited)),
          );
          if (closed()) throw new LedgerClosedError();
          try {
            return once();
          } catch (e) {
            if (!(e instanceof LedgerBusyError)) throw e;
            last = e;
          }
        }
      })();
    }
  };
}

/** The SQLite driver: SqliteCore's primitives, inline or on the worker thread. */
function sqliteDriver(
  opts: SqliteLedgerOptions,
): LedgerDriver & { path: string; thread: SqliteThread | undefined } {
  const path = opts.path ?? ':memory:';
  const busyTimeoutMs = opts.busyTimeoutMs ?? 5000;
  if (typeof path !== 'string') {
    throw new ConfigurationError('SqliteLedger options.path', "must be a file path or ':memory:'");
  }
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new ConfigurationError(
      'SqliteLedger options.busyTimeoutMs',
      'must be a whole number of ms, 0 or more',
    );
  }
  const memory = path === ':memory:' || path === '';
  let closed = false;
  let thread: SqliteThread | undefined;
  let core: SqliteCore | undefined;
  let run: <T>(method: CoreMethod, args: unknown[]) => T | Promise<T>;
  if (opts.worker ?? !memory) {
    // A file this library cannot read fails the constructor, as inline; the thread opens it ready.
    if (!memory) openLedgerDatabase(path, busyTimeoutMs).close();
    const started = new SqliteThread({ path, busyTimeoutMs });
    thread = started;
    run = (method, args) => started.call(method, args);
  } else {
    // The full busy timeout holds while the schema is laid out (two processes may open a new
    // file at once); then each attempt spins briefly.
    core = new SqliteCore(openLedgerDatabase(path, busyTimeoutMs));
    core.db.exec(`PRAGMA busy_timeout = ${LOCK_SPIN_MS}`);
    run = inline(core, busyTimeoutMs, () => closed);
  }
  // In process: each SqliteLedger instance keeps its own bucket (rate.ts).
  const rate = new LocalRateBucket();
  const forwarded = Object.fromEntries(
    FORWARDED.map((method) => [method, (...args: unknown[]) => run(method, args)]),
  ) as Pick<LedgerDriver, Forwarded>;
  return {
    ...forwarded,
    path,
    thread,
    open() {},
    move({ read, ...move }: MoveCall) {
      // Still in the status it was read in, it has not moved since (moves only go forward): its
      // history is the reading's and this move's, and is not read back.
      const { id, sources, to, now, note } = move;
      const last = read?.history.at(-1)?.to;
      if (
        read?.id !== id ||
        sources.length !== 1 ||
        read.status !== sources[0] ||
        last !== read.status
      ) {
        return run<Intent | null>('transition', [move]);
      }
      const step: IntentHistoryEntry = { at: now, from: read.status, to };
      if (note !== null) step.note = note;
      const known = (moved: Intent | null) => {
        if (moved !== null) moved.history = [...read.history.map((h) => ({ ...h })), step];
        return moved;
      };
      const moved = run<Intent | null>('transition', [move, true]);
      return moved instanceof Promise ? moved.then(known) : known(moved);
    },
    takeToken: (limit: RateLimit, now: number, keep: number) => rate.takeToken(limit, now, keep),
    holdCalls: (until: number) => rate.holdCalls(until),
    async close() {
      closed = true;
      if (thread) await thread.close();
      else core?.close();
    },
  };
}

export class SqliteLedger extends LedgerCore {
  readonly path: string;

  constructor(options: string | SqliteLedgerOptions = {}) {
    const opts = typeof options === 'string' ? { path: options } : options;
    const driver = sqliteDriver(opts);
    super(driver, opts.clock ?? systemClock);
    this.path = driver.path;
  }
}
