/**
 * The embedded ledger store: one SQLite table on `node:sqlite`, in a file (durable, shared by
 * every process on the machine) or in memory (tests, demos).
 *
 * Usage:
 *   const ledger = new SqliteLedger('./lightning.sqlite'); // or new SqliteLedger() for memory
 *   const intent = await ledger.create({ kind: 'reward', roomId, playerId, amount: '21000',
 *     unit: 'msats', description: 'Level 3', callbackToken });
 *   await ledger.transition(intent.id, 'creating', 'pending', { patch: { remoteId, code } });
 *
 * Footprint: one connection and a dozen prepared statements per instance, no timers. Every
 * call runs synchronously under the async interface and blocks the event loop for one indexed
 * statement; a file write also waits for one fsync (synchronous=FULL). A write that meets the
 * write lock held by another process never waits on the game loop: SQLite gives up after
 * `lockSpinMs` (2 ms), and the store retries on a timer, with backoff, for up to
 * `busyTimeoutMs`, leaving every room of the process running meanwhile.
 *
 * Every write is one `BEGIN IMMEDIATE ... COMMIT` that never spans an await, so instances in
 * one process never wait on each other, and instances in several processes serialise on
 * SQLite's write lock. A status change is a compare-and-set on the status column: of two
 * writers moving the same intent, exactly one gets a row back.
 */

import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { v7 as uuidv7 } from 'uuid';
import { type Clock, systemClock } from '../clock.js';
import { BudgetExceededError, LimitExceededError } from '../errors.js';
import {
  DuplicateIntentError,
  IncompatibleLedgerError,
  LedgerBusyError,
  LedgerClosedError,
} from './errors.js';
import {
  type Intent,
  type IntentHistoryEntry,
  type IntentPatch,
  type IntentStatus,
  isTerminal,
  type NewIntent,
  OPEN_STATUSES,
  PAYOUT_KINDS,
} from './intent.js';
import { type IntentRow, rowToIntent as toIntent } from './rows.js';
import type { CreateGuards, LedgerStore, TransitionOptions } from './store.js';
import {
  assertMove,
  assertSchedulable,
  budgetsFor,
  parseClaim,
  parseEpochMs,
  parseEventId,
  parseGuards,
  parseLimit,
  parseNewIntent,
  parsePatch,
  parseStatus,
} from './validate.js';

export interface SqliteLedgerOptions {
  /** A file path, or ':memory:' for a private in-memory ledger. Default ':memory:'. */
  path?: string;
  /** The time source used when a call gives no `now`. Default the system clock. */
  clock?: Clock;
  /**
   * How long a write waits, in all, for another process's write lock before failing with
   * LedgerBusyError, in ms. The wait is asynchronous: the event loop runs meanwhile. Default 5000.
   */
  busyTimeoutMs?: number;
}

/** How long one attempt may block the event loop on a held lock (SQLite's own busy handler). */
const LOCK_SPIN_MS = 2;
/** The asynchronous retries' backoff: first and longest pause, in ms. */
const RETRY_FIRST_MS = 1;
const RETRY_MAX_MS = 25;

/** How long a webhook event id is remembered for deduplication (deliveries retry for hours). */
const EVENT_MEMORY_MS = 7 * 24 * 3600 * 1000;

/** Bumped whenever the table changes shape; an older library refuses a newer file. */
const SCHEMA_VERSION = 2;

