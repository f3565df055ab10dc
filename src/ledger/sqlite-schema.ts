/**
 * The SQLite ledger's file layout (schema 10) and the one function that opens a connection on
 * it: pragmas, the version check, and the migration of files written by schemas 1 to 9. Used
 * by the inline store and by its worker thread alike. Costs one transaction when a file is
 * opened (a table rebuild, once, for a schema 1 or 2 file; one pass over the intents to write
 * their opening entries, once, for anything older than schema 4; one count of the open
 * intents, once, for anything older than schema 6), nothing afterwards.
 *
 * Schema 3 keeps the hot row small and a move cheap:
 * - the history lives in its own table (`moves`), one short row appended per move, keyed by
 *   intent and step, so a move never rewrites (or parses) a JSON array; its notes, which repeat
 *   ("withdrawal request pending"), are kept once each in `notes`;
 * - `live` (1 while open, NULL once terminal) is the filter of every "open" index, and only a
 *   move to a terminal status writes it: a move between open statuses touches none of them;
 * - `uri` is stored as '' when it is `lightning:` + code (it always is), `meta` as NULL when
 *   empty, so the row keeps the ~200-character code once;
 * - `id` and `remote_id` hold a canonical (lowercase) UUID as its 16 bytes, any other string as
 *   text (packId): 20 bytes less in the row and in each of their indexes; `callback_token` its
 *   base64url bytes (packToken): a quarter less.
 *
 * Schema 4 adds the journal (journal.ts): one row per entry in `journal`, naming its intent by
 * the intent's seq, its accounts by their id in `accounts` and its why by its id in `notes`
 * (the moves' notes table: both are short texts that repeat), so an entry costs about 40 bytes
 * plus its indexes. An entry's player and match are its intent's, read by a join, found by
 * `intents_player` and `intents_group` (by time: `journal_at`). `balances` (per account and
 * unit) and `class_balances` (per class and unit) are kept by each write, so no read sums the
 * journal; a balance past a signed 64-bit integer is refused by STRICT, never rounded.
 *
 * Schema 5 keeps event ids for good (LedgerStore.recordEvent): `events` is never purged, so its
 * index by time (`events_seen`, which only the purge read) is dropped. One id is one row of the
 * WITHOUT ROWID table, keyed by the id itself: a webhook's (`ramp:` and a 43-character hash)
 * takes about 70 bytes of the file (measured over 100,000 of them; the dropped index took as
 * much again), a million of them about 70 MB.
 *
 * Schema 6 counts the game's open intents (matches aside) for `maxOpenPerGame`: one row of
 * `counters` ('open'), kept by three triggers on `intents` in the same transaction as the write
 * that opens or ends an intent, so a create's check reads one row instead of counting an index
 * that grows with the open intents (with 10,000 open, counting them took about 1.5 ms on the
 * development machine, the row 4 µs; a whole create stayed at 35 to 45 µs either way). A trigger
 * costs an UPDATE of that one row when an intent is created or ends, nothing on the other moves
 * (their `live` does not change). The triggers live in the file, so whatever writes the table
 * keeps the count, and opening an older file counts its open intents once.
 *
 * Schema 10 keeps seats (CreateGuards.seat): `seats`, one row per player holding a seat of a
 * group (the intent that holds it, by seq), and `seat_counts`, the taken seats per group, kept
 * by triggers as a row of `seats` comes or goes, so a create's check reads one row. A seat goes
 * by a trigger on `intents` when its holder ends expired or failed (the WHEN clause keeps every
 * other move from running it). Created empty: a group of an older file keeps no seats.
 *
 * Schema 9 knows the status `queued` (the payout queue, CreateGuards.queue): recorded like a
 * held one, open, due at once, with its first entry in `moves` (QUEUED_STEP, at its creation).
 * Nothing to carry over; the version keeps older libraries, which cannot read it, out.
 *
 * Schema 8 knows the status `held` (payout approvals, CreateGuards.hold): an intent recorded
 * held keeps it in its row, open (`live`), and its first entry in `moves` (HELD_STEP, at its
 * creation: no move leads to `held`); `intents_held` lists them. Nothing to carry over: an older file has none. The
 * version is bumped so that an older library, which cannot read the status, refuses the file.
 * `payouts_paused` holds at most one row, the operator log's line of an operator's pause of the
 * whole game's payouts (LedgerStore.recordPause), created empty.
 *
 * Schema 7 adds the operator's audit log (operator-log.ts, sqlite-operator.ts): `operator_log`,
 * one row per action, which two triggers keep append-only (an UPDATE or DELETE of a row aborts,
 * whoever writes the file), and `blocked`, one row per blocked player. Opening an older file
 * creates both, empty: nothing to carry over.
 */
