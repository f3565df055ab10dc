/**
 * The SQL PostgresLedger runs: the statements that journal a write and page the journal, the
 * rate bucket's, and the column lists every read returns. Its tables are sql/postgres/
 * (migrations/, and schema.sql to read), which `layoutSql` hands over for a schema. No I/O
 * here: postgres.ts runs these strings. Every table name is qualified with the quoted schema,
 * so nothing depends on the connection's search_path.
 *
 * Why journaled writes need no lock held to COMMIT:
 *
 * - Order. An entry records its transaction's id (`pg_current_xact_id()`), and pages list
 *   entries by (xid, seq) only below a horizon: every transaction whose id is under it has
 *   ended, and every one that may still write has an id at or above it, so what a page lists is
 *   a prefix of the order for good and a reader paging by `after` never passes over an entry.
 *   The horizon is the reader's snapshot's xmin, unless entries it can see wait above it: then
 *   the lowest id, of those the snapshot saw running, that still runs and holds a journal
 *   writer's lock or has ended since the snapshot (`journalPage`). Every write that journals
 *   takes that lock (`pg_advisory_xact_lock(key, hashtext(intent id))`) before its first row
 *   gets a transaction id, so a transaction that runs without it journals nothing: another
 *   application's long transaction, or an autovacuum's, holds nothing back, and a write is
 *   listed once it commits unless an older journaled write is still in flight (a few ms; one
 *   blocked behind an operator's row lock holds the journal's tail until it ends, as it must).
 *   The xmin alone would be as sound, but any transaction with an id anywhere in the cluster
 *   (another database's, a session left idle in a transaction) would hold every page back for
 *   as long as it stays open, and a reader right after its own write could miss it.
 *   The same lock, exclusive per intent, orders one intent's writes: the second takes its
 *   transaction id only once the first has committed, so an intent's entries are listed in the
 *   order its moves were made. Entries of writes that ran at once are listed in the order their
 *   transactions took ids, so seq may step back within a page; a cursor is an entry's seq, and
 *   the page after it starts past that entry's (xid, seq).
 * - Balances. A write adds its deltas to the shard `pg_backend_pid() % BALANCE_SHARDS` of each
 *   house account (a connection writes its own rows), one shard for other accounts, in (account,
 *   unit) order, so two writes never wait on each other in opposite orders. A balance
 *   stays within 64 bits by quotas: each shard row holds `lim`, its share of 2^63 - 1, and the
 *   shares of an account sum to no more (`balances_within` checks a row against its own), so
 *   shards that each keep to their share never sum past it. A write that would take a shard past
 *   its share is made again on the exact path (postgres.ts): all the account's shard rows locked
 *   in order, their sum checked whole, and the total and the shares dealt out afresh.
 *
 * What that costs: a journaled write takes one more advisory lock (its intent's); a balance
 * read sums up to BALANCE_SHARDS rows per house account; a journal page reads pg_locks (the
 * whole lock table, briefly) only when entries it can see wait above its snapshot's xmin.

 */
import { OPEN_STATUSES, PAYOUT_KINDS } from './intent.js';
import { layoutOf, migration } from './layout.js';

/** The layout this library writes and reads (the schema's `layout` row). */
export const LAYOUT = layoutOf('postgres');

/**
 * Migration `to` of the layout for the quoted schema `s`: the file names the default schema,
 * `"lightning"`, wherever a name is qualified, function bodies included.
 */
export function layoutSql(s: string, to: number): string {
  return migration('postgres', to).replaceAll('"lightning".', `${s}.`);
}

/** A PostgreSQL identifier we create ourselves: letters, digits, underscores, at most 63 bytes. */
export const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

const list = (values: readonly string[]): string => values.map((v) => `'${v}'`).join(', ');

/**
 * Rows per house account in `balances`. Part of the layout: the shares of 2^63 - 1 (`lim`) are
 * dealt for this many rows, so changing it takes a migration.
 */
export const BALANCE_SHARDS = 16;

/** The classes whose accounts nearly every write names, so each is spread over shards. */
export const SHARDED_CLASSES = ['wallet', 'inflight', 'house'] as const;

/** The largest balance (2^63 - 1), inlined as SQL. */
const MAX = '9223372036854775807';
/** A new shard row's share of MAX: BALANCE_SHARDS of them sum to no more. */
const SHARE = String((2n ** 63n - 1n) / BigInt(BALANCE_SHARDS));
const SHARDED_SQL = (cls: string) => `${cls} IN (${list(SHARDED_CLASSES)})`;

/**
 * Each shard row's share (`lim`) once an account's total `total` (numeric) sits in shard 0:
 * the other rows get an equal part of what the total leaves, shard 0 the rest. An account with
 * one row keeps the whole range.
 */
