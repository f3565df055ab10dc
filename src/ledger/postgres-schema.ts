/**
 * The SQL behind PostgresLedger: the tables and indexes of one ledger in its own PostgreSQL
 * schema (namespace), the migrations that build them, the statements that journal a write and
 * page the journal, and the column list every read returns. No I/O here: postgres.ts runs these
 * strings. Every table name is qualified with the quoted schema, so nothing depends on the
 * connection's search_path.
 *
 * Layout (S = the schema):
 *   S.schema_version  one row: the layout version, read and written under an advisory lock
 *   S.intents         one row per intent; `seq` (identity) is insertion order, the last tie-break
 *   S.events          event ids already seen (webhooks, once-markers), kept for good
 *   S.journal         one row per posting (entry), never changed; `seq` (identity) names it, and
 *                     `xid` is the id of the transaction that wrote it: (xid, seq) is its order
 *   S.balances        per account and unit that ever moved, its credits minus its debits, with
 *                     the account's class, so that class totals are a GROUP BY of this table;
 *                     the house's accounts (`wallet`, `inflight`, `house:*`) in BALANCE_SHARDS
 *                     rows each, summed on read, every other account in one
 *   S.open_count      32 rows whose sum is the number of open intents, matches aside (the
 *                     game's cap, maxOpenPerGame), kept by triggers on S.intents (version 5)
 *   S.operator_log    the operator's audit log (version 7): one row per action, kept
 *                     append-only by a trigger; appends take one advisory lock, so their seqs
 *                     commit in order and a page by `after` never passes over a line
 *   S.blocked         one row per player an operator blocked (version 7)
 *   S.rate            one row: the game's outbound token bucket (version 9; rate.ts)
 *   S.seats           one row per player holding a seat of a group (CreateGuards.seat), and
 *   S.seat_counts     one row per group: its taken seats (version 11, `seats`)
 *
 * Version 11 keeps seats: a guarded create takes its group's count row (an upsert that adds one
 * only below the cap, so creates racing for the last seat queue on the row and one wins) and its
 * player's row; a trigger gives the seat back when its holder ends expired or failed. Created
 * empty: a group of an older layout keeps no seats.
 *
 * Version 10 knows the status `queued` (the payout queue): the status check, the open indexes
 * and the open count's trigger function are made again with it, as version 8 did for `held`.
 *
 * Version 8 knows the status `held` (payout approvals): the status check, the indexes of open
 * intents and the open count's trigger function are made again with it, and `intents_held`
 * lists held payouts. S.payouts_paused holds the line of an operator's pause of the game's
 * payouts while it holds (LedgerStore.recordPause).
 *
 * Intent amounts are `numeric` (exact at any size, summed exactly for budgets, returned as
 * text); journal amounts and balances are `bigint` (the journal's signed 64-bit promise: a write
 * that would take an account past it fails whole); times are epoch ms in `bigint`; `meta` is
 * `json` (kept as written), `history` is `jsonb` (appended to by each move).
 *
 * Why journaled writes need no lock held to COMMIT (layout 6; before it, one advisory lock and
 * the hot balance rows made them commit one at a time, 2 to 4 times a move's time under load):
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
 *   unit) order as before, so two writes never wait on each other in opposite orders. A balance
 *   stays within 64 bits by quotas: each shard row holds `lim`, its share of 2^63 - 1, and the
 *   shares of an account sum to no more (`balances_within` checks a row against its own), so
 *   shards that each keep to their share never sum past it. A write that would take a shard past
 *   its share is made again on the exact path (postgres.ts): all the account's shard rows locked
 *   in order, their sum checked whole, and the total and the shares dealt out afresh.
 *
 * What that costs: a journaled write takes one more advisory lock (its intent's); a balance
 * read sums up to BALANCE_SHARDS rows per house account; a journal page reads pg_locks (the
 * whole lock table, briefly) only when entries it can see wait above its snapshot's xmin.
 *
 * An event id is one row of `events` and one entry of its primary key: a webhook's (`ramp:` and
 * a 43-character hash) takes about 200 bytes (table and index pages together, measured over
 * 100,000 of them), a million of them about 200 MB. Nothing purges them (LedgerStore.recordEvent
 * keeps ids for good).
 */
import { INTENT_KINDS, INTENT_STATUSES, OPEN_STATUSES, PAYOUT_KINDS } from './intent.js';

/** Bumped whenever the layout changes; an older library refuses a newer schema. */
export const SCHEMA_VERSION = 11;

/** The version whose migration writes the opening entries of the intents already there. */
export const JOURNAL_VERSION = 3;

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