// Constants, not input: safe to inline, and partial indexes are only used by queries that
// repeat their WHERE term word for word.
const OPEN_SQL = `status IN (${OPEN_STATUSES.map((s) => `'${s}'`).join(', ')})`;
const PAYOUT_SQL = `kind IN (${PAYOUT_KINDS.map((k) => `'${k}'`).join(', ')})`;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS intents (
  seq             INTEGER PRIMARY KEY,
  id              TEXT    NOT NULL UNIQUE,
  kind            TEXT    NOT NULL,
  status          TEXT    NOT NULL,
  room_id         TEXT,
  player_id       TEXT    NOT NULL,
  amount          TEXT    NOT NULL,
  unit            TEXT    NOT NULL,
  description     TEXT    NOT NULL,
  remote_id       TEXT,
  code            TEXT,
  uri             TEXT,
  callback_token  TEXT,
  idempotency_key TEXT,
  open_key        TEXT,
  group_id        TEXT,
  expires_at      INTEGER,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  next_check_at   INTEGER,
  checks          INTEGER NOT NULL,
  lease_owner     TEXT,
  lease_until     INTEGER,
  error           TEXT,
  meta            TEXT    NOT NULL,
  history         TEXT    NOT NULL
) STRICT;
`;

/** Columns version 1 files lack, added once, before the indexes that use them. */
const ADDED_COLUMNS: Record<string, string> = {
  open_key: 'ALTER TABLE intents ADD COLUMN open_key TEXT',
  group_id: 'ALTER TABLE intents ADD COLUMN group_id TEXT',
};

// Payouts are indexed by who and when for the budget windows; those columns never change, so a
// status move never touches these indexes. (Files of earlier versions indexed rewards alone.)
const INDEXES = `
CREATE UNIQUE INDEX IF NOT EXISTS intents_open_key
  ON intents (open_key) WHERE open_key IS NOT NULL AND ${OPEN_SQL};
DROP INDEX IF EXISTS intents_reward_player;
DROP INDEX IF EXISTS intents_reward_room;
DROP INDEX IF EXISTS intents_reward_time;
CREATE INDEX IF NOT EXISTS intents_payout_player
  ON intents (player_id, created_at) WHERE ${PAYOUT_SQL};
CREATE INDEX IF NOT EXISTS intents_payout_room
  ON intents (room_id, created_at) WHERE ${PAYOUT_SQL};
CREATE INDEX IF NOT EXISTS intents_payout_time
  ON intents (created_at) WHERE ${PAYOUT_SQL};
CREATE INDEX IF NOT EXISTS intents_group
  ON intents (group_id, created_at) WHERE group_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS intents_callback_token
  ON intents (callback_token) WHERE callback_token IS NOT NULL;
CREATE INDEX IF NOT EXISTS intents_remote
  ON intents (kind, remote_id, created_at) WHERE remote_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS intents_open_room
  ON intents (room_id, created_at) WHERE ${OPEN_SQL};
CREATE INDEX IF NOT EXISTS intents_open_player
  ON intents (player_id, created_at) WHERE ${OPEN_SQL};
CREATE INDEX IF NOT EXISTS intents_due
  ON intents (next_check_at, created_at) WHERE next_check_at IS NOT NULL AND ${OPEN_SQL};
