/**
 * The SQLite ledger's file, opened, and its rows read: `openLedgerDatabase` sets the pragmas and
 * brings the file to this library's layout (sql/sqlite/migrations/, each file in one
 * transaction; schema.sql beside them says why each table is as it is), for the inline store
 * and its worker thread alike; the rest packs ids and tokens as the layout keeps them and reads
 * an intent back from its row and its moves. Costs one transaction when a file is opened (one
 * more per migration it still needs), nothing afterwards.
 */
import type { DatabaseSync } from 'node:sqlite';
import { IncompatibleLedgerError } from './errors.js';
import {
  INTENT_STATUSES,
  type Intent,
  type IntentHistoryEntry,
  type IntentStatus,
  PAYOUT_KINDS,
  TRANSITIONS,
} from './intent.js';
import { layoutOf, migration } from './layout.js';

/** The layout this library writes and reads (PRAGMA user_version). */
export const LAYOUT = layoutOf('sqlite');

/** The ledger's mark in a file's header (PRAGMA application_id), set by the first migration. */
const LEDGER_ID = 1280200775;

/**
 * A move's step: the rank of its target status. TRANSITIONS only ever moves up this order
 * (checked below), so an intent reaches each step at most once, and ordering its moves by step
 * orders them in time: (intent, step) is the history table's key. `held` is before them all
 * (HELD_STEP): no move leads to it, it is only ever an intent's first status. Part of the
 * layout: `moves` keeps these ranks, so changing them takes a migration.
 */
export const STEPS: readonly IntentStatus[] = [
  'creating',
  'unknown',
  'pending',
  'completed',
  'expired',
  'failed',
];
for (const from of INTENT_STATUSES) {
  for (const to of TRANSITIONS[from]) {
    if (STEPS.indexOf(to) <= STEPS.indexOf(from)) {
      throw new Error(`sqlite ledger: the move ${from} -> ${to} breaks the history's step order`);
    }
  }
}

export const PAYOUT_SQL = `kind IN (${PAYOUT_KINDS.map((k) => `'${k}'`).join(', ')})`;
/** The one test of openness the layout's indexes and the queries repeat word for word. */
export const LIVE_SQL = 'live IS NOT NULL';

/** The game's open intents, as the triggers keep them. */
export const OPEN_COUNT_SQL = "SELECT n FROM counters WHERE name = 'open'";

/**
 * The budget windows' indexes, one per scope, built by the first create whose guards check a
 * window of that scope (SqliteCore.guard), not with the table: a game without budgets keeps
 * none of them, about 75 B per payout less in the file and in a ':memory:' ledger. Until one is
 * built, the window's sum is read without it: the same answer, found by a scan. They never
 * change after the insert.
 */
export const PAYOUT_INDEXES = {
  player: `CREATE INDEX IF NOT EXISTS intents_payout_player
    ON intents (player_id, created_at) WHERE ${PAYOUT_SQL}`,
  room: `CREATE INDEX IF NOT EXISTS intents_payout_room
    ON intents (room_id, created_at) WHERE ${PAYOUT_SQL}`,
  game: `CREATE INDEX IF NOT EXISTS intents_payout_time
    ON intents (created_at) WHERE ${PAYOUT_SQL}`,
} as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * An id as stored: a canonical UUID (lowercase, as uuid makes them) as its 16 bytes, any other
 * string as itself. One-to-one, so equality and uniqueness are those of the strings.
 */
export function packId(value: string): string | Uint8Array {
  return UUID.test(value) ? Buffer.from(value.replaceAll('-', ''), 'hex') : value;
}

