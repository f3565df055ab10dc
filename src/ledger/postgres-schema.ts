/**
 * The SQL behind PostgresLedger: the tables and indexes of one ledger in its own PostgreSQL
 * schema (namespace), the migrations that build them, and the column list every read returns.
 * No I/O here: postgres.ts runs these strings. Every table name is qualified with the quoted
 * schema, so nothing depends on the connection's search_path.
 *
 * Layout (S = the schema):
 *   S.schema_version  one row: the layout version, read and written under an advisory lock
 *   S.intents         one row per intent; `seq` (identity) is insertion order, the last tie-break
 *   S.events          webhook event ids already seen, forgotten after a week
 *
 * Amounts are `numeric` (exact at any size, summed exactly for budgets, returned as text);
 * times are epoch ms in `bigint`; `meta` is `json` (kept as written), `history` is `jsonb`
 * (appended to by each move).
 */
import { INTENT_KINDS, INTENT_STATUSES, OPEN_STATUSES, PAYOUT_KINDS } from './intent.js';

/** Bumped whenever the layout changes; an older library refuses a newer schema. */
export const SCHEMA_VERSION = 2;

/** A PostgreSQL identifier we create ourselves: letters, digits, underscores, at most 63 bytes. */
export const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

const list = (values: readonly string[]): string => values.map((v) => `'${v}'`).join(', ');

// Constants, not input: safe to inline, and a partial index serves only queries that repeat
// its WHERE term, which they do by using this same text.
export const OPEN_SQL = `status IN (${list(OPEN_STATUSES)})`;
/** Payouts (rewards, address payments): what the budget windows count. */
export const PAYOUT_SQL = `kind IN (${list(PAYOUT_KINDS)})`;

/**
 * What every read and every RETURNING yields, in the shape `toIntent` reads. Amounts, meta and
 * history come back as text, so a pool whose type parsers were changed globally (numeric as
 * float, say) cannot bend them.
 */
export const COLUMNS = `id, kind, status, room_id, player_id, amount::text AS amount, unit,
  description, remote_id, code, uri, callback_token, idempotency_key, open_key, group_id, expires_at,
  created_at, updated_at, next_check_at, checks, lease_owner, lease_until, error,
  meta::text AS meta, history::text AS history, seq`;

/**
 * MIGRATIONS[v] takes a schema from version v to v + 1 (version 0: nothing there yet). Each
 * runs inside the open's transaction, so a crash mid-way leaves the previous version intact.
 */
export function migrations(s: string): string[][] {
  return [
    [
      `CREATE TABLE IF NOT EXISTS ${s}.intents (
        seq             bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id              text    NOT NULL,
        kind            text    NOT NULL CHECK (kind IN (${list(INTENT_KINDS)})),
        status          text    NOT NULL CHECK (status IN (${list(INTENT_STATUSES)})),
        room_id         text,
        player_id       text    NOT NULL,
        amount          numeric NOT NULL CHECK (amount >= 0 AND amount = trunc(amount)),
        unit            text    NOT NULL,
        description     text    NOT NULL,
        remote_id       text,
        code            text,
        uri             text,
        callback_token  text,
        idempotency_key text,
        open_key        text,
        group_id        text,
        expires_at      bigint,
        created_at      bigint  NOT NULL,
        updated_at      bigint  NOT NULL,
        next_check_at   bigint,
        checks          bigint  NOT NULL,
        lease_owner     text,
        lease_until     bigint,
        error           text,
        meta            json    NOT NULL,
        history         jsonb   NOT NULL,
        CONSTRAINT intents_id UNIQUE (id)
      )`,
      // Unique among open intents only: a seat's fee may be charged again once the last ended.
      `CREATE UNIQUE INDEX IF NOT EXISTS intents_open_key
        ON ${s}.intents (open_key) WHERE open_key IS NOT NULL AND ${OPEN_SQL}`,
      `CREATE INDEX IF NOT EXISTS intents_group
        ON ${s}.intents (group_id, created_at, seq) WHERE group_id IS NOT NULL`,
      `CREATE UNIQUE INDEX IF NOT EXISTS intents_callback_token
        ON ${s}.intents (callback_token) WHERE callback_token IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS intents_remote
        ON ${s}.intents (kind, remote_id, created_at, seq) WHERE remote_id IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS intents_open_room
        ON ${s}.intents (room_id, created_at, seq) WHERE ${OPEN_SQL}`,
      `CREATE INDEX IF NOT EXISTS intents_open_player
        ON ${s}.intents (player_id, created_at, seq) WHERE ${OPEN_SQL}`,
      `CREATE INDEX IF NOT EXISTS intents_due
        ON ${s}.intents (next_check_at, created_at, seq)
        WHERE next_check_at IS NOT NULL AND ${OPEN_SQL}`,
      `CREATE INDEX IF NOT EXISTS intents_unknown
        ON ${s}.intents (created_at, seq) WHERE status = 'unknown'`,
      // The budget windows: who and when never change, so a move leaves these alone.
      `CREATE INDEX IF NOT EXISTS intents_payout_player
        ON ${s}.intents (player_id, created_at) WHERE ${PAYOUT_SQL}`,
      `CREATE INDEX IF NOT EXISTS intents_payout_room
        ON ${s}.intents (room_id, created_at) WHERE ${PAYOUT_SQL}`,
      `CREATE INDEX IF NOT EXISTS intents_payout_time
        ON ${s}.intents (created_at) WHERE ${PAYOUT_SQL}`,
      `CREATE TABLE IF NOT EXISTS ${s}.events (
        id      text   PRIMARY KEY,
        seen_at bigint NOT NULL
      )`,
      `CREATE INDEX IF NOT EXISTS events_seen ON ${s}.events (seen_at)`,
    ],
    // 1 -> 2: the token of the last write, so that a writer whose answer a dropped connection
    // lost can tell whether its own write committed (PostgresLedger.recover).
    [`ALTER TABLE ${s}.intents ADD COLUMN IF NOT EXISTS last_call text`],
  ];
}

/** The version table: created first, so that even version 0 can be recorded and read. */
export function versionTable(s: string): string {
  return `CREATE TABLE IF NOT EXISTS ${s}.schema_version (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    version  integer NOT NULL
  )`;
}