CREATE TABLE IF NOT EXISTS events (
  id      TEXT    PRIMARY KEY,
  seen_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS events_seen ON events (seen_at);
`;

/** Patchable fields and their columns; `meta` is the one stored as JSON text. */
const PATCH_COLUMNS = {
  remoteId: 'remote_id',
  code: 'code',
  uri: 'uri',
  expiresAt: 'expires_at',
  nextCheckAt: 'next_check_at',
  checks: 'checks',
  leaseOwner: 'lease_owner',
  leaseUntil: 'lease_until',
  error: 'error',
  meta: 'meta',
} as const satisfies Record<keyof IntentPatch, string>;

/** Cleared when an intent reaches a terminal status: nothing is left to check or lease. */
const SCHEDULE_COLUMNS: ReadonlySet<string> = new Set([
  'next_check_at',
  'lease_owner',
  'lease_until',
]);

// One SET list serves `transition` and `update`: each column keeps its value unless the
// patch names it (`:set_<col>` = 1), so one prepared statement covers every patch shape.
const PATCH_SET = Object.values(PATCH_COLUMNS)
  .map((col) =>
    SCHEDULE_COLUMNS.has(col)
      ? `${col} = CASE WHEN :terminal THEN NULL WHEN :set_${col} THEN :${col} ELSE ${col} END`
      : `${col} = CASE WHEN :set_${col} THEN :${col} ELSE ${col} END`,
  )
  .join(',\n  ');

const HISTORY_ENTRY = `json(CASE WHEN :note IS NULL
    THEN json_object('at', :now, 'from', status, 'to', :to)
    ELSE json_object('at', :now, 'from', status, 'to', :to, 'note', :note) END)`;

type Params = Record<string, SQLInputValue>;

export class SqliteLedger implements LedgerStore {
  readonly path: string;
  private readonly db: DatabaseSync;
  private readonly clock: Clock;
  private readonly busyTimeoutMs: number;
  private closed = false;
  private readonly sql: ReturnType<typeof prepareStatements>;
  private readonly tx: { begin: StatementSync; commit: StatementSync; rollback: StatementSync };

  constructor(options: string | SqliteLedgerOptions = {}) {
    const opts = typeof options === 'string' ? { path: options } : options;
    this.path = opts.path ?? ':memory:';
    this.clock = opts.clock ?? systemClock;
    this.busyTimeoutMs = opts.busyTimeoutMs ?? 5000;
    // The full busy timeout holds while the constructor (synchronous) runs the schema: two
    // processes opening a new file at once would otherwise fail with SQLITE_BUSY. Afterwards
    // every write waits for a lock asynchronously (see writeSoon).
    // Loaded here, not imported: an older Node then fails at the entry point's version check.
    const { DatabaseSync: Database } = process.getBuiltinModule('node:sqlite');
    this.db = new Database(this.path, { timeout: this.busyTimeoutMs });
    try {
      this.tx = {
        begin: this.db.prepare('BEGIN IMMEDIATE'),
        commit: this.db.prepare('COMMIT'),
        rollback: this.db.prepare('ROLLBACK'),
      };
      this.configure();
      this.db.exec(`PRAGMA busy_timeout = ${LOCK_SPIN_MS}`);
      this.sql = prepareStatements(this.db);
    } catch (err) {
      this.db.close();
      throw err;
    }
  }

  async create(
    intent: NewIntent,
    now: number = this.clock.now(),
    guards: CreateGuards = {},
  ): Promise<Intent> {
    this.assertOpen();
    const input = parseNewIntent(intent);
    parseEpochMs(now, 'now');
    const checks = parseGuards(guards);
    const history: IntentHistoryEntry[] = [{ at: now, from: null, to: 'creating' }];
    const params: Params = {
      id: input.id ?? uuidv7(),
      kind: input.kind,
      room_id: input.roomId,
      player_id: input.playerId,
      amount: input.amount,
      unit: input.unit,
      description: input.description,
      callback_token: input.callbackToken ?? null,
      idempotency_key: input.idempotencyKey ?? null,
      open_key: input.openKey ?? null,
      group_id: input.groupId ?? null,
      expires_at: input.expiresAt ?? null,
      now,
      next_check_at: input.nextCheckAt ?? null,
      meta: JSON.stringify(input.meta ?? {}),
      history: JSON.stringify(history),
    };
    try {
      return await this.writeSoon(() => {
        this.guard(input, now, checks);
        return toIntent(this.sql.insert.get(params));
      });
    } catch (err) {
      const dup = duplicateOrSelf(err);
      if (dup instanceof DuplicateIntentError && dup.field === 'openKey') {
        const holder = this.sql.openKeyHolder.get(input.openKey ?? null) as
          | { id: string }
          | undefined;
        throw new DuplicateIntentError('openKey', { cause: err, existingId: holder?.id ?? null });
      }
      throw dup;
    }
  }

  /** The guards of a create, inside its write transaction: a refusal rolls the insert back. */
  private guard(input: NewIntent, now: number, guards: CreateGuards): void {
    if (guards.maxOpenPerPlayer !== undefined) {
      const { open } = this.sql.countOpen.get(input.playerId) as { open: number };
      if (open >= guards.maxOpenPerPlayer) {
        throw new LimitExceededError('maxOpenPerPlayer', guards.maxOpenPerPlayer, input.playerId);
      }
    }
    for (const budget of budgetsFor(input, guards)) {
      const since = now - budget.windowMs;
      const row = (
        budget.scope === 'player'
          ? this.sql.reservedByPlayer.get(input.playerId, since)
          : budget.scope === 'room'
            ? this.sql.reservedByRoom.get(input.roomId, since)
            : this.sql.reservedByGame.get(since)
      ) as { reserved: bigint };
      if (row.reserved + BigInt(input.amount) > BigInt(budget.limitMsat)) {
        throw new BudgetExceededError(
          budget.scope,
          String(budget.limitMsat),
          String(row.reserved),
          budget.windowMs,
        );
      }
    }
  }

  async get(id: string): Promise<Intent | null> {
    this.assertOpen();
    return toIntentOrNull(this.sql.byId.get(id));
  }

  async byCallbackToken(token: string): Promise<Intent | null> {
    this.assertOpen();
    return toIntentOrNull(this.sql.byToken.get(token));
  }

  async byRemoteId(kind: Intent['kind'], remoteId: string): Promise<Intent | null> {
    this.assertOpen();
    return toIntentOrNull(this.sql.byRemote.get(kind, remoteId));
  }

  async openByRoom(roomId: string): Promise<Intent[]> {
    this.assertOpen();
    return this.sql.openByRoom.all(roomId).map(toIntent);
  }

  async openByPlayer(playerId: string): Promise<Intent[]> {
    this.assertOpen();
    return this.sql.openByPlayer.all(playerId).map(toIntent);
  }

  async byGroup(groupId: string): Promise<Intent[]> {
    this.assertOpen();
    return this.sql.byGroup.all(groupId).map(toIntent);
  }

  async transition(
    id: string,
    from: IntentStatus | readonly IntentStatus[],
    to: IntentStatus,
    options: TransitionOptions = {},
  ): Promise<Intent | null> {
    this.assertOpen();
    const sources = assertMove(from, to);
    const now = parseEpochMs(options.now ?? this.clock.now(), 'now');
    const patch = parsePatch(options.patch ?? {});
    assertSchedulable(to, patch);
    const params: Params = {
      ...patchParams(patch, isTerminal(to)),
      id,
      from: JSON.stringify(sources),
      to,
      now,
      note: options.note ?? null,
    };
    return this.writeSoon(() => toIntentOrNull(this.sql.transition.get(params)));
  }

  async update(
    id: string,
    status: IntentStatus,
    patch: IntentPatch,
    now: number = this.clock.now(),
  ): Promise<Intent | null> {
    this.assertOpen();
    parseStatus(status);
    parseEpochMs(now, 'now');
    const input = parsePatch(patch);
    assertSchedulable(status, input);
    const params: Params = { ...patchParams(input, isTerminal(status)), id, status, now };
    return this.writeSoon(() => toIntentOrNull(this.sql.update.get(params)));
  }

  async claimDue(now: number, limit: number, owner: string, leaseMs: number): Promise<Intent[]> {
    this.assertOpen();
    parseEpochMs(now, 'now');
    parseClaim(limit, owner, leaseMs);
    if (limit === 0) return [];
    const rows = (await this.writeSoon(() =>
      this.sql.claim.all({ now, limit, owner, until: now + leaseMs }),
    )) as unknown as IntentRow[];
    // RETURNING yields rows in no promised order; the contract is nextCheckAt, then age.
    const n = (v: number | string | null) => Number(v ?? 0);
    rows.sort(
      (a, b) =>
        n(a.next_check_at) - n(b.next_check_at) ||
        n(a.created_at) - n(b.created_at) ||
        n(a.seq) - n(b.seq),
    );
    return rows.map(toIntent);
  }

  async release(id: string, owner: string): Promise<void> {
    this.assertOpen();
    await this.writeSoon(() => this.sql.release.run(id, owner));
  }

  async open(): Promise<void> {
    this.assertOpen();
  }

  async unknowns(limit = 100): Promise<Intent[]> {
    this.assertOpen();
    parseLimit(limit);
    return this.sql.unknowns.all(limit).map(toIntent);
  }

  async advanceChecks(at: number): Promise<number> {
    this.assertOpen();
    parseEpochMs(at, 'at');
    return Number(await this.writeSoon(() => this.sql.advance.run({ at }).changes));
  }

  async recordEvent(eventId: string, now: number = this.clock.now()): Promise<boolean> {
    this.assertOpen();
    parseEventId(eventId);
    parseEpochMs(now, 'now');
    return this.writeSoon(() => {
      this.sql.forgetEvents.run(now - EVENT_MEMORY_MS);
      return this.sql.recordEvent.run(eventId, now).changes === 1;
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      // Refreshes the planner's statistics where they are stale; SQLite advises it on close.
      this.db.exec('PRAGMA optimize');
    } finally {
      this.db.close();
    }
  }

  private configure(): void {
    if (this.path !== ':memory:' && this.path !== '') {
      // WAL: readers never block the writer, and a commit appends instead of rewriting pages.
      this.db.exec('PRAGMA journal_mode = WAL');
      // FULL, not NORMAL: under WAL, NORMAL may lose the last commits on power loss, and an
      // intent is written precisely so that it survives the API call that follows it. One
      // fsync per write is cheap next to the HTTP round trip it precedes.
      this.db.exec('PRAGMA synchronous = FULL');
    }
    this.write(() => {
      const row = this.db.prepare('PRAGMA user_version').get() as { user_version: number };
      if (row.user_version > SCHEMA_VERSION) {
        throw new IncompatibleLedgerError(
          `ledger file ${this.path} has schema version ${row.user_version}; this library reads up to ${SCHEMA_VERSION}`,
        );
      }
      this.db.exec(SCHEMA);
      const columns = this.db.prepare('PRAGMA table_info(intents)').all() as { name: string }[];
      for (const [column, alter] of Object.entries(ADDED_COLUMNS)) {
        if (!columns.some((c) => c.name === column)) this.db.exec(alter);
      }
      this.db.exec(INDEXES);
      this.db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    });
  }

  /**
   * One write transaction, retried on a timer while another process holds the lock: each
   * attempt blocks the loop for at most LOCK_SPIN_MS, and a busy attempt has written nothing
   * (the lock is taken first, and a failed commit is rolled back), so retrying is safe.
   */
  private async writeSoon<T>(fn: () => T): Promise<T> {
    const started = performance.now();
    let pause = RETRY_FIRST_MS;
    for (;;) {
      try {
        return this.write(fn);
      } catch (err) {
        const waited = performance.now() - started;
        if (!(err instanceof LedgerBusyError) || waited >= this.busyTimeoutMs) throw err;
        await new Promise((resolve) =>
          setTimeout(resolve, Math.min(pause, this.busyTimeoutMs - waited)),
        );
        pause = Math.min(pause * 2, RETRY_MAX_MS);
        this.assertOpen();
      }
    }
  }

  /** Takes the write lock up front (IMMEDIATE), so a transaction never fails halfway on a lock upgrade. */
  private write<T>(fn: () => T): T {
    try {
      this.tx.begin.run();
    } catch (err) {
      throw busyOrSelf(err);
    }
    try {
      const result = fn();
      this.tx.commit.run();
      return result;
    } catch (err) {
      if (this.db.isTransaction) this.tx.rollback.run();
      throw busyOrSelf(err);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new LedgerClosedError();
  }
}

function prepareStatements(db: DatabaseSync) {
  const open = `SELECT * FROM intents WHERE %col = ? AND ${OPEN_SQL} ORDER BY created_at, seq`;
  return {
    insert: db.prepare(`
      INSERT INTO intents (id, kind, status, room_id, player_id, amount, unit, description,
        callback_token, idempotency_key, open_key, group_id, expires_at, created_at,
        updated_at, next_check_at, checks, meta, history)
      VALUES (:id, :kind, 'creating', :room_id, :player_id, :amount, :unit, :description,
        :callback_token, :idempotency_key, :open_key, :group_id, :expires_at, :now,
        :now, :next_check_at, 0, :meta, :history)
      RETURNING *`),
    byId: db.prepare('SELECT * FROM intents WHERE id = ?'),
    recordEvent: db.prepare('INSERT OR IGNORE INTO events (id, seen_at) VALUES (?, ?)'),
    forgetEvents: db.prepare('DELETE FROM events WHERE seen_at < ?'),
    byToken: db.prepare('SELECT * FROM intents WHERE callback_token = ?'),
    byRemote: db.prepare(
      'SELECT * FROM intents WHERE kind = ? AND remote_id = ? ORDER BY created_at, seq LIMIT 1',
    ),
    openByRoom: db.prepare(open.replace('%col', 'room_id')),
    openByPlayer: db.prepare(open.replace('%col', 'player_id')),
    byGroup: db.prepare(
      'SELECT * FROM intents WHERE group_id = ? AND group_id IS NOT NULL ORDER BY created_at, seq',
    ),
    // The compare-and-set: the status test and the write are one statement, and `status` on
    // the right-hand side is the old value, so the history entry records the real source.
    transition: db.prepare(`
      UPDATE intents SET
        status = :to,
        updated_at = :now,
        history = json_insert(history, '$[#]', ${HISTORY_ENTRY}),
        ${PATCH_SET}
      WHERE id = :id AND status IN (SELECT value FROM json_each(:from))
      RETURNING *`),
    update: db.prepare(`
      UPDATE intents SET
        updated_at = :now,
        ${PATCH_SET}
      WHERE id = :id AND status = :status
      RETURNING *`),
    // Leases are bookkeeping about who is looking, not a change to the intent: updated_at stays.
    claim: db.prepare(`
      UPDATE intents SET lease_owner = :owner, lease_until = :until
      WHERE seq IN (
        SELECT seq FROM intents
        WHERE next_check_at <= :now AND ${OPEN_SQL}
          AND (lease_owner IS NULL OR lease_until IS NULL OR lease_until <= :now)
        ORDER BY next_check_at, created_at, seq
        LIMIT :limit)
      RETURNING *`),
    release: db.prepare(
      'UPDATE intents SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?',
    ),
    countOpen: db.prepare(
      `SELECT COUNT(*) AS open FROM intents WHERE player_id = ? AND ${OPEN_SQL}`,
    ),
    openKeyHolder: db.prepare(`SELECT id FROM intents WHERE open_key = ? AND ${OPEN_SQL}`),
    reservedByPlayer: reserved(db, `player_id = ? AND ${PAYOUT_SQL}`),
    reservedByRoom: reserved(db, `room_id = ? AND ${PAYOUT_SQL}`),
    reservedByGame: reserved(db, PAYOUT_SQL),
    unknowns: db.prepare(
      "SELECT * FROM intents WHERE status = 'unknown' ORDER BY created_at, seq LIMIT ?",
    ),
    // The start-up sweep: the same WHERE terms as the due index, so it walks only open intents.
    advance: db.prepare(`
      UPDATE intents SET next_check_at = :at
      WHERE next_check_at IS NOT NULL AND ${OPEN_SQL} AND next_check_at > :at
        AND kind <> 'match'`),
  } satisfies Record<string, StatementSync>;
}

/** What a budget window holds: payouts created after `since`, unless expired or failed. */
function reserved(db: DatabaseSync, where: string): StatementSync {
  const statement = db.prepare(`
    SELECT COALESCE(SUM(CAST(amount AS INTEGER)), 0) AS reserved FROM intents
    WHERE ${where} AND created_at > ? AND status NOT IN ('expired', 'failed')`);
  statement.setReadBigInts(true);
  return statement;
}

function patchParams(patch: IntentPatch, terminal: boolean): Params {
  const params: Params = { terminal: terminal ? 1 : 0 };
  for (const [field, col] of Object.entries(PATCH_COLUMNS)) {
    const value = patch[field as keyof IntentPatch];
    params[`set_${col}`] = value === undefined ? 0 : 1;
    params[col] =
      value === undefined || value === null
        ? null
        : field === 'meta'
          ? JSON.stringify(value)
          : (value as SQLInputValue);
  }
  return params;
}

/** SQLITE_BUSY and its extended codes (the low byte is the primary code). */
function busyOrSelf(err: unknown): unknown {
  const errcode = (err as { errcode?: unknown } | null)?.errcode;
  return typeof errcode === 'number' && (errcode & 0xff) === 5
    ? new LedgerBusyError({ cause: err })
    : err;
}

function duplicateOrSelf(err: unknown): unknown {
  if (err instanceof Error && (err as { errcode?: number }).errcode === 2067) {
    // SQLITE_CONSTRAINT_UNIQUE names the column; the id and the token are the only unique ones.
    if (err.message.includes('intents.id')) return new DuplicateIntentError('id', { cause: err });
    if (err.message.includes('intents.callback_token')) {
      return new DuplicateIntentError('callbackToken', { cause: err });
    }
    if (err.message.includes('intents.open_key')) {
      return new DuplicateIntentError('openKey', { cause: err });
    }
  }
  return err;
}

function toIntentOrNull(row: unknown): Intent | null {
  return row === undefined ? null : toIntent(row);
}
