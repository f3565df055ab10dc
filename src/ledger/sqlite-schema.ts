/** The SQLite ledger's file, opened at this library's layout, and its rows read back. */
import type { DatabaseSync } from 'node:sqlite';
import { IncompatibleLedgerError } from './errors.js';
import {
  INTENT_STATUSES,
  type Intent,
  type IntentHistoryEntry,
  type IntentStatus,
  TRANSITIONS,
} from './intent.js';
import { layoutOf, migration, WINDOW_SQL } from './sql.js';

/** The layout this library writes and reads (PRAGMA user_version). */
export const LAYOUT = layoutOf('sqlite');

/** The ledger's mark in a file's header (PRAGMA application_id). */
const LEDGER_ID = 1280200775;

/** A move's step, the rank of the status it reached: moves only go up it, so steps order them. */
const ORDER = 'held queued creating unknown pending completed expired failed';
export const STEPS = ORDER.split(' ') as IntentStatus[];
for (const from of INTENT_STATUSES) {
  for (const to of TRANSITIONS[from]) {
    if (!(STEPS.indexOf(from) >= 0 && STEPS.indexOf(to) > STEPS.indexOf(from))) {
      throw new Error(`sqlite ledger: the move ${from} -> ${to} breaks the history's step order`);
    }
  }
}
const CREATING = STEPS.indexOf('creating');

/** Openness, as the layout's indexes and the queries spell it word for word. */
export const LIVE_SQL = 'live IS NOT NULL';

/**
 * The budget windows' indexes, by `over:scope`, built by the first create that checks one: else
 * none is kept. A tab's windows are a player's only (validate.ts).
 */