const shareOf = (total: string, shard: string, cls: string) => `CASE
    WHEN NOT ${SHARDED_SQL(cls)} THEN ${MAX}
    WHEN ${shard} = 0 THEN ${MAX} - ${BALANCE_SHARDS - 1} * div(${MAX} - least(abs(${total}), ${MAX}), ${BALANCE_SHARDS})
    ELSE div(${MAX} - least(abs(${total}), ${MAX}), ${BALANCE_SHARDS}) END::bigint`;

// Constants, not input: safe to inline. A partial index serves only queries that repeat its
// WHERE term: the layout's indexes name these same lists (test/ledger/layout.test.ts).
export const OPEN_SQL = `status IN (${list(OPEN_STATUSES)})`;
/** Payouts (rewards, address payments): what the budget windows count. */
export const PAYOUT_SQL = `kind IN (${list(PAYOUT_KINDS)})`;

/**
 * How many rows of S.open_count take the opens (0 to 15) and, as many again, the ends (16 to
 * 31): a write takes the row of its backend (`pg_backend_pid()`), so writes on different
 * connections rarely wait for one another. Part of the layout, as BALANCE_SHARDS.
 */
export const OPEN_STRIPES = 16;

/** The game's open intents, matches aside: the sum of S.open_count. */
export const OPEN_COUNT_SQL = (s: string) => `SELECT sum(n)::bigint AS open FROM ${s}.open_count`;

/**
 * What a create near the game's cap runs after its own insert, holding the store's count lock
 * (so such creates run one at a time): every row that takes opens, in order. It waits for every
 * create in flight to commit, and none can start until it ends, so the count it reads is exact.
 * After the insert, not before: the insert takes the journal writer's lock before its
 * transaction gets an id, which these row locks would give it first. No deadlock: a create in
 * flight holds only its own row and its own shard of each house balance, and waits for nothing
 * this one holds but a row of the same backend number, which it then does not hold itself.
 */
export const EXACT_COUNT_LOCKS = (s: string) =>
  `SELECT stripe FROM ${s}.open_count WHERE stripe < ${OPEN_STRIPES} ORDER BY stripe FOR UPDATE`;

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
 * A take from the game's bucket (rate.ts, takeFrom) in one statement: the row read under its
 * lock and refilled, written only when a token is taken. $1 now, $2 perSecond, $3 burst, $4 keep;
 * answers `wait`: 0 (taken) or the ms to wait.
 */
export function rateTake(s: string): string {
  return `WITH c AS (
      SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now
    ), o AS (
      SELECT hold, at, c.now,
        least($2::float8, tokens + greatest(0, c.now - at) * $1::float8 / 1000) AS t
      FROM ${s}.rate, c WHERE id = 1 FOR UPDATE OF rate
    ), taken AS (
      UPDATE ${s}.rate AS r SET tokens = o.t - 1, at = greatest(o.at, o.now)
      FROM o WHERE r.id = 1 AND o.now >= o.hold AND o.t >= 1 + $3::int
      RETURNING 1
    )
    SELECT (CASE WHEN now < hold THEN hold - now
      WHEN t >= 1 + $3::int THEN 0
      ELSE greatest(1, ceil((1 + $3::int - t) * 1000 / $1::float8))::bigint END)::text AS wait
    FROM o`;
}

/**
 * A hold of $1 ms from the database's now (a 429's Retry-After), unless a later one is in
 * force (rate.ts, holdBucket).
 */
export function rateHold(s: string): string {
  return `WITH h AS (
      SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint + $1::bigint AS until
    )
    UPDATE ${s}.rate SET hold = h.until, tokens = 0, at = greatest(at, h.until)
    FROM h WHERE id = 1 AND hold < h.until`;
}

/** The columns of an operator log line, in the shape `toLine` (postgres.ts) reads. */
export const LINE_COLUMNS = `seq::text AS seq, at::text AS at, by, action, intent_id, player_id,
  before, after, note`;

/** The columns of a journal entry, in the shape `rowToEntry` reads (64-bit values as text). */
export const ENTRY_COLUMNS = `seq::text AS seq, id, intent_id, player_id, match_id, debit, credit,
  amount::text AS amount, unit, why, at::text AS at`;

/** An entry row's columns, in the order `postingRows` yields them. */
const ENTRY_INSERT =
  'xid, id, intent_id, player_id, match_id, debit, credit, amount, unit, why, at';

/**
 * The postings at parameters $first to $first+6 (tags, debits, credits, amounts, units, whys,
 * as arrays in order, then the write's time) as entry rows of the intent whose id, player and
 * group are the SQL expressions given, stamped with this transaction's id.
 */
function postingRows(first: number, id: string, player: string, group: string, from: string) {
  const arg = (i: number) => `$${first + i}`;
  return `SELECT pg_current_xact_id(), ${id} || ':' || p.tag, ${id}, ${player}, ${group}, p.debit,
      p.credit, p.amount, p.unit, p.why, ${arg(6)}::bigint
    FROM ${from}unnest(${arg(0)}::text[], ${arg(1)}::text[], ${arg(2)}::text[], ${arg(3)}::bigint[],
      ${arg(4)}::text[], ${arg(5)}::text[]) WITH ORDINALITY AS p(tag, debit, credit, amount, unit, why, ord)
    ORDER BY p.ord`;
}