import type { DatabaseSync } from 'node:sqlite';
import { IncompatibleLedgerError } from './errors.js';
import {
  INTENT_STATUSES,
  type Intent,
  type IntentHistoryEntry,
  type IntentStatus,
  OPEN_STATUSES,
  PAYOUT_KINDS,
  TRANSITIONS,
} from './intent.js';
import { openingPostings } from './journal.js';

/** Bumped whenever the tables change shape; an older library refuses a newer file. */
export const SCHEMA_VERSION = 10;

/**
 * A move's step: the rank of its target status. TRANSITIONS only ever moves up this order
 * (checked below), so an intent reaches each step at most once, and ordering its moves by step
 * orders them in time: (intent, step) is the history table's key. `held` is before them all
 * (HELD_STEP): no move leads to it, it is only ever an intent's first status.
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
const OPEN_STATUS_SQL = `status IN (${OPEN_STATUSES.map((s) => `'${s}'`).join(', ')})`;
/** The one test of openness the indexes and the queries repeat word for word. */
export const LIVE_SQL = 'live IS NOT NULL';

const INTENTS_TABLE = `
CREATE TABLE intents (
  seq             INTEGER PRIMARY KEY,
  id              ANY     NOT NULL UNIQUE,
  kind            TEXT    NOT NULL,
  status          TEXT    NOT NULL,
  live            INTEGER,
  room_id         TEXT,
  player_id       TEXT    NOT NULL,
  amount          TEXT    NOT NULL,
  unit            TEXT    NOT NULL,
  description     TEXT    NOT NULL,
  remote_id       ANY,
  code            TEXT,
  uri             TEXT,
  callback_token  ANY,
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
  meta            TEXT
) STRICT`;

const MOVES_TABLES = `
CREATE TABLE IF NOT EXISTS moves (
  intent INTEGER NOT NULL,
  step   INTEGER NOT NULL,
  at     INTEGER NOT NULL,
  note   INTEGER,
  PRIMARY KEY (intent, step)
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS notes (
  id   INTEGER PRIMARY KEY,
  text TEXT    NOT NULL UNIQUE
) STRICT`;

