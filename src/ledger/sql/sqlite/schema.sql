-- The SQLite ledger's schema as the migrations in migrations/ build it, in one file to read.
-- test/ledger/layout.test.ts builds a database from each and compares them: a change to the
-- layout changes both (docs/ARCHITECTURE.md, "The stores' layouts").

-- Marks the file as a colyseus-lightning ledger: a file without it (another program's, or a
-- pre-release library's) is refused, never read as one.
PRAGMA application_id = 1280200775;

-- One row per intent, kept small so that a move is cheap:
-- - `live` is 1 while the intent is open and NULL once it ended: the filter of every "open"
--   index, written only by a move to an ended status, so a move between open statuses touches
--   none of them;
-- - `id` and `remote_id` hold a canonical (lowercase) UUID as its 16 bytes and any other
--   string as text; `callback_token` its base64url bytes (packId, packToken in
--   sqlite-schema.ts): 20 bytes less in the row and in each of their indexes;
-- - `uri` is '' when it is `lightning:` + code (it always is) and `meta` NULL when empty, so
--   the row keeps the ~200-character code once;
-- The history is in `moves`; the budget windows' indexes are built by the first create that
-- checks a window (sqlite-schema.ts PAYOUT_INDEXES), so a game without budgets keeps none.
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
) STRICT;

-- Narrow keys: the rowid that ends every entry already orders rows by creation, and the few
-- rows one key finds are sorted by the query.
CREATE UNIQUE INDEX intents_open_key
  ON intents (open_key) WHERE open_key IS NOT NULL AND live IS NOT NULL;
CREATE INDEX intents_group ON intents (group_id) WHERE group_id IS NOT NULL;
CREATE UNIQUE INDEX intents_callback_token
  ON intents (callback_token) WHERE callback_token IS NOT NULL;
CREATE INDEX intents_remote ON intents (remote_id) WHERE remote_id IS NOT NULL;
CREATE INDEX intents_open_room ON intents (room_id) WHERE live IS NOT NULL;
CREATE INDEX intents_open_player ON intents (player_id) WHERE live IS NOT NULL;
CREATE INDEX intents_due
  ON intents (next_check_at) WHERE next_check_at IS NOT NULL AND live IS NOT NULL;
CREATE INDEX intents_player ON intents (player_id);
CREATE INDEX intents_held ON intents (created_at) WHERE status = 'held';

-- The history: one short row per move, keyed by intent (its seq) and step (the rank of the
-- status it reached, sqlite-schema.ts STEPS), so a move appends and never rewrites a list.
-- Its notes, which repeat ("withdrawal request pending"), are kept once each in `notes`,
-- which also names the journal's whys.
CREATE TABLE moves (
  intent INTEGER NOT NULL,
  step   INTEGER NOT NULL,
  at     INTEGER NOT NULL,
  note   INTEGER,
  PRIMARY KEY (intent, step)
) STRICT, WITHOUT ROWID;

CREATE TABLE notes (
  id   INTEGER PRIMARY KEY,
  text TEXT    NOT NULL UNIQUE
) STRICT;

