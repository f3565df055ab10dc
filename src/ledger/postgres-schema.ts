/**
 * The SQL behind PostgresLedger: the tables and indexes of one ledger in its own PostgreSQL
 * schema (namespace), the migrations that build them, and the column list every read returns.
 * No I/O here: postgres.ts runs these strings. Every table name is qualified with the quoted
 * schema, so nothing depends on the connection's search_path.
 *
 * Layout (S = the schema):
 *   S.schema_version  one row: the layout version, read and written under an advisory lock
 *   S.intents         one row per intent; `seq` (identity) is insertion order, the last tie-break
 *   S.events          event ids already seen (webhooks, once-markers), kept for good
 *   S.journal         one row per posting (entry), never changed; `seq` (identity) is its order
 *   S.balances        one row per account and unit that ever moved: credits minus debits, with
 *                     the account's class, so that class totals are a GROUP BY of this table
 *   S.open_count      32 rows whose sum is the number of open intents, matches aside (the
 *                     game's cap, maxOpenPerGame), kept by triggers on S.intents (version 5)
 *
 * Intent amounts are `numeric` (exact at any size, summed exactly for budgets, returned as
 * text); journal amounts and balances are `bigint` (the journal's signed 64-bit promise: a write
 * that would pass it fails whole); times are epoch ms in `bigint`; `meta` is `json` (kept as
 * written), `history` is `jsonb` (appended to by each move).
 *
 * An event id is one row of `events` and one entry of its primary key: a webhook's (`ramp:` and
 * a 43-character hash) takes about 200 bytes (table and index pages together, measured over
 * 100,000 of them), a million of them about 200 MB. Nothing purges them (LedgerStore.recordEvent
 * keeps ids for good).
 */
import { INTENT_KINDS, INTENT_STATUSES, OPEN_STATUSES, PAYOUT_KINDS } from './intent.js';

/** Bumped whenever the layout changes; an older library refuses a newer schema. */
export const SCHEMA_VERSION = 5;

/** The version whose migration writes the opening entries of the intents already there. */
export const JOURNAL_VERSION = 3;

/** A PostgreSQL identifier we create ourselves: letters, digits, underscores, at most 63 bytes. */
export const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

const list = (values: readonly string[]): string => values.map((v) => `'${v}'`).join(', ');

// Constants, not input: safe to inline, and a partial index serves only queries that repeat
// its WHERE term, which they do by using this same text.
export const OPEN_SQL = `status IN (${list(OPEN_STATUSES)})`;
/** Payouts (rewards, address payments): what the budget windows count. */
export const PAYOUT_SQL = `kind IN (${list(PAYOUT_KINDS)})`;

/**
 * How many rows of S.open_count take the opens (0 to 15) and, as many again, the ends (16 to
 * 31): a write takes the row of its backend (`pg_backend_pid()`), so writes on different
 * connections rarely wait for one another.
 */
export const OPEN_STRIPES = 16;

/** Whether the row (`NEW` or `OLD`) is an open intent that the game's cap counts. */
const counted = (row: 'NEW' | 'OLD') =>
  `(${row}.kind <> 'match' AND ${row}.status IN (${list(OPEN_STATUSES)}))`;

/** The game's open intents, matches aside: the sum of S.open_count. */
export const OPEN_COUNT_SQL = (s: string) => `SELECT sum(n)::bigint AS open FROM ${s}.open_count`;

/**
 * What a create near the game's cap runs before anything else, after its advisory locks: the
 * journal lock, then every row that takes opens, in order. It then waits for every create in
 * flight to commit, and none can start until it ends, so the count it reads is exact. The
 * journal lock first, because a create's own row is taken after its journal entries (the trigger
 * runs at the end of the insert): holding the rows, it could otherwise wait for a create that
 * waits for them.
 */
export const EXACT_COUNT_LOCKS = (s: string, journalLock: string) =>
  `SELECT pg_advisory_xact_lock(${journalLock});
  SELECT stripe FROM ${s}.open_count WHERE stripe < ${OPEN_STRIPES} ORDER BY stripe FOR UPDATE`;

/**
 * The count behind the game's cap (version 5), kept by the intents table itself in the
 * transaction of the write that opens or ends an intent: an insert of an open intent adds one
 * to the opening rows, a move that ends one (or a delete of an open one) takes one from the
 * ending rows, each on the row of its backend. The sum of all 32 is the count.
 *
 * A create holds its row from its insert to its COMMIT, so at most 15 other creates are in
 * flight (not yet counted in what it reads) while it holds it: a create that reads a count of
 * at most cap - 15 (itself included) is admitted at once, in parallel with the others. Nearer
 * the cap it takes EXACT_COUNT_LOCKS, reads again and is admitted only if the count is within
 * the cap: near the cap, creates commit one at a time. An end not yet committed is not seen,
 * which can only refuse early, never admit one too many. The WHEN clauses keep every other
 * write (a lease, a move between open statuses) from calling the function at all.
 */
