/**
 * The SQL PostgresLedger builds rather than loads (the journal's CTEs and pages, the columns
 * every read returns) and what reads its rows back; every table qualified with the schema.
 *
 * Why journaled writes hold no lock to COMMIT:
 * - Order. Pages list entries by (xid, seq) only below a horizon under which every transaction
 *   has ended, so paging by `after` never passes over one: the snapshot's xmin, or the lowest id
 *   it saw running that still holds a journal writer's lock (`writerLock`, taken by every write
 *   that journals before its first row gets an id) or has ended since (`journalPage`).
 * - Balances. A write adds its deltas to its backend's shard of each house account, in (account,
 *   unit) order, so writes never wait on each other crosswise. Each shard holds `lim`, its share
 *   of 2^63 - 1; a write that would pass one runs again on the exact path (postgres.ts): every
 *   shard locked, the total checked whole and the shares dealt afresh.
 */
import type { Intent, IntentHistoryEntry } from './intent.js';
import { OPEN_STATUSES } from './intent.js';
import { HOUSE_CLASSES, type JournalEntry } from './journal.js';
import { layoutOf, migration, sqlList, WINDOW_SQL } from './sql.js';

/** The layout this library writes and reads (the schema's `layout` row). */
export const LAYOUT = layoutOf('postgres');

/** Migration `to` for the quoted schema `s` (the file names the schema "lightning"). */
export function layoutSql(s: string, to: number): string {
  return migration('postgres', to).replaceAll('"lightning".', `${s}.`);
}

/** A schema name: letters, digits, underscores, at most 63 bytes. */
export const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Rows per house account in `balances` (part of the layout). */
export const BALANCE_SHARDS = 16;
/** Rows of open_count that take the opens, and as many the ends (part of the layout). */
export const OPEN_STRIPES = 16;

/** The largest balance (2^63 - 1), and a new shard row's share of it. */
const MAX = '9223372036854775807';
const SHARE = String((2n ** 63n - 1n) / BigInt(BALANCE_SHARDS));
/** Whether `cls` is a house class, whose accounts are spread over shards. */
const SHARDED = (cls: string) => `${cls} IN (${sqlList(HOUSE_CLASSES)})`;

/** Each shard's share once the account's total sits in shard 0: the rest get equal parts. */
const shareOf = (total: string, shard: string, cls: string) => `CASE
    WHEN NOT ${SHARDED(cls)} THEN ${MAX}
    WHEN ${shard} = 0 THEN ${MAX} - ${BALANCE_SHARDS - 1} * div(${MAX} - least(abs(${total}), ${MAX}), ${BALANCE_SHARDS})
    ELSE div(${MAX} - least(abs(${total}), ${MAX}), ${BALANCE_SHARDS}) END::bigint`;

// A partial index serves only queries that repeat its WHERE term: the layout's indexes name
// these same lists (test/ledger/layout.test.ts).
export const OPEN_SQL = `status IN (${sqlList(OPEN_STATUSES)})`;
export const PAYOUT_SQL = WINDOW_SQL.payouts;
export { WINDOW_SQL };

/** What every read and RETURNING yields; amounts, meta and history as text, whatever the parsers. */
export const COLUMNS = `id, kind, status, room_id, player_id, amount::text AS amount, unit,
  description, remote_id, code, uri, callback_token, idempotency_key, open_key, group_id, expires_at,
  created_at, updated_at, next_check_at, checks, lease_owner, lease_until, error,
  meta::text AS meta, history::text AS history, seq`;

/** The columns of an operator log line, as `lineOf` reads them. */
export const LINE_COLUMNS = `seq::text AS seq, at::text AS at, by, action, intent_id, player_id,
  before, after, note`;

/** A journal entry's columns, under its fields' names; seq and at as text, read by rowToEntry. */
const ENTRY_COLUMNS = `id, seq::text AS seq, intent_id AS "intentId", player_id AS "playerId",
  match_id AS "matchId", debit, credit, amount::text AS amount, unit, why, at::text AS at`;
const ENTRY_INSERT =
  'xid, id, intent_id, player_id, match_id, debit, credit, amount, unit, why, at';