const TABLES = `
${INTENTS_TABLE.replace('CREATE TABLE', 'CREATE TABLE IF NOT EXISTS')};
${MOVES_TABLES};
CREATE TABLE IF NOT EXISTS events (
  id      TEXT    PRIMARY KEY,
  seen_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS journal (
  seq     INTEGER PRIMARY KEY,
  intent  INTEGER NOT NULL,
  tag     TEXT    NOT NULL,
  debit   INTEGER NOT NULL,
  credit  INTEGER NOT NULL,
  amount  INTEGER NOT NULL,
  unit    TEXT    NOT NULL,
  why     INTEGER NOT NULL,
  at      INTEGER NOT NULL,
  UNIQUE (intent, tag)
) STRICT;
CREATE TABLE IF NOT EXISTS accounts (
  id   INTEGER PRIMARY KEY,
  name TEXT    NOT NULL UNIQUE
) STRICT;
CREATE TABLE IF NOT EXISTS balances (
  account INTEGER NOT NULL,
  unit    TEXT    NOT NULL,
  balance INTEGER NOT NULL,
  PRIMARY KEY (account, unit)
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS class_balances (
  class   TEXT    NOT NULL,
  unit    TEXT    NOT NULL,
  balance INTEGER NOT NULL,
  PRIMARY KEY (class, unit)
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS counters (
  name TEXT    PRIMARY KEY,
  n    INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS operator_log (
  seq       INTEGER PRIMARY KEY,
  at        INTEGER NOT NULL,
  by        TEXT    NOT NULL,
  action    TEXT    NOT NULL,
  intent_id TEXT,
  player_id TEXT,
  before    TEXT    NOT NULL,
  after     TEXT    NOT NULL,
  note      TEXT    NOT NULL
) STRICT;
CREATE TRIGGER IF NOT EXISTS operator_log_no_update BEFORE UPDATE ON operator_log
  BEGIN SELECT RAISE(ABORT, 'the operator log is append-only'); END;
CREATE TRIGGER IF NOT EXISTS operator_log_no_delete BEFORE DELETE ON operator_log
  BEGIN SELECT RAISE(ABORT, 'the operator log is append-only'); END;
CREATE TABLE IF NOT EXISTS blocked (
  player_id TEXT    PRIMARY KEY,
  since     INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS payouts_paused (
  only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
  line     INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS seats (
  group_id  TEXT    NOT NULL,
  player_id TEXT    NOT NULL,
  intent    INTEGER NOT NULL,
  PRIMARY KEY (group_id, player_id)
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS seat_counts (
  group_id TEXT    PRIMARY KEY,
  taken    INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS seats_taken AFTER INSERT ON seats
  BEGIN
    INSERT INTO seat_counts (group_id, taken) VALUES (NEW.group_id, 1)
      ON CONFLICT (group_id) DO UPDATE SET taken = taken + 1;
  END;
CREATE TRIGGER IF NOT EXISTS seats_given AFTER DELETE ON seats
  BEGIN UPDATE seat_counts SET taken = taken - 1 WHERE group_id = OLD.group_id; END;
CREATE TRIGGER IF NOT EXISTS intents_seat_end AFTER UPDATE OF status ON intents
  WHEN NEW.status IN ('expired', 'failed') AND NEW.group_id IS NOT NULL
  BEGIN
    DELETE FROM seats
      WHERE group_id = NEW.group_id AND player_id = NEW.player_id AND intent = NEW.seq;
  END;
`;

/** What the game's cap counts: an open intent of any kind but a match (see store.ts). */
const COUNTED_SQL = (row: 'NEW' | 'OLD') => `${row}.live IS NOT NULL AND ${row}.kind <> 'match'`;

/**
 * The count of open intents (schema 6), kept by the table itself: an insert of an open intent
 * adds one, a move that ends one (the only write that clears `live`) or a delete of an open one
 * takes one away. Created with the count of the intents already there, in one transaction.
 */
const OPEN_COUNT = `
INSERT OR REPLACE INTO counters (name, n)
  SELECT 'open', COUNT(*) FROM intents WHERE ${LIVE_SQL} AND kind <> 'match';
CREATE TRIGGER IF NOT EXISTS intents_count_insert AFTER INSERT ON intents
  WHEN ${COUNTED_SQL('NEW')}
  BEGIN UPDATE counters SET n = n + 1 WHERE name = 'open'; END;
CREATE TRIGGER IF NOT EXISTS intents_count_live AFTER UPDATE OF live, kind ON intents
  WHEN (${COUNTED_SQL('OLD')}) <> (${COUNTED_SQL('NEW')})
  BEGIN UPDATE counters SET n = n + IIF(${COUNTED_SQL('NEW')}, 1, -1) WHERE name = 'open'; END;
CREATE TRIGGER IF NOT EXISTS intents_count_delete AFTER DELETE ON intents
  WHEN ${COUNTED_SQL('OLD')}
  BEGIN UPDATE counters SET n = n - 1 WHERE name = 'open'; END;
`;

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