-- Event ids seen (webhooks, once-markers), kept for good: one row of a WITHOUT ROWID table
-- keyed by the id itself, about 70 bytes of the file for a webhook's.
CREATE TABLE events (
  id      TEXT    PRIMARY KEY,
  seen_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- The journal (journal.ts): one row per entry, naming its intent by seq, its accounts by their
-- id in `accounts` and its why by its id in `notes`, about 40 bytes plus its indexes. An
-- entry's player and match are its intent's, read by a join.
CREATE TABLE journal (
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
CREATE INDEX journal_at ON journal (at);

CREATE TABLE accounts (
  id   INTEGER PRIMARY KEY,
  name TEXT    NOT NULL UNIQUE
) STRICT;

-- Per account and unit, and per class and unit: kept by each write, so no read sums the
-- journal. A balance past a signed 64-bit integer is refused by STRICT, never rounded.
CREATE TABLE balances (
  account INTEGER NOT NULL,
  unit    TEXT    NOT NULL,
  balance INTEGER NOT NULL,
  PRIMARY KEY (account, unit)
) STRICT, WITHOUT ROWID;

CREATE TABLE class_balances (
  class   TEXT    NOT NULL,
  unit    TEXT    NOT NULL,
  balance INTEGER NOT NULL,
  PRIMARY KEY (class, unit)
) STRICT, WITHOUT ROWID;

-- The game's open intents, matches aside (maxOpenPerGame): one row kept by the triggers below
-- in the transaction of the write that opens or ends an intent, so a create's check reads one
-- row instead of counting an index that grows with the open intents. Only an insert, a move
-- to an ended status (the one write that clears `live`) or a delete runs them.
CREATE TABLE counters (
  name TEXT    PRIMARY KEY,
  n    INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO counters (name, n) VALUES ('open', 0);

CREATE TRIGGER intents_count_insert AFTER INSERT ON intents
  WHEN NEW.live IS NOT NULL AND NEW.kind <> 'match'
  BEGIN UPDATE counters SET n = n + 1 WHERE name = 'open'; END;
CREATE TRIGGER intents_count_live AFTER UPDATE OF live, kind ON intents
  WHEN (OLD.live IS NOT NULL AND OLD.kind <> 'match') <> (NEW.live IS NOT NULL AND NEW.kind <> 'match')
  BEGIN
    UPDATE counters SET n = n + IIF(NEW.live IS NOT NULL AND NEW.kind <> 'match', 1, -1)
      WHERE name = 'open';
  END;
CREATE TRIGGER intents_count_delete AFTER DELETE ON intents
  WHEN OLD.live IS NOT NULL AND OLD.kind <> 'match'
  BEGIN UPDATE counters SET n = n - 1 WHERE name = 'open'; END;

-- The operator's audit log (operator-log.ts, sqlite-operator.ts): one row per action, kept
-- append-only by the file itself, whoever writes it.
CREATE TABLE operator_log (
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
CREATE INDEX operator_log_intent ON operator_log (intent_id) WHERE intent_id IS NOT NULL;
CREATE INDEX operator_log_player ON operator_log (player_id) WHERE player_id IS NOT NULL;
CREATE TRIGGER operator_log_no_update BEFORE UPDATE ON operator_log
  BEGIN SELECT RAISE(ABORT, 'the operator log is append-only'); END;
CREATE TRIGGER operator_log_no_delete BEFORE DELETE ON operator_log
  BEGIN SELECT RAISE(ABORT, 'the operator log is append-only'); END;

-- The players an operator blocked.
CREATE TABLE blocked (
  player_id TEXT    PRIMARY KEY,
  since     INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- At most one row: the operator log's line of an operator's pause of the game's payouts.
CREATE TABLE payouts_paused (
  only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
  line     INTEGER NOT NULL
) STRICT;

-- Seats (CreateGuards.seat): the player holding each seat of a group (the intent that holds
-- it, by seq), and the taken seats per group, kept by triggers as a seat comes or goes, so a
-- create's check reads one row. A seat goes when its holder ends expired or failed (the WHEN
-- clause keeps every other move from running the trigger).
CREATE TABLE seats (
  group_id  TEXT    NOT NULL,
  player_id TEXT    NOT NULL,
  intent    INTEGER NOT NULL,
  PRIMARY KEY (group_id, player_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE seat_counts (
  group_id TEXT    PRIMARY KEY,
  taken    INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TRIGGER seats_taken AFTER INSERT ON seats
  BEGIN
    INSERT INTO seat_counts (group_id, taken) VALUES (NEW.group_id, 1)
      ON CONFLICT (group_id) DO UPDATE SET taken = taken + 1;
  END;
CREATE TRIGGER seats_given AFTER DELETE ON seats
  BEGIN UPDATE seat_counts SET taken = taken - 1 WHERE group_id = OLD.group_id; END;
CREATE TRIGGER intents_seat_end AFTER UPDATE OF status ON intents
  WHEN NEW.status IN ('expired', 'failed') AND NEW.group_id IS NOT NULL
  BEGIN
    DELETE FROM seats
      WHERE group_id = NEW.group_id AND player_id = NEW.player_id AND intent = NEW.seq;
  END;

PRAGMA user_version = 1;