/** The indexes whose WHERE names the open statuses (made again when the list changes). */
const OPEN_INDEXES = (s: string) => [
  // Unique among open intents only: a seat's fee may be charged again once the last ended.
  `CREATE UNIQUE INDEX IF NOT EXISTS intents_open_key
    ON ${s}.intents (open_key) WHERE open_key IS NOT NULL AND ${OPEN_SQL}`,
  `CREATE INDEX IF NOT EXISTS intents_open_room
    ON ${s}.intents (room_id, created_at, seq) WHERE ${OPEN_SQL}`,
  `CREATE INDEX IF NOT EXISTS intents_open_player
    ON ${s}.intents (player_id, created_at, seq) WHERE ${OPEN_SQL}`,
  `CREATE INDEX IF NOT EXISTS intents_due
    ON ${s}.intents (next_check_at, created_at, seq)
    WHERE next_check_at IS NOT NULL AND ${OPEN_SQL}`,
];

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
      ...OPEN_INDEXES(s),
      `CREATE INDEX IF NOT EXISTS intents_group
        ON ${s}.intents (group_id, created_at, seq) WHERE group_id IS NOT NULL`,
      `CREATE UNIQUE INDEX IF NOT EXISTS intents_callback_token
        ON ${s}.intents (callback_token) WHERE callback_token IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS intents_remote
        ON ${s}.intents (kind, remote_id, created_at, seq) WHERE remote_id IS NOT NULL`,
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
    // 5 -> 6: entries in (xid, seq) order, balances of the house in shards (see the header).
    // Entries already there were written one at a time in seq order: xid 0 keeps them first,
    // in that order. The default is for any other writer; ours name the column.
    [
      `ALTER TABLE ${s}.journal ADD COLUMN IF NOT EXISTS xid xid8 NOT NULL DEFAULT '0'`,
      `ALTER TABLE ${s}.journal ALTER COLUMN xid SET DEFAULT pg_current_xact_id()`,
      `DROP INDEX IF EXISTS ${s}.journal_player`,
      `DROP INDEX IF EXISTS ${s}.journal_match`,
      `DROP INDEX IF EXISTS ${s}.journal_intent`,
      `CREATE INDEX IF NOT EXISTS journal_order ON ${s}.journal (xid, seq)`,
      `CREATE INDEX IF NOT EXISTS journal_player ON ${s}.journal (player_id, xid, seq)`,
      `CREATE INDEX IF NOT EXISTS journal_match
        ON ${s}.journal (match_id, xid, seq) WHERE match_id IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS journal_intent ON ${s}.journal (intent_id, xid, seq)`,
      `ALTER TABLE ${s}.balances
        ADD COLUMN IF NOT EXISTS shard smallint NOT NULL DEFAULT 0,
        ADD COLUMN IF NOT EXISTS lim bigint NOT NULL DEFAULT ${MAX}`,
      `ALTER TABLE ${s}.balances DROP CONSTRAINT IF EXISTS balances_within,
        DROP CONSTRAINT IF EXISTS balances_account,
        ADD CONSTRAINT balances_account PRIMARY KEY (account, unit, shard)`,
      // Every house account gets its shard rows; its whole balance goes to shard 0 and the
      // shares are dealt from it (on a layout 5 table, where it is all in shard 0 already).
      `INSERT INTO ${s}.balances (account, unit, shard, class, balance, lim)
        SELECT b.account, b.unit, g.n, b.class, 0, 0
        FROM ${s}.balances AS b CROSS JOIN generate_series(1, ${BALANCE_SHARDS - 1}) AS g(n)
        WHERE b.shard = 0 AND ${SHARDED_SQL('b.class')}
        ON CONFLICT (account, unit, shard) DO NOTHING`,
      `UPDATE ${s}.balances AS b
        SET balance = (CASE WHEN b.shard = 0 THEN t.total ELSE 0 END)::bigint,
          lim = ${shareOf('t.total', 'b.shard', 'b.class')}
        FROM (SELECT account, unit, sum(balance) AS total FROM ${s}.balances
              GROUP BY account, unit) AS t
        WHERE b.account = t.account AND b.unit = t.unit`,
      `ALTER TABLE ${s}.balances ADD CONSTRAINT balances_within CHECK (
        shard >= 0 AND shard < ${BALANCE_SHARDS}
        AND balance <= lim AND balance >= -lim - (shard = 0)::int)`,
    ],
    // 6 -> 7: the operator's audit log and the blocked players (operatorLog).
    operatorLog(s),
    // 7 -> 8: the status `held` (payout approvals). Whatever names the open statuses is made
    // again with it: the status check, the open indexes and the game's count (no intent of an
    // older schema is held, so the count stands).
    [
      ...statusesAgain(s),
      `CREATE INDEX IF NOT EXISTS intents_held
        ON ${s}.intents (created_at, seq) WHERE status = 'held'`,
      // At most one row: the operator log's line of an operator's pause of the game's payouts.
      `CREATE TABLE IF NOT EXISTS ${s}.payouts_paused (
        only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
        line     bigint  NOT NULL
      )`,
    ],
    // 8 -> 9: the game's outbound rate, one row (rate.ts; RATE_TAKE, RATE_HOLD).
    [
      `CREATE TABLE IF NOT EXISTS ${s}.rate (
        id     smallint         PRIMARY KEY CHECK (id = 1),
        tokens double precision NOT NULL,
        at     bigint           NOT NULL,
        hold   bigint           NOT NULL
      )`,
      // Counted at the start of time: the first take finds it full.
      `INSERT INTO ${s}.rate (id, tokens, at, hold) VALUES (1, 0, 0, 0) ON CONFLICT (id) DO NOTHING`,
    ],
    // 9 -> 10: the status `queued` (the payout queue). As 7 -> 8: whatever names the open
    // statuses is made again with it (no intent of an older schema is queued: the count stands).
    [...statusesAgain(s)],
    // 10 -> 11: seats (CreateGuards.seat).
    seats(s),
  ];
}