// Narrow keys: the rowid that ends every entry already orders rows by creation, and the few
// rows one key finds are sorted by the query.
const INDEXES = `
CREATE UNIQUE INDEX IF NOT EXISTS intents_open_key
  ON intents (open_key) WHERE open_key IS NOT NULL AND ${LIVE_SQL};
CREATE INDEX IF NOT EXISTS intents_group
  ON intents (group_id) WHERE group_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS intents_callback_token
  ON intents (callback_token) WHERE callback_token IS NOT NULL;
CREATE INDEX IF NOT EXISTS intents_remote
  ON intents (remote_id) WHERE remote_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS intents_open_room
  ON intents (room_id) WHERE ${LIVE_SQL};
CREATE INDEX IF NOT EXISTS intents_open_player
  ON intents (player_id) WHERE ${LIVE_SQL};
CREATE INDEX IF NOT EXISTS intents_due
  ON intents (next_check_at) WHERE next_check_at IS NOT NULL AND ${LIVE_SQL};
CREATE INDEX IF NOT EXISTS intents_player ON intents (player_id);
CREATE INDEX IF NOT EXISTS intents_held ON intents (created_at) WHERE status = 'held';
CREATE INDEX IF NOT EXISTS journal_at ON journal (at);
CREATE INDEX IF NOT EXISTS operator_log_intent
  ON operator_log (intent_id) WHERE intent_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS operator_log_player
  ON operator_log (player_id) WHERE player_id IS NOT NULL;
`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HEX = '[0-9a-f]';
const UUID_GLOB = [8, 4, 4, 4, 12].map((n) => HEX.repeat(n)).join('-');

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

/** packId in SQL, for the migration. */
const packedSql = (col: string) =>
  `CASE WHEN ${col} GLOB '${UUID_GLOB}' THEN unhex(replace(${col}, '-', '')) ELSE ${col} END`;

const STEP_OF_JSON = `CASE json_extract(h.value, '$.to') ${STEPS.map((s, i) => `WHEN '${s}' THEN ${i}`).join(' ')} END`;

/**
 * Schemas 1 and 2 kept the history as a JSON array in the row: the table is rebuilt into
 * schema 3's shape (one pass, inside the opening transaction) and each recorded move becomes a
 * row of `moves`. The first entry (null -> creating, at created_at) is implied by the row.
 */
function migrateFromJsonHistory(db: DatabaseSync): void {
  const columns = new Set(
    (db.prepare('PRAGMA table_info(intents)').all() as { name: string }[]).map((c) => c.name),
  );
  const optional = (name: string) => (columns.has(name) ? name : 'NULL');
  // For this statement only: SQLite has no base64.
  db.function('pack_token', { deterministic: true }, (token) =>
    typeof token === 'string' ? packToken(token) : token,
  );
  db.exec(`
    ALTER TABLE intents RENAME TO intents_json_history;
    ${INTENTS_TABLE};
    INSERT INTO intents (seq, id, kind, status, live, room_id, player_id, amount, unit,
      description, remote_id, code, uri, callback_token, idempotency_key, open_key, group_id,
      expires_at, created_at, updated_at, next_check_at, checks, lease_owner, lease_until,
      error, meta)
    SELECT seq, ${packedSql('id')}, kind, status, CASE WHEN ${OPEN_STATUS_SQL} THEN 1 END,
      room_id, player_id, amount, unit, description, ${packedSql('remote_id')}, code,
      CASE WHEN uri = 'lightning:' || code THEN '' ELSE uri END, pack_token(callback_token),
      idempotency_key, ${optional('open_key')}, ${optional('group_id')}, expires_at,
      created_at, updated_at, next_check_at, checks, lease_owner, lease_until, error,
      CASE WHEN meta = '{}' THEN NULL ELSE meta END
    FROM intents_json_history;
    ${MOVES_TABLES};
    INSERT OR IGNORE INTO notes (text)
    SELECT json_extract(h.value, '$.note')
    FROM intents_json_history AS o, json_each(o.history) AS h
    WHERE json_extract(h.value, '$.note') IS NOT NULL;
    INSERT INTO moves (intent, step, at, note)
    SELECT o.seq, ${STEP_OF_JSON}, json_extract(h.value, '$.at'),
      (SELECT id FROM notes WHERE text = json_extract(h.value, '$.note'))
    FROM intents_json_history AS o, json_each(o.history) AS h
    WHERE json_extract(h.value, '$.from') IS NOT NULL;
    DROP TABLE intents_json_history;
  `);
}

