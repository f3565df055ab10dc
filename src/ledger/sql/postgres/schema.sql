-- The PostgreSQL ledger's schema as the migrations in migrations/ build it, in one file to read.
-- test/ledger/layout.test.ts builds a database from each and compares them: a change to the
-- layout changes both (docs/ARCHITECTURE.md, "The stores' layouts"). "lightning" stands for
-- the store's own schema (PostgresLedger's `schema` option); the store creates the schema
-- itself only when it is missing.

-- The layout version: how many files of migrations/ this schema has had, one row, read and
-- written under the store's advisory lock (postgres.ts).
CREATE TABLE "lightning".layout (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  version  integer NOT NULL
);

-- One row per intent; `seq` (identity) is insertion order, the last tie-break. Amounts are
-- `numeric` (exact at any size, summed exactly for budgets, returned as text); times are epoch
-- ms in `bigint`; `meta` is `json` (kept as written), `history` is `jsonb` (appended to by each
-- move). `last_call` is the token of the last write, so that a writer whose answer a dropped
-- connection lost can tell whether its own write committed (PostgresLedger.recover). The kind
-- is checked where it enters the store (validate.ts), not here.
CREATE TABLE "lightning".intents (
  seq             bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id              text    NOT NULL,
  kind            text    NOT NULL,
  status          text    NOT NULL CHECK (status IN ('held', 'queued', 'creating', 'pending',
                    'unknown', 'completed', 'expired', 'failed')),
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
  last_call       text,
  CONSTRAINT intents_id UNIQUE (id)
);

-- The open statuses, as OPEN_SQL (postgres-schema.ts) names them: a partial index serves only
-- queries that repeat its WHERE term. intents_open_key is unique among open intents only: a
-- seat's fee may be charged again once the last ended. The budget windows (PAYOUT_SQL) index
-- who and when, which never change, so a move leaves them alone.
CREATE UNIQUE INDEX intents_open_key ON "lightning".intents (open_key)
  WHERE open_key IS NOT NULL AND status IN ('held', 'queued', 'creating', 'pending', 'unknown');
CREATE INDEX intents_open_room ON "lightning".intents (room_id, created_at, seq)
  WHERE status IN ('held', 'queued', 'creating', 'pending', 'unknown');
CREATE INDEX intents_open_player ON "lightning".intents (player_id, created_at, seq)
  WHERE status IN ('held', 'queued', 'creating', 'pending', 'unknown');
CREATE INDEX intents_due ON "lightning".intents (next_check_at, created_at, seq)
  WHERE next_check_at IS NOT NULL
    AND status IN ('held', 'queued', 'creating', 'pending', 'unknown');
CREATE INDEX intents_group ON "lightning".intents (group_id, created_at, seq)
  WHERE group_id IS NOT NULL;
CREATE UNIQUE INDEX intents_callback_token ON "lightning".intents (callback_token)
  WHERE callback_token IS NOT NULL;
CREATE INDEX intents_remote ON "lightning".intents (kind, remote_id, created_at, seq)
  WHERE remote_id IS NOT NULL;
CREATE INDEX intents_unknown ON "lightning".intents (created_at, seq) WHERE status = 'unknown';
CREATE INDEX intents_held ON "lightning".intents (created_at, seq) WHERE status = 'held';
CREATE INDEX intents_payout_player ON "lightning".intents (player_id, created_at)
  WHERE kind IN ('reward', 'payment');
CREATE INDEX intents_payout_room ON "lightning".intents (room_id, created_at)
  WHERE kind IN ('reward', 'payment');
CREATE INDEX intents_payout_time ON "lightning".intents (created_at)
  WHERE kind IN ('reward', 'payment');

-- Event ids already seen (webhooks, once-markers), kept for good: about 200 bytes each for a
-- webhook's (table and index pages together).
CREATE TABLE "lightning".events (
  id      text   PRIMARY KEY,
  seen_at bigint NOT NULL
);