/**
 * Who holds a seat of a group, and how many of its seats are taken (version 11). A create takes
 * them in its transaction (postgres.ts `#seat`); the trigger gives a seat back in the same
 * statement as its holder's move to expired or failed, and only then (its WHEN clause).
 */
function seats(s: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${s}.seats (
      group_id  text NOT NULL,
      player_id text NOT NULL,
      intent_id text NOT NULL,
      CONSTRAINT seats_holder PRIMARY KEY (group_id, player_id)
    )`,
    `CREATE TABLE IF NOT EXISTS ${s}.seat_counts (
      group_id text    PRIMARY KEY,
      taken    integer NOT NULL CHECK (taken >= 0)
    )`,
    `CREATE OR REPLACE FUNCTION ${s}.give_seat() RETURNS trigger
      LANGUAGE plpgsql AS $fn$
      BEGIN
        DELETE FROM ${s}.seats
          WHERE group_id = NEW.group_id AND player_id = NEW.player_id AND intent_id = NEW.id;
        IF FOUND THEN
          UPDATE ${s}.seat_counts SET taken = taken - 1 WHERE group_id = NEW.group_id;
        END IF;
        RETURN NULL;
      END
      $fn$`,
    `DROP TRIGGER IF EXISTS intents_seat_end ON ${s}.intents`,
    `CREATE TRIGGER intents_seat_end AFTER UPDATE OF status ON ${s}.intents
      FOR EACH ROW WHEN (NEW.status IN ('expired', 'failed') AND NEW.group_id IS NOT NULL
        AND OLD.status IS DISTINCT FROM NEW.status)
      EXECUTE FUNCTION ${s}.give_seat()`,
  ];
}

/**
 * What names the statuses, made again with today's list (a migration that adds a status): the
 * status check, the indexes of open intents and the open count's trigger function. The count
 * itself stands: no intent of an older schema has the new status.
 */
function statusesAgain(s: string): string[] {
  return [
    `ALTER TABLE ${s}.intents DROP CONSTRAINT IF EXISTS intents_status_check`,
    `ALTER TABLE ${s}.intents ADD CONSTRAINT intents_status_check
      CHECK (status IN (${list(INTENT_STATUSES)}))`,
    ...['intents_open_key', 'intents_open_room', 'intents_open_player', 'intents_due'].map(
      (index) => `DROP INDEX IF EXISTS ${s}.${index}`,
    ),
    ...OPEN_INDEXES(s),
    ...openCount(s),
  ];
}

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

/**
 * The operator's audit log (version 7): a line's seq is taken under the log's advisory lock
 * (postgres.ts, recordOperatorAction), so lines commit in seq order; a trigger refuses every
 * UPDATE, DELETE and TRUNCATE of it, whoever connects.
 */
function operatorLog(s: string): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${s}.operator_log (
      seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      at        bigint NOT NULL,
      by        text   NOT NULL,
      action    text   NOT NULL,
      intent_id text,
      player_id text,
      before    text   NOT NULL,
      after     text   NOT NULL,
      note      text   NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS operator_log_intent
      ON ${s}.operator_log (intent_id, seq) WHERE intent_id IS NOT NULL`,
    `CREATE INDEX IF NOT EXISTS operator_log_player
      ON ${s}.operator_log (player_id, seq) WHERE player_id IS NOT NULL`,
    `CREATE OR REPLACE FUNCTION ${s}.operator_log_append_only() RETURNS trigger
      LANGUAGE plpgsql AS $fn$
      BEGIN
        RAISE EXCEPTION 'the operator log is append-only';
      END
      $fn$`,
    `DROP TRIGGER IF EXISTS operator_log_append_only ON ${s}.operator_log`,
    `CREATE TRIGGER operator_log_append_only BEFORE UPDATE OR DELETE ON ${s}.operator_log
      FOR EACH ROW EXECUTE FUNCTION ${s}.operator_log_append_only()`,
    `DROP TRIGGER IF EXISTS operator_log_no_truncate ON ${s}.operator_log`,
    `CREATE TRIGGER operator_log_no_truncate BEFORE TRUNCATE ON ${s}.operator_log
      FOR EACH STATEMENT EXECUTE FUNCTION ${s}.operator_log_append_only()`,
    `CREATE TABLE IF NOT EXISTS ${s}.blocked (
      player_id text   PRIMARY KEY,
      since     bigint NOT NULL
    )`,
  ];
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