/** The class of an account name, in SQL (accountClass). */
const CLASS_SQL = "substr(name, 1, instr(name || ':', ':') - 1)";

/**
 * Before schema 4 there was no journal: every intent gets its opening entry (openingPostings,
 * tag `opening`, written at `now`: where its money sits today), and the balances are those
 * entries' sums. One pass over the intents and their moves, inside the opening transaction.
 */
function writeOpenings(db: DatabaseSync, now: number): void {
  const moves = db.prepare(MOVES_SQL);
  moves.setReturnArrays(true);
  db.exec(`CREATE TEMP TABLE openings (intent INTEGER NOT NULL, debit TEXT NOT NULL,
    credit TEXT NOT NULL, amount INTEGER NOT NULL, unit TEXT NOT NULL, why TEXT NOT NULL)`);
  const add = db.prepare('INSERT INTO openings VALUES (?, ?, ?, ?, ?, ?)');
  const rows = db.prepare(`SELECT ${COLUMNS} FROM intents ORDER BY seq`);
  rows.setReturnArrays(true);
  for (const row of rows.iterate()) {
    const seq = (row as unknown as Row)[COLUMN.seq];
    const intent = rowToIntent(row as unknown as Row, moves.all(seq) as unknown as Move[]);
    for (const p of openingPostings(intent)) {
      add.run(seq, p.debit, p.credit, BigInt(p.amount), p.unit, p.why);
    }
  }
  db.exec(`
    INSERT OR IGNORE INTO accounts (name)
      SELECT debit FROM temp.openings UNION SELECT credit FROM temp.openings;
    INSERT OR IGNORE INTO notes (text) SELECT why FROM temp.openings;
    INSERT INTO journal (intent, tag, debit, credit, amount, unit, why, at)
      SELECT o.intent, 'opening', d.id, c.id, o.amount, o.unit, n.id, ${now}
      FROM temp.openings AS o
      JOIN accounts AS d ON d.name = o.debit
      JOIN accounts AS c ON c.name = o.credit
      JOIN notes AS n ON n.text = o.why
      ORDER BY o.intent;
    INSERT INTO balances (account, unit, balance)
      SELECT account, unit, SUM(amount) FROM (
        SELECT credit AS account, unit, amount FROM journal
        UNION ALL SELECT debit, unit, -amount FROM journal)
      GROUP BY account, unit;
    INSERT INTO class_balances (class, unit, balance)
      SELECT ${CLASS_SQL}, b.unit, SUM(b.balance)
      FROM balances AS b JOIN accounts AS a ON a.id = b.account
      GROUP BY 1, 2;
    DROP TABLE temp.openings;
  `);
}

/**
 * Opens `path` (a file, or ':memory:') ready for schema 10: WAL and synchronous=FULL for a file,
 * the tables and indexes created or migrated under the write lock. Throws
 * IncompatibleLedgerError for a file of a newer schema. `busyTimeoutMs` is SQLite's own wait for
 * another process's lock, here and on every later statement of the connection.
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
    db.exec('BEGIN IMMEDIATE');
    try {
      const { user_version: version } = db.prepare('PRAGMA user_version').get() as {
        user_version: number;
      };
      if (version > SCHEMA_VERSION) {
        throw new IncompatibleLedgerError(
          `ledger file ${path} has schema version ${version}; this library reads up to ${SCHEMA_VERSION}`,
        );
      }
      if (version < SCHEMA_VERSION) {
        const old = db
          .prepare("SELECT 1 FROM pragma_table_info('intents') WHERE name = 'history'")
          .get();
        if (old !== undefined) migrateFromJsonHistory(db);
        db.exec(TABLES);
        db.exec(INDEXES);
        if (version < 4) writeOpenings(db, Date.now());
        // Event ids are no longer forgotten: nothing reads them by time.
        if (version < 5) db.exec('DROP INDEX IF EXISTS events_seen');
        // Under the write lock: no intent opens or ends between the count and the triggers.
        if (version < 6) db.exec(OPEN_COUNT);
        db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
      }
      db.exec('COMMIT');
    } catch (err) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw err;
    }
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