function openCount(s: string): string[] {
  const name = (n: string) => `${s}.${n}`;
  const stripes = 2 * OPEN_STRIPES;
  return [
    `CREATE TABLE IF NOT EXISTS ${name('open_count')} (
      stripe smallint PRIMARY KEY CHECK (stripe BETWEEN 0 AND ${stripes - 1}),
      n      bigint   NOT NULL
    )`,
    `CREATE OR REPLACE FUNCTION ${name('count_open')}() RETURNS trigger
      LANGUAGE plpgsql AS $fn$
      DECLARE
        d integer := 0;
      BEGIN
        -- OLD is not there for an INSERT, nor NEW for a DELETE: each is read only when it is.
        IF TG_OP <> 'INSERT' THEN
          IF ${counted('OLD')} THEN d := d - 1; END IF;
        END IF;
        IF TG_OP <> 'DELETE' THEN
          IF ${counted('NEW')} THEN d := d + 1; END IF;
        END IF;
        IF d > 0 THEN
          UPDATE ${name('open_count')} SET n = n + d
            WHERE stripe = pg_backend_pid() % ${OPEN_STRIPES};
        ELSIF d < 0 THEN
          UPDATE ${name('open_count')} SET n = n + d
            WHERE stripe = ${OPEN_STRIPES} + pg_backend_pid() % ${OPEN_STRIPES};
        END IF;
        RETURN NULL;
      END
      $fn$`,
    `DROP TRIGGER IF EXISTS intents_count_insert ON ${name('intents')}`,
    `CREATE TRIGGER intents_count_insert AFTER INSERT ON ${name('intents')}
      FOR EACH ROW WHEN ${counted('NEW')} EXECUTE FUNCTION ${name('count_open')}()`,
    `DROP TRIGGER IF EXISTS intents_count_update ON ${name('intents')}`,
    `CREATE TRIGGER intents_count_update AFTER UPDATE OF status, kind ON ${name('intents')}
      FOR EACH ROW WHEN (${counted('OLD')} IS DISTINCT FROM ${counted('NEW')})
      EXECUTE FUNCTION ${name('count_open')}()`,
    `DROP TRIGGER IF EXISTS intents_count_delete ON ${name('intents')}`,
    `CREATE TRIGGER intents_count_delete AFTER DELETE ON ${name('intents')}
      FOR EACH ROW WHEN ${counted('OLD')} EXECUTE FUNCTION ${name('count_open')}()`,
    // After the triggers: CREATE TRIGGER holds off every write to the table until this
    // transaction ends, so no intent opens or ends between this count and them.
    `INSERT INTO ${name('open_count')} (stripe, n)
      SELECT g, CASE WHEN g = 0 THEN (SELECT count(*) FROM ${name('intents')}
        WHERE kind <> 'match' AND ${OPEN_SQL}) ELSE 0 END
      FROM generate_series(0, ${stripes - 1}) AS g
      ON CONFLICT (stripe) DO NOTHING`,
  ];
}

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
    ],
    // 1 -> 2: the token of the last write, so that a writer whose answer a dropped connection
    // lost can tell whether its own write committed (PostgresLedger.recover).
    [`ALTER TABLE ${s}.intents ADD COLUMN IF NOT EXISTS last_call text`],
    // 2 -> 3: the journal and its balances. postgres.ts then writes the opening entries of the
    // intents already there (openingPostings), in the same transaction.
    [
      `CREATE TABLE IF NOT EXISTS ${s}.journal (
        seq       bigint GENERATED ALWAYS AS IDENTITY,
        id        text   NOT NULL,
        intent_id text   NOT NULL,
        player_id text   NOT NULL,
        match_id  text,
        debit     text   NOT NULL,
        credit    text   NOT NULL CHECK (credit <> debit),
        amount    bigint NOT NULL CHECK (amount > 0),
        unit      text   NOT NULL,
        why       text   NOT NULL,
        at        bigint NOT NULL,
        CONSTRAINT journal_id PRIMARY KEY (id),
        CONSTRAINT journal_seq UNIQUE (seq)
      )`,
      // One per filter of LedgerStore.journal, each ending in seq: a page is a range scan.
      `CREATE INDEX IF NOT EXISTS journal_player ON ${s}.journal (player_id, seq)`,
      `CREATE INDEX IF NOT EXISTS journal_match
        ON ${s}.journal (match_id, seq) WHERE match_id IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS journal_intent ON ${s}.journal (intent_id, seq)`,
      `CREATE INDEX IF NOT EXISTS journal_at ON ${s}.journal (at, seq)`,
      `CREATE TABLE IF NOT EXISTS ${s}.balances (
        account text   NOT NULL,
        unit    text   NOT NULL,
        class   text   NOT NULL,
        balance bigint NOT NULL,
        CONSTRAINT balances_account PRIMARY KEY (account, unit)
      )`,
    ],
    // 3 -> 4: event ids are kept for good, so the index by time that the purge read goes.
    [`DROP INDEX IF EXISTS ${s}.events_seen`],
    // 4 -> 5: the count of open intents that the game's cap reads (openCount).
    openCount(s),
  ];
}