/** An intent from its row (64-bit integers come as text). */
export function rowToIntent(value: unknown): Intent {
  const r = value as Record<string, string | null>;
  const num = (key: string) => (r[key] === null ? null : Number(r[key]));
  return {
    id: r.id as string,
    kind: r.kind as Intent['kind'],
    status: r.status as Intent['status'],
    roomId: r.room_id as string | null,
    playerId: r.player_id as string,
    amount: r.amount as string,
    unit: r.unit as string,
    description: r.description as string,
    remoteId: r.remote_id as string | null,
    code: r.code as string | null,
    uri: r.uri as string | null,
    callbackToken: r.callback_token as string | null,
    idempotencyKey: r.idempotency_key as string | null,
    openKey: r.open_key as string | null,
    groupId: r.group_id as string | null,
    expiresAt: num('expires_at'),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    nextCheckAt: num('next_check_at'),
    checks: Number(r.checks),
    leaseOwner: r.lease_owner as string | null,
    leaseUntil: num('lease_until'),
    error: r.error as string | null,
    meta: JSON.parse(r.meta as string) as Record<string, unknown>,
    history: JSON.parse(r.history as string) as IntentHistoryEntry[],
  };
}

export function rowToEntry(value: unknown): JournalEntry {
  const r = value as Omit<JournalEntry, 'seq' | 'at' | 'tag'> & { seq: string; at: string };
  const tag = r.id.slice(r.intentId.length + 1);
  return { ...r, seq: Number(r.seq), tag, at: Number(r.at) };
}

/** The postings at $first to $first+6 (six arrays, then the time) as an intent's entry rows. */
function postingRows(first: number, id: string, player: string, group: string, from: string) {
  const arg = (i: number) => `$${first + i}`;
  return `SELECT pg_current_xact_id(), ${id} || ':' || p.tag, ${id}, ${player}, ${group}, p.debit,
      p.credit, p.amount, p.unit, p.why, ${arg(6)}::bigint
    FROM ${from}unnest(${arg(0)}::text[], ${arg(1)}::text[], ${arg(2)}::text[], ${arg(3)}::bigint[],
      ${arg(4)}::text[], ${arg(5)}::text[]) WITH ORDINALITY AS p(tag, debit, credit, amount, unit, why, ord)
    ORDER BY p.ord`;
}

/** Each account's and unit's delta from the rows of the CTE `entries`. */
const DELTAS = `SELECT account, unit, sum(delta) AS delta
    FROM (SELECT debit AS account, unit, -amount AS delta FROM entries
          UNION ALL SELECT credit, unit, amount FROM entries) AS d
    GROUP BY account, unit`;

/**
 * A write of one intent (returning COLUMNS, reading `ctes`, which take the journal writer's lock)
 * with its postings at $first to $first+6, in one statement: an entry already journaled or a
 * shard past its share fails it whole. `after`: one more CTE, which may read `written`.
 */
export function journaled(
  s: string,
  ctes: string,
  write: string,
  first: number,
  after?: string,
): string {
  const cls = "split_part(account, ':', 1)";
  return `WITH ${ctes},
    written AS (${write}),
    entries AS (
      INSERT INTO ${s}.journal (${ENTRY_INSERT})
      ${postingRows(first, 'w.id', 'w.player_id', 'w.group_id', 'written w CROSS JOIN ')}
      RETURNING debit, credit, amount, unit),
    balanced AS (
      INSERT INTO ${s}.balances AS b (account, unit, shard, class, balance, lim)
      SELECT account, unit, CASE WHEN ${SHARDED(cls)} THEN pg_backend_pid() % ${BALANCE_SHARDS} ELSE 0 END,
        ${cls}, delta::bigint, CASE WHEN ${SHARDED(cls)} THEN ${SHARE} ELSE ${MAX} END
      FROM (${DELTAS}) AS d
      ORDER BY account, unit
      ON CONFLICT (account, unit, shard) DO UPDATE SET balance = b.balance + EXCLUDED.balance)${
        after === undefined ? '' : `,\n    ${after}`
      }
    SELECT * FROM written`;
}

/** The journal writer's lock of the intent $1: pg_locks shows it with objsubid 2, classid `key`. */
export function writerLock(key: number): string {
  return `pg_advisory_xact_lock(${key}, hashtext($1::text))`;
}