-- One row per posting, never changed; `seq` (identity) names it, and `xid` is the id of the
-- transaction that wrote it: (xid, seq) is its order (postgres-schema.ts, header). One index
-- per filter of LedgerStore.journal, each ending in (xid, seq): a page is a range scan.
CREATE TABLE "lightning".journal (
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
  xid       xid8   NOT NULL DEFAULT pg_current_xact_id(),
  CONSTRAINT journal_id PRIMARY KEY (id),
  CONSTRAINT journal_seq UNIQUE (seq)
);
CREATE INDEX journal_order ON "lightning".journal (xid, seq);
CREATE INDEX journal_player ON "lightning".journal (player_id, xid, seq);
CREATE INDEX journal_match ON "lightning".journal (match_id, xid, seq)
  WHERE match_id IS NOT NULL;
CREATE INDEX journal_intent ON "lightning".journal (intent_id, xid, seq);
CREATE INDEX journal_at ON "lightning".journal (at, seq);

-- Per account and unit that ever moved, its credits minus its debits (journal amounts and
-- balances are `bigint`: a write that would take an account past 64 bits fails whole), with
-- the account's class, so that class totals are a GROUP BY. The house's accounts (`wallet`,
-- `inflight`, `house:*`) have BALANCE_SHARDS (16) rows each, summed on read; every other
-- account one. Each row's `lim` is its share of 2^63 - 1, so shards that keep to their share
-- never sum past it (postgres-schema.ts, header).
CREATE TABLE "lightning".balances (
  account text     NOT NULL,
  unit    text     NOT NULL,
  class   text     NOT NULL,
  balance bigint   NOT NULL,
  shard   smallint NOT NULL DEFAULT 0,
  lim     bigint   NOT NULL DEFAULT 9223372036854775807,
  CONSTRAINT balances_account PRIMARY KEY (account, unit, shard),
  CONSTRAINT balances_within CHECK (shard >= 0 AND shard < 16
    AND balance <= lim AND balance >= -lim - (shard = 0)::int)
);

-- The game's open intents, matches aside (maxOpenPerGame): 32 rows whose sum is the count,
-- kept by the triggers below in the transaction of the write that opens or ends an intent. A
-- write takes the row of its backend: opens in rows 0 to 15, ends in 16 to 31 (OPEN_STRIPES),
-- so writes on different connections rarely wait for one another. The WHEN clauses keep every
-- other write (a lease, a move between open statuses) from calling the function at all.
CREATE TABLE "lightning".open_count (
  stripe smallint PRIMARY KEY CHECK (stripe BETWEEN 0 AND 31),
  n      bigint   NOT NULL
);
INSERT INTO "lightning".open_count (stripe, n) SELECT g, 0 FROM generate_series(0, 31) AS g;

CREATE FUNCTION "lightning".count_open() RETURNS trigger LANGUAGE plpgsql AS $fn$
  DECLARE
    d integer := 0;
  BEGIN
    -- OLD is not there for an INSERT, nor NEW for a DELETE: each is read only when it is.
    IF TG_OP <> 'INSERT' THEN
      IF (OLD.kind <> 'match' AND OLD.status IN ('held', 'queued', 'creating', 'pending',
          'unknown')) THEN
        d := d - 1;
      END IF;
    END IF;
    IF TG_OP <> 'DELETE' THEN
      IF (NEW.kind <> 'match' AND NEW.status IN ('held', 'queued', 'creating', 'pending',
          'unknown')) THEN
        d := d + 1;
      END IF;
    END IF;
    IF d > 0 THEN
      UPDATE "lightning".open_count SET n = n + d WHERE stripe = pg_backend_pid() % 16;
    ELSIF d < 0 THEN
      UPDATE "lightning".open_count SET n = n + d WHERE stripe = 16 + pg_backend_pid() % 16;
    END IF;
    RETURN NULL;
  END
$fn$;
CREATE TRIGGER intents_count_insert AFTER INSERT ON "lightning".intents FOR EACH ROW
  WHEN (NEW.kind <> 'match' AND NEW.status IN ('held', 'queued', 'creating', 'pending',
    'unknown'))
  EXECUTE FUNCTION "lightning".count_open();
