-- Layout 1 of the SQLite ledger, edited in place until the first release, then frozen
-- (docs/ARCHITECTURE.md, "The stores' layouts"). The mark refuses any other program's file.
PRAGMA application_id = 1280200775;

-- One small row per intent, so that a move is cheap: `live` (NULL once ended) filters every
-- open index and changes only on an ending move; ids and tokens are packed to their bytes
-- (packId); `uri` is '' when it is `lightning:` + code and `meta` NULL when empty. The history
-- is in `moves`; the budget windows' indexes come with the first create that needs them.
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

-- Narrow keys: the rowid ending every entry orders rows by creation.
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

-- The history: a row per move keyed by intent and step (the rank of the status it reached),
-- so a move appends; notes and the journal's whys repeat, so `notes` keeps each once.
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

-- Event ids seen (webhooks, once-markers), kept for good.
CREATE TABLE events (
  id      TEXT    PRIMARY KEY,
  seen_at INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- The journal: an entry names its intent, accounts and why by id; its player and match are
-- its intent's.
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

-- Balances kept by each write, so no read sums the journal; STRICT refuses one past 64 bits.
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

-- The game's open intents that move money (live = 1; 0: open, a record that moves none), kept
-- by triggers: a create's check reads one row.
CREATE TABLE counters (
  name TEXT    PRIMARY KEY,
  n    INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO counters (name, n) VALUES ('open', 0);

CREATE TRIGGER intents_count_insert AFTER INSERT ON intents WHEN NEW.live IS 1
  BEGIN UPDATE counters SET n = n + 1 WHERE name = 'open'; END;
CREATE TRIGGER intents_count_live AFTER UPDATE OF live ON intents
  WHEN (OLD.live IS 1) <> (NEW.live IS 1)
  BEGIN UPDATE counters SET n = n + IIF(NEW.live IS 1, 1, -1) WHERE name = 'open'; END;
CREATE TRIGGER intents_count_delete AFTER DELETE ON intents WHEN OLD.live IS 1
  BEGIN UPDATE counters SET n = n - 1 WHERE name = 'open'; END;

-- The operator's audit log, append-only whoever writes the file.
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

CREATE TABLE blocked (
  player_id TEXT    PRIMARY KEY,
  since     INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- At most one row: the operator log's line of an operator's pause of the game's payouts.
CREATE TABLE payouts_paused (
  only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
  line     INTEGER NOT NULL
) STRICT;

-- Seats (CreateGuards.seat) and each group's count, kept by triggers; a seat goes when its
-- holder ends expired or failed.
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
