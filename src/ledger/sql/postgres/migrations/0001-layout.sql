-- Layout 1 of the PostgreSQL ledger, edited in place until the first release, then frozen
-- (docs/ARCHITECTURE.md, "The stores' layouts"). "lightning" stands for the store's schema.

-- How many migrations this schema has had, written under the store's advisory lock.
CREATE TABLE "lightning".layout (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  version  integer NOT NULL
);

-- One row per intent: amounts `numeric` (exact sums), times epoch ms, `history` appended to
-- by each move. `last_call` is the last write's token: a writer whose answer a dropped
-- connection lost reads whether it committed. `moves_money` is false for a record of ours that
-- moves none (its kind's rule): not counted open, not swept at start-up.
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
  moves_money     boolean NOT NULL,
  CONSTRAINT intents_id UNIQUE (id)
);

-- A partial index serves only queries that repeat its WHERE term: OPEN_SQL and PAYOUT_SQL
-- (postgres-schema.ts) spell these lists the same way (test/ledger/layout.test.ts).
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
  WHERE kind IN ('reward', 'payment', 'withdrawal');
CREATE INDEX intents_payout_room ON "lightning".intents (room_id, created_at)
  WHERE kind IN ('reward', 'payment', 'withdrawal');
CREATE INDEX intents_payout_time ON "lightning".intents (created_at)
  WHERE kind IN ('reward', 'payment', 'withdrawal');
-- A tab's windows (BudgetWindow.over), a player's only: WINDOW_SQL spells these.
CREATE INDEX intents_credit_player ON "lightning".intents (player_id, created_at)
  WHERE kind IN ('credit');
CREATE INDEX intents_withdrawal_player ON "lightning".intents (player_id, created_at)
  WHERE kind IN ('withdrawal');

-- Event ids seen (webhooks, once-markers), kept for good.
CREATE TABLE "lightning".events (
  id      text   PRIMARY KEY,
  seen_at bigint NOT NULL
);

-- One row per posting, never changed, listed in (xid, seq) order (postgres-schema.ts); one
-- index per filter of the journal's pages.
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

-- Each account's credits minus debits per unit; the house's accounts spread over 16 shards
-- (BALANCE_SHARDS), each kept within its share `lim` of 2^63 - 1 (postgres-schema.ts).
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

-- The game's open intents that move money: 32 rows summed, a write adding to its backend's
-- (opens 0 to 15, ends 16 to 31: OPEN_STRIPES), so connections rarely wait on each other.
CREATE TABLE "lightning".open_count (
  stripe smallint PRIMARY KEY CHECK (stripe BETWEEN 0 AND 31),
  n      bigint   NOT NULL
);
INSERT INTO "lightning".open_count (stripe, n) SELECT g, 0 FROM generate_series(0, 31) AS g;

CREATE FUNCTION "lightning".count_open() RETURNS trigger LANGUAGE plpgsql AS $fn$
  DECLARE
    d integer := 0;
  BEGIN
    IF TG_OP <> 'INSERT' THEN
      IF (OLD.moves_money AND OLD.status IN ('held', 'queued', 'creating', 'pending',
          'unknown')) THEN
        d := d - 1;
      END IF;
    END IF;
    IF TG_OP <> 'DELETE' THEN
      IF (NEW.moves_money AND NEW.status IN ('held', 'queued', 'creating', 'pending',
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
  WHEN (NEW.moves_money AND NEW.status IN ('held', 'queued', 'creating', 'pending',
    'unknown'))
  EXECUTE FUNCTION "lightning".count_open();
CREATE TRIGGER intents_count_update AFTER UPDATE OF status, moves_money ON "lightning".intents
  FOR EACH ROW
  WHEN ((OLD.moves_money AND OLD.status IN ('held', 'queued', 'creating', 'pending',
    'unknown')) IS DISTINCT FROM (NEW.moves_money AND NEW.status IN ('held', 'queued',
    'creating', 'pending', 'unknown')))
  EXECUTE FUNCTION "lightning".count_open();
CREATE TRIGGER intents_count_delete AFTER DELETE ON "lightning".intents FOR EACH ROW
  WHEN (OLD.moves_money AND OLD.status IN ('held', 'queued', 'creating', 'pending',
    'unknown'))
  EXECUTE FUNCTION "lightning".count_open();

-- The operator's audit log, append-only whoever connects; appends take one advisory lock, so
-- seqs commit in order.
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

CREATE TABLE "lightning".blocked (
  player_id text   PRIMARY KEY,
  since     bigint NOT NULL
);

-- At most one row: the operator log's line of an operator's pause of the game's payouts.
CREATE TABLE "lightning".payouts_paused (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  line     bigint  NOT NULL
);

-- The game's outbound token bucket (rate.ts): counted from time 0, the first take finds it full.
CREATE TABLE "lightning".rate (
  id     smallint         PRIMARY KEY CHECK (id = 1),
  tokens double precision NOT NULL,
  at     bigint           NOT NULL,
  hold   bigint           NOT NULL
);
INSERT INTO "lightning".rate (id, tokens, at, hold) VALUES (1, 0, 0, 0);

-- Seats (CreateGuards.seat) and each group's count; the trigger gives a seat back when its
-- holder ends expired or failed.
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