/** The exact path, first: locks every balance row ($1 accounts, $2 units), every shard, in order. */
export function lockBalances(s: string): string {
  const sharded = SHARDED('a.class');
  return `INSERT INTO ${s}.balances AS b (account, unit, shard, class, balance, lim)
    SELECT a.account, a.unit, g.shard, a.class, 0, CASE WHEN ${sharded} THEN ${SHARE} ELSE ${MAX} END
    FROM (SELECT DISTINCT p.account, p.unit, split_part(p.account, ':', 1) AS class
          FROM unnest($1::text[], $2::text[]) AS p(account, unit)) AS a
      CROSS JOIN LATERAL generate_series(0, CASE WHEN ${sharded} THEN ${BALANCE_SHARDS - 1} ELSE 0 END)
        AS g(shard)
    ORDER BY a.account, a.unit, g.shard
    ON CONFLICT (account, unit, shard) DO UPDATE SET balance = b.balance`;
}

/**
 * The exact path, then: journals the postings ($4 to $10) of intent $1 (player $2, group $3) and
 * puts each account's whole total in shard 0 (past 64 bits it fails), its shares dealt afresh.
 */
export function journalExactly(s: string): string {
  return `WITH entries AS (
      INSERT INTO ${s}.journal (${ENTRY_INSERT})
      ${postingRows(4, '$1::text', '$2::text', '$3::text', '')}
      RETURNING debit, credit, amount, unit),
    totals AS (
      SELECT d.account, d.unit, d.delta + (SELECT COALESCE(sum(z.balance), 0) FROM ${s}.balances z
        WHERE z.account = d.account AND z.unit = d.unit) AS total
      FROM (${DELTAS}) AS d)
    UPDATE ${s}.balances AS b
    SET balance = (CASE WHEN b.shard = 0 THEN t.total ELSE 0 END)::bigint,
      lim = ${shareOf('t.total', 'b.shard', 'b.class')}
    FROM totals t
    WHERE b.account = t.account AND b.unit = t.unit`;
}

/**
 * A page of the journal: at most $2 entries after the cursor $1, matching `filters`, below the
 * horizon (pg_locks read once, after the snapshot), in (xid, seq) order.
 */
export function journalPage(s: string, filters: readonly string[], writers: number): string {
  // Each part is computed once (an InitPlan), so that the page is a range scan of an index.
  return `WITH snap AS MATERIALIZED (SELECT pg_current_snapshot() AS s),
    held AS MATERIALIZED (
      SELECT locktype, transactionid, pid, classid, objsubid, database, mode, granted
      FROM pg_catalog.pg_locks WHERE locktype IN ('transactionid', 'advisory')),
    horizon AS MATERIALIZED (
      SELECT CASE
        WHEN COALESCE((SELECT xid FROM ${s}.journal ORDER BY xid DESC LIMIT 1), '0'::xid8)
             < (SELECT pg_snapshot_xmin(s) FROM snap)
          THEN (SELECT pg_snapshot_xmin(s) FROM snap)
        ELSE (SELECT least(pg_snapshot_xmax(s), (
          SELECT min(x) FROM pg_snapshot_xip(s) AS x
          WHERE NOT EXISTS (
            SELECT 1 FROM held t
            WHERE t.locktype = 'transactionid' AND t.mode = 'ExclusiveLock' AND t.granted
              AND t.transactionid = xid(x)
              AND NOT EXISTS (
                SELECT 1 FROM held w
                WHERE w.locktype = 'advisory' AND w.pid = t.pid AND w.objsubid = 2
                  AND w.classid = ${writers}::oid
                  AND w.database = (SELECT oid FROM pg_catalog.pg_database
                                    WHERE datname = current_database())))))
          FROM snap)
        END AS h),
    cursor AS MATERIALIZED (
      SELECT COALESCE((SELECT xid FROM ${s}.journal WHERE seq <= $1::bigint
                       ORDER BY seq DESC LIMIT 1), '0'::xid8) AS xid)
    SELECT ${ENTRY_COLUMNS} FROM ${s}.journal AS j
    WHERE (j.xid, j.seq) > ((SELECT xid FROM cursor), $1::bigint)
      AND j.xid < (SELECT h FROM horizon)${filters.map((f) => ` AND ${f}`).join('')}
    ORDER BY j.xid, j.seq LIMIT $2`;
}