export const WINDOW_INDEXES: Readonly<Record<string, string>> = {
  'payouts:player': `CREATE INDEX IF NOT EXISTS intents_payout_player
    ON intents (player_id, created_at) WHERE ${WINDOW_SQL.payouts}`,
  'payouts:room': `CREATE INDEX IF NOT EXISTS intents_payout_room
    ON intents (room_id, created_at) WHERE ${WINDOW_SQL.payouts}`,
  'payouts:game': `CREATE INDEX IF NOT EXISTS intents_payout_time
    ON intents (created_at) WHERE ${WINDOW_SQL.payouts}`,
  'credits:player': `CREATE INDEX IF NOT EXISTS intents_credit_player
    ON intents (player_id, created_at) WHERE ${WINDOW_SQL.credits}`,
  'withdrawals:player': `CREATE INDEX IF NOT EXISTS intents_withdrawal_player
    ON intents (player_id, created_at) WHERE ${WINDOW_SQL.withdrawals}`,
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An id as stored: a canonical (lowercase) UUID as its 16 bytes, any other string as itself. */
export function packId(value: string): string | Uint8Array {
  return UUID.test(value) ? Buffer.from(value.replaceAll('-', ''), 'hex') : value;
}

export function unpackId(value: string | Uint8Array): string {
  if (typeof value === 'string') return value;
  const hex = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A callback token as stored: base64url that round-trips as its bytes, else as itself. */
export function packToken(value: string): string | Uint8Array {
  if (value.length % 4 !== 0) return value;
  const bytes = Buffer.from(value, 'base64url');
  return bytes.toString('base64url') === value ? bytes : value;
}

function unpackToken(value: string | Uint8Array): string {
  if (typeof value === 'string') return value;
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64url');
}

/** An intent's row as every statement that reads one selects it: an array, cheaper than an object. */
const COLUMN_NAMES = [
  ...['seq', 'id', 'kind', 'status', 'room_id', 'player_id', 'amount', 'unit', 'description'],
  ...['remote_id', 'code', 'uri', 'callback_token', 'idempotency_key', 'open_key', 'group_id'],
  ...['expires_at', 'created_at', 'updated_at', 'next_check_at', 'checks', 'lease_owner'],
  ...['lease_until', 'error', 'meta'],
] as const;
export const COLUMN = Object.fromEntries(COLUMN_NAMES.map((c, i) => [c, i])) as Record<
  (typeof COLUMN_NAMES)[number],
  number
>;
export const COLUMNS = COLUMN_NAMES.join(', ');

/** One intent's row, in COLUMN's order. */
export type Row = readonly unknown[];

/** One row of `moves`, as MOVES_SQL reads it (an array, like Row). */
export type Move = readonly [step: number, at: number, note: string | null];

/** An intent's moves in step order, with their notes: `?` is the intent's seq. */
export const MOVES_SQL = `SELECT m.step, m.at, n.text AS note
  FROM moves AS m LEFT JOIN notes AS n ON n.id = m.note WHERE m.intent = ? ORDER BY m.step`;

/** An intent from its row (a joined one runs on) and its moves in step order. */
export function rowToIntent(row: Row, moves: readonly Move[]): Intent {
  // A history starts `creating`, unless held or queued (the steps below it).
  const first = moves[0]?.[0] ?? CREATING;
  const history: IntentHistoryEntry[] =
    first < CREATING ? [] : [{ at: row[COLUMN.created_at] as number, from: null, to: 'creating' }];
  for (const [step, at, note] of moves) {
    const entry: IntentHistoryEntry = {
      at,
      from: history.at(-1)?.to ?? null,
      to: STEPS[step] as IntentStatus,
    };
    if (note !== null) entry.note = note;
    history.push(entry);
  }
  const at = <T>(column: keyof typeof COLUMN) => row[COLUMN[column]] as T;
  const remote = at<string | Uint8Array | null>('remote_id');
  const token = at<string | Uint8Array | null>('callback_token');
  const meta = at<string | null>('meta');
  const uri = at<string | null>('uri');
  return {
    id: unpackId(at('id')),
    kind: at('kind'),
    status: at('status'),
    roomId: at('room_id'),
    playerId: at('player_id'),
    amount: at('amount'),
    unit: at('unit'),
    description: at('description'),
    remoteId: remote === null ? null : unpackId(remote),
    code: at('code'),
    uri: uri === '' ? `lightning:${at('code')}` : uri,
    callbackToken: token === null ? null : unpackToken(token),
    idempotencyKey: at('idempotency_key'),
    openKey: at('open_key'),
    groupId: at('group_id'),
    expiresAt: at('expires_at'),
    createdAt: at('created_at'),
    updatedAt: at('updated_at'),
    nextCheckAt: at('next_check_at'),
    checks: at('checks'),
    leaseOwner: at('lease_owner'),
    leaseUntil: at('lease_until'),
    error: at('error'),
    meta: meta === null ? {} : (JSON.parse(meta) as Record<string, unknown>),
    history,
  };
}

/** Where a `joinedSql` row's move columns are: after the intent's. */
const STEP = COLUMN_NAMES.length;

/** An intent and its moves in one statement, for joinedToIntent: `where` names the intent. */
export function joinedSql(where: string): string {
  const columns = COLUMN_NAMES.map((c) => `i.${c}`).join(', ');
  return `SELECT ${columns}, m.step, m.at, n.text FROM intents AS i
    LEFT JOIN moves AS m ON m.intent = i.seq LEFT JOIN notes AS n ON n.id = m.note
    WHERE ${where} ORDER BY m.step`;
}

/** An intent from the rows of `joinedSql`: one statement for an intent and its history. */
export function joinedToIntent(rows: readonly object[]): Intent | null {
  const first = rows[0] as Row | undefined;
  if (first === undefined) return null;
  const moves = (rows as Row[])
    .filter((r) => r[STEP] !== null)
    .map((r) => [r[STEP], r[STEP + 1], r[STEP + 2]] as Move);
  return rowToIntent(first, moves);
}

/** Refuses a file this library cannot read: a newer layout, a pre-release library's, another program's. */
function refuseForeign(db: DatabaseSync, path: string): number {
  const pragma = (name: string) =>
    Number(Object.values(db.prepare(`PRAGMA ${name}`).get() ?? {})[0]);
  const [id, version] = [pragma('application_id'), pragma('user_version')];
  if ((id === 0 && version === 0) || (id === LEDGER_ID && version <= LAYOUT)) return version;
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
 * file, then the migrations it lacks under the write lock (another process opening it at once
 * waits, then finds them done). `busyTimeoutMs` is SQLite's own wait for another process's lock.
 */
export function openLedgerDatabase(path: string, busyTimeoutMs: number): DatabaseSync {
  // Loaded here, not imported: an older Node then fails at the entry point's version check.
  const { DatabaseSync: Database } = process.getBuiltinModule('node:sqlite');
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    if (path !== ':memory:' && path !== '') {
      // WAL: readers never block the writer. FULL: under WAL, NORMAL may lose the last commits
      // on power loss, and an intent is written precisely to survive the call that follows it.
      db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL');
    }
    db.exec('BEGIN IMMEDIATE');
    try {
      for (let to = refuseForeign(db, path) + 1; to <= LAYOUT; to++) {
        db.exec(`${migration('sqlite', to)}; PRAGMA user_version = ${to}`);
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