export function unpackId(value: string | Uint8Array): string {
  if (typeof value === 'string') return value;
  const hex = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A callback token as stored: base64url whose bytes encode back to the very same string (every
 * token of 4n characters) as those bytes, any other string as itself. One-to-one, like packId.
 */
export function packToken(value: string): string | Uint8Array {
  if (value.length % 4 !== 0) return value;
  const bytes = Buffer.from(value, 'base64url');
  return bytes.toString('base64url') === value ? bytes : value;
}

export function unpackToken(value: string | Uint8Array): string {
  if (typeof value === 'string') return value;
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64url');
}

/**
 * Where each column of an intent's row sits. Rows are read as arrays (node:sqlite's
 * `setReturnArrays`): its row objects have no fixed shape, so each of their 25 fields read is a
 * dictionary lookup, where an array's is an index.
 */
export const COLUMN = {
  seq: 0,
  id: 1,
  kind: 2,
  status: 3,
  room_id: 4,
  player_id: 5,
  amount: 6,
  unit: 7,
  description: 8,
  remote_id: 9,
  code: 10,
  uri: 11,
  callback_token: 12,
  idempotency_key: 13,
  open_key: 14,
  group_id: 15,
  expires_at: 16,
  created_at: 17,
  updated_at: 18,
  next_check_at: 19,
  checks: 20,
  lease_owner: 21,
  lease_until: 22,
  error: 23,
  meta: 24,
} as const;

/** The columns of an intent's row, in COLUMN's order, as every statement that reads one selects them. */
export const COLUMNS = Object.keys(COLUMN).join(', ');

/** One intent's row as the statements return it (node:sqlite hands integers over as numbers). */
export type Row = readonly [
  seq: number,
  id: string | Uint8Array,
  kind: Intent['kind'],
  status: IntentStatus,
  room_id: string | null,
  player_id: string,
  amount: string,
  unit: string,
  description: string,
  remote_id: string | Uint8Array | null,
  code: string | null,
  uri: string | null,
  callback_token: string | Uint8Array | null,
  idempotency_key: string | null,
  open_key: string | null,
  group_id: string | null,
  expires_at: number | null,
  created_at: number,
  updated_at: number,
  next_check_at: number | null,
  checks: number,
  lease_owner: string | null,
  lease_until: number | null,
  error: string | null,
  meta: string | null,
];

/** One row of `moves`, as MOVES_SQL reads it (an array, like Row). */
export type Move = readonly [step: number, at: number, note: string | null];

/** An intent's moves in step order, with their notes: `?` is the intent's seq. */
export const MOVES_SQL = `SELECT m.step, m.at, n.text AS note
  FROM moves AS m LEFT JOIN notes AS n ON n.id = m.note WHERE m.intent = ? ORDER BY m.step`;

/** A history entry from its move and the entry before it. */
function entryOf(move: Move, from: IntentStatus | null): IntentHistoryEntry {
  const to =
    move[0] === HELD_STEP
      ? 'held'
      : move[0] === QUEUED_STEP
        ? 'queued'
        : (STEPS[move[0]] as IntentStatus);
  const entry: IntentHistoryEntry = { at: move[1], from, to };
  if (move[2] !== null) entry.note = move[2];
  return entry;
}

/**
 * The step of `held` in `moves`: before every other (no move leads to it, it is only ever an
 * intent's first status), written by the create of a payout the approvals hold, at its time.
 * An intent with this row starts its history with it; every other starts with the `creating`
 * its row implies.
 */
export const HELD_STEP = -1;

/** The step of `queued` in `moves`: a first status too (CreateGuards.queue), as HELD_STEP. */
export const QUEUED_STEP = -2;

/**
 * A history's start, before its moves: the `creating` the row implies (at `createdAt`), or
 * nothing when its first move is a first status of its own (held, queued).
 */
function historyStart(
  createdAt: number,
  firstStep: number | null | undefined,
): IntentHistoryEntry[] {
  if (firstStep === HELD_STEP || firstStep === QUEUED_STEP) return [];
  return [{ at: createdAt, from: null, to: 'creating' }];
}

/** An intent from its row and its moves, in step order (the history's first entry is the row's). */
export function rowToIntent(row: Row, moves: readonly Move[]): Intent {
  const history = historyStart(row[COLUMN.created_at], moves[0]?.[0]);
  for (const move of moves) history.push(entryOf(move, history.at(-1)?.to ?? null));
  return withHistory(row, history);
}

/**
 * An intent's row with one of its moves (`step, at, note`, NULLs for an intent that has none):
 * a row of `joinedSql`, one per move in step order.
 */
type Joined = readonly [...Row, step: number | null, at: number | null, note: string | null];

/** Where a Joined row's move columns are: after the intent's. */
const STEP = 25;
const AT = 26;
const NOTE = 27;
if (Object.keys(COLUMN).length !== STEP) throw new Error('sqlite ledger: a Joined row is stale');

/** An intent and its moves in one statement, for joinedToIntent: `where` names the intent. */
export function joinedSql(where: string): string {
  const columns = Object.keys(COLUMN)
    .map((c) => `i.${c}`)
    .join(', ');
  return `SELECT ${columns}, m.step, m.at, n.text FROM intents AS i
    LEFT JOIN moves AS m ON m.intent = i.seq LEFT JOIN notes AS n ON n.id = m.note
    WHERE ${where} ORDER BY m.step`;
}

/**
 * An intent from the rows of `joinedSql` (arrays, as node:sqlite reads them with
 * `setReturnArrays`): one statement for an intent and its history. Null for no rows.
 */
export function joinedToIntent(rows: readonly object[]): Intent | null {
  const first = rows[0] as Joined | undefined;
  if (first === undefined) return null;
  const history = historyStart(first[COLUMN.created_at], first[STEP]);
  for (const row of rows as readonly Joined[]) {
    const step = row[STEP];
    const at = row[AT];
    if (step === null || at === null) break;
    history.push(entryOf([step, at, row[NOTE]], history.at(-1)?.to ?? null));
  }
  return withHistory(first, history);
}

/** An intent from its row (or a row that runs on, a Joined one) and its history. */
function withHistory(row: readonly [...Row, ...unknown[]], history: IntentHistoryEntry[]): Intent {
  const remote = row[COLUMN.remote_id];
  const token = row[COLUMN.callback_token];
  const meta = row[COLUMN.meta];
  return {
    id: unpackId(row[COLUMN.id]),
    kind: row[COLUMN.kind],
    status: row[COLUMN.status],
    roomId: row[COLUMN.room_id],
    playerId: row[COLUMN.player_id],
    amount: row[COLUMN.amount],
    unit: row[COLUMN.unit],
    description: row[COLUMN.description],
    remoteId: remote === null ? null : unpackId(remote),
    code: row[COLUMN.code],
    uri: row[COLUMN.uri] === '' ? `lightning:${row[COLUMN.code]}` : row[COLUMN.uri],
    callbackToken: token === null ? null : unpackToken(token),
    idempotencyKey: row[COLUMN.idempotency_key],
    openKey: row[COLUMN.open_key],
    groupId: row[COLUMN.group_id],
    expiresAt: row[COLUMN.expires_at],
    createdAt: row[COLUMN.created_at],
    updatedAt: row[COLUMN.updated_at],
    nextCheckAt: row[COLUMN.next_check_at],
    checks: row[COLUMN.checks],
    leaseOwner: row[COLUMN.lease_owner],
    leaseUntil: row[COLUMN.lease_until],
    error: row[COLUMN.error],
    meta: meta === null ? {} : (JSON.parse(meta) as Record<string, unknown>),
    history,
  };
}

/**
 * The file's layout, read under the write lock: 0 for a new file, else the migrations it has
 * had. Throws IncompatibleLedgerError for a file this library cannot read: a newer library's,
 * a pre-release library's (no mark, a schema number of its own) or another program's.
 */
function layoutIn(db: DatabaseSync, path: string): number {
  const { application_id: id } = db.prepare('PRAGMA application_id').get() as {
    application_id: number;
  };
  const { user_version: version } = db.prepare('PRAGMA user_version').get() as {
    user_version: number;
  };
  if (id === 0 && version === 0) return 0;
  if (id === LEDGER_ID && version <= LAYOUT) return version;
  throw new IncompatibleLedgerError(
    id === LEDGER_ID
      ? `ledger file ${path} has layout ${version}; this library reads up to layout ${LAYOUT}. Upgrade colyseus-lightning in every process that opens it.`
      : id === 0
        ? `ledger file ${path} was written by a pre-release colyseus-lightning (schema ${version}), whose layout this one does not read: move it aside and start a new file.`
        : `file ${path} is not a colyseus-lightning ledger (its application_id is ${id}).`,
  );
}

/**
 * Opens `path` (a file, or ':memory:') at this library's layout: WAL and synchronous=FULL for a
 * file, then each migration it lacks in a transaction of its own, under the write lock (another
 * process opening it at once waits, then finds it done). Throws IncompatibleLedgerError for a
 * file it cannot read (layoutIn). `busyTimeoutMs` is SQLite's own wait for another process's
 * lock, here and on every later statement of the connection.
 */
export function openLedgerDatabase(path: string, busyTimeoutMs: number): DatabaseSync {
  // Loaded here, not imported: an older Node then fails at the entry point's version check.
  const { DatabaseSync: Database } = process.getBuiltinModule('node:sqlite');
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    if (path !== ':memory:' && path !== '') {
      // WAL: readers never block the writer, and a commit appends instead of rewriting pages.
      db.exec('PRAGMA journal_mode = WAL');
      // FULL, not NORMAL: under WAL, NORMAL may lose the last commits on power loss, and an
      // intent is written precisely so that it survives the API call that follows it.
      db.exec('PRAGMA synchronous = FULL');
    }
    let layout: number;
    do {
      db.exec('BEGIN IMMEDIATE');
      try {
        layout = layoutIn(db, path);
        if (layout < LAYOUT) {
          layout += 1;
          db.exec(migration('sqlite', layout));
          db.exec(`PRAGMA user_version = ${layout}`);
        }
        db.exec('COMMIT');
      } catch (err) {
        if (db.isTransaction) db.exec('ROLLBACK');
        throw err;
      }
    } while (layout < LAYOUT);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