/** Each account's and unit's delta (numeric) from the rows of the CTE `entries`. */
const DELTAS = `SELECT account, unit, sum(delta) AS delta
    FROM (SELECT debit AS account, unit, -amount AS delta FROM entries
          UNION ALL SELECT credit, unit, amount FROM entries) AS d
    GROUP BY account, unit`;

/**
 * The postings of a write, journaled in the same statement as the write and only from the rows
 * it wrote: `write` is an INSERT or UPDATE of one intent that returns COLUMNS, `ctes` the CTEs it
 * reads (one of them takes the journal writer's lock, `writerLock`, before the write gives the
 * transaction its id), and parameters $first to $first+6 are the postings (`postingRows`).
 *
 * - An entry id already in the journal breaks its primary key: the statement fails whole,
 *   intent write included (the caller answers null).
 * - Balances are upserted in (account, unit) order, each once per write (deltas summed first),
 *   into this connection's shard of a house account, so two writes never lock two balance rows
 *   in opposite orders and writes on other connections rarely share one. A row taken past its
 *   share breaks `balances_within` (or bigint's range): the statement fails whole, and the
 *   caller makes the write again on the exact path (`lockBalances`, `journalExactly`).
 *
 * `after`: one more CTE, which may read `written` (a move's `dueAlso`).
 */
export function journaled(
  s: string,
  ctes: string,
  write: string,
  first: number,
  after?: string,
): string {
  return `WITH ${ctes},
    written AS (${write}),
    entries AS (
      INSERT INTO ${s}.journal (${ENTRY_INSERT})
      ${postingRows(first, 'w.id', 'w.player_id', 'w.group_id', 'written w CROSS JOIN ')}
      RETURNING debit, credit, amount, unit),
    balanced AS (
      INSERT INTO ${s}.balances AS b (account, unit, shard, class, balance, lim)
      SELECT account, unit,
        CASE WHEN ${SHARDED_SQL("split_part(account, ':', 1)")}
          THEN pg_backend_pid() % ${BALANCE_SHARDS} ELSE 0 END,
        split_part(account, ':', 1), delta::bigint,
        CASE WHEN ${SHARDED_SQL("split_part(account, ':', 1)")} THEN ${SHARE} ELSE ${MAX} END
      FROM (${DELTAS}) AS d
      ORDER BY account, unit
      ON CONFLICT (account, unit, shard) DO UPDATE SET balance = b.balance + EXCLUDED.balance)${
        after === undefined
          ? ''
          : `,
    ${after}`
      }
    SELECT * FROM written`;
}

/**
 * The journal writer's lock of the intent whose id is parameter $1 (an expression for a CTE
 * that the write reads, so that it is held before the write's first row takes a transaction
 * id). `key` is the store's own (a non-negative 32-bit number): with the intent's hash, a
 * two-part advisory lock, which pg_locks shows with objsubid 2 and classid = key.
 */
export function writerLock(key: number): string {
  return `pg_advisory_xact_lock(${key}, hashtext($1::text))`;
}

/**
 * The exact path, first step (after the intent's own write, in the same transaction): locks
 * every balance row the postings name, each of a house account's BALANCE_SHARDS rows, creating
 * those missing, in (account, unit, shard) order: the order the fast path locks them in, so the
 * two paths never wait on each other crosswise. $1 and $2: the accounts and units (arrays).
 */
export function lockBalances(s: string): string {
  const sharded = SHARDED_SQL('a.class');
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
 * The exact path, second step, under the locks of `lockBalances`: journals the postings
 * (parameters $4 to $10, as `postingRows`) of intent $1 (player $2, group $3) and sets each
 * account it names to its whole total, checked against 64 bits at once (a total past them fails
 * the statement, and the transaction, with numeric_value_out_of_range), in shard 0, its shares
 * dealt afresh (`shareOf`).
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
 * A page of the journal: entries after the cursor $1 (an entry's seq: the page resumes past
 * the (xid, seq) of the entry with the largest seq up to it), matching `filters` (SQL terms on
 * `j`), below the horizon, in (xid, seq) order, at most $2. `writers` is the journal writer's
 * lock key (`writerLock`).
 *
 * The horizon (see the header): its snapshot's xmin, when no entry it can see waits above it;
 * else the lowest id among those its snapshot saw running that is still running under the
 * journal writer's lock, or has ended since (`pg_locks` is read once, after the snapshot, so
 * "running" and "holds the lock" are read together: a writer takes the lock before its id, and
 * PostgreSQL drops it only after the id's own lock), or the snapshot's xmax.
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