/** The columns of a journal entry, in the shape `rowToEntry` reads (64-bit values as text). */
export const ENTRY_COLUMNS = `seq::text AS seq, id, intent_id, player_id, match_id, debit, credit,
  amount::text AS amount, unit, why, at::text AS at`;

/**
 * The postings of a write, journaled in the same statement as the write and only from the rows
 * it wrote: `write` is an INSERT or UPDATE of one intent that returns COLUMNS, `ctes` the CTEs it
 * reads (or ''), and parameters $first to $first+6 are the postings' tags, debits, credits, amounts,
 * units and whys (arrays, in order) and the write's time.
 *
 * - The journal lock (exclusive, held to COMMIT) is taken only once the intent row is written,
 *   so entries get their seq and commit in one order: a reader paging by seq never passes over
 *   an entry that commits after a later one.
 * - An entry id already in the journal breaks its primary key: the statement fails whole,
 *   intent write included (the caller answers null).
 * - Balances are upserted in (account, unit) order, each once per write (deltas summed first),
 *   so two writes never lock two balance rows in opposite orders.
 */
export function journaled(
  s: string,
  ctes: string,
  write: string,
  first: number,
  lock: string,
): string {
  const arg = (i: number) => `$${first + i}`;
  return `WITH ${ctes ? `${ctes},` : ''}
    written AS (${write}),
    journal_lock AS (SELECT pg_advisory_xact_lock(${lock}) AS held FROM written),
    entries AS (
      INSERT INTO ${s}.journal (id, intent_id, player_id, match_id, debit, credit, amount, unit,
        why, at)
      SELECT w.id || ':' || p.tag, w.id, w.player_id, w.group_id, p.debit, p.credit, p.amount,
        p.unit, p.why, ${arg(6)}::bigint
      FROM written w CROSS JOIN journal_lock
        CROSS JOIN unnest(${arg(0)}::text[], ${arg(1)}::text[], ${arg(2)}::text[], ${arg(3)}::bigint[],
          ${arg(4)}::text[], ${arg(5)}::text[]) WITH ORDINALITY AS p(tag, debit, credit, amount, unit, why, ord)
      ORDER BY p.ord
      RETURNING debit, credit, amount, unit),
    balanced AS (
      INSERT INTO ${s}.balances AS b (account, unit, class, balance)
      SELECT account, unit, split_part(account, ':', 1), sum(delta)::bigint
      FROM (SELECT debit AS account, unit, -amount AS delta FROM entries
            UNION ALL SELECT credit, unit, amount FROM entries) AS d
      GROUP BY account, unit
      ORDER BY account, unit
      ON CONFLICT (account, unit) DO UPDATE SET balance = b.balance + EXCLUDED.balance)
    SELECT * FROM written`;
}

/** Opening entries of many intents at once (the 2 -> 3 migration): one array per column. */
export function openingInsert(s: string): string {
  return `INSERT INTO ${s}.journal (id, intent_id, player_id, match_id, debit, credit, amount,
      unit, why, at)
    SELECT p.intent_id || ':' || p.tag, p.intent_id, p.player_id, p.match_id, p.debit, p.credit,
      p.amount, p.unit, p.why, $10::bigint
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
      $7::bigint[], $8::text[], $9::text[])
      WITH ORDINALITY AS p(intent_id, player_id, match_id, tag, debit, credit, amount, unit, why, ord)
    ORDER BY p.ord`;
}

/** The balances of a journal that has only opening entries (the 2 -> 3 migration). */
export function openingBalances(s: string): string {
  return `INSERT INTO ${s}.balances (account, unit, class, balance)
    SELECT account, unit, split_part(account, ':', 1), sum(delta)::bigint
    FROM (SELECT debit AS account, unit, -amount AS delta FROM ${s}.journal
          UNION ALL SELECT credit, unit, amount FROM ${s}.journal) AS d
    GROUP BY account, unit`;
}

/** The version table: created first, so that even version 0 can be recorded and read. */
export function versionTable(s: string): string {
  return `CREATE TABLE IF NOT EXISTS ${s}.schema_version (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    version  integer NOT NULL
  )`;
}