CREATE TRIGGER intents_count_update AFTER UPDATE OF status, kind ON "lightning".intents
  FOR EACH ROW
  WHEN ((OLD.kind <> 'match' AND OLD.status IN ('held', 'queued', 'creating', 'pending',
    'unknown')) IS DISTINCT FROM (NEW.kind <> 'match' AND NEW.status IN ('held', 'queued',
    'creating', 'pending', 'unknown')))
  EXECUTE FUNCTION "lightning".count_open();
CREATE TRIGGER intents_count_delete AFTER DELETE ON "lightning".intents FOR EACH ROW
  WHEN (OLD.kind <> 'match' AND OLD.status IN ('held', 'queued', 'creating', 'pending',
    'unknown'))
  EXECUTE FUNCTION "lightning".count_open();

-- The operator's audit log: one row per action, refused every UPDATE, DELETE and TRUNCATE by
-- a trigger, whoever connects. Appends take one advisory lock (postgres.ts), so their seqs
-- commit in order and a page by `after` never passes over a line.
CREATE TABLE "lightning".operator_log (
  seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at        bigint NOT NULL,
  by        text   NOT NULL,
  action    text   NOT NULL,
  intent_id text,
  player_id text,
  before    text   NOT NULL,
  after     text   NOT NULL,
  note      text   NOT NULL
);
CREATE INDEX operator_log_intent ON "lightning".operator_log (intent_id, seq)
  WHERE intent_id IS NOT NULL;
CREATE INDEX operator_log_player ON "lightning".operator_log (player_id, seq)
  WHERE player_id IS NOT NULL;
CREATE FUNCTION "lightning".operator_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    RAISE EXCEPTION 'the operator log is append-only';
  END
$fn$;
CREATE TRIGGER operator_log_append_only BEFORE UPDATE OR DELETE ON "lightning".operator_log
  FOR EACH ROW EXECUTE FUNCTION "lightning".operator_log_append_only();
CREATE TRIGGER operator_log_no_truncate BEFORE TRUNCATE ON "lightning".operator_log
  FOR EACH STATEMENT EXECUTE FUNCTION "lightning".operator_log_append_only();

-- The players an operator blocked.
CREATE TABLE "lightning".blocked (
  player_id text   PRIMARY KEY,
  since     bigint NOT NULL
);

-- At most one row: the operator log's line of an operator's pause of the game's payouts.
CREATE TABLE "lightning".payouts_paused (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  line     bigint  NOT NULL
);

-- The game's outbound token bucket (rate.ts), one row, counted from the start of time: the
-- first take finds it full.
CREATE TABLE "lightning".rate (
  id     smallint         PRIMARY KEY CHECK (id = 1),
  tokens double precision NOT NULL,
  at     bigint           NOT NULL,
  hold   bigint           NOT NULL
);
INSERT INTO "lightning".rate (id, tokens, at, hold) VALUES (1, 0, 0, 0);

-- Seats (CreateGuards.seat): who holds a seat of a group, and each group's taken seats. A
-- guarded create takes its group's count row (an upsert that adds one only below the cap, so
-- creates racing for the last seat queue on the row and one wins) and its player's row; the
-- trigger gives the seat back in the statement that moves its holder to expired or failed.
CREATE TABLE "lightning".seats (
  group_id  text NOT NULL,
  player_id text NOT NULL,
  intent_id text NOT NULL,
  CONSTRAINT seats_holder PRIMARY KEY (group_id, player_id)
);
CREATE TABLE "lightning".seat_counts (
  group_id text    PRIMARY KEY,
  taken    integer NOT NULL CHECK (taken >= 0)
);
CREATE FUNCTION "lightning".give_seat() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    DELETE FROM "lightning".seats
      WHERE group_id = NEW.group_id AND player_id = NEW.player_id AND intent_id = NEW.id;
    IF FOUND THEN
      UPDATE "lightning".seat_counts SET taken = taken - 1 WHERE group_id = NEW.group_id;
    END IF;
    RETURN NULL;
  END
$fn$;
CREATE TRIGGER intents_seat_end AFTER UPDATE OF status ON "lightning".intents FOR EACH ROW
  WHEN (NEW.status IN ('expired', 'failed') AND NEW.group_id IS NOT NULL
    AND OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION "lightning".give_seat();

INSERT INTO "lightning".layout (version) VALUES (1);
