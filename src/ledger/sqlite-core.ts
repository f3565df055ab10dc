/**
 * The SQLite ledger's statements and transactions, synchronous, on one connection: what
 * SqliteLedger runs inline (':memory:') or on its worker thread (a file). Inputs arrive
 * validated (validate.ts runs on the caller's side); the answers are Intent objects.
 *
 * Costs per move: one UPDATE of the row by its id (prepared per patch shape, so that it writes
 * only the columns the patch names, and touches the "open" indexes only when the intent ends),
 * and one short row appended to `moves` (with its note's id: one indexed read of `notes`, and a
 * write the first time a note is seen). No JSON is written or parsed unless `meta` is set.
 *
 * Every write is one `BEGIN IMMEDIATE ... COMMIT` (or a savepoint inside a batch, see batch()),
 * so a status change is a compare-and-set on the status column: of two writers moving the same
 * intent, in this process or another, exactly one gets a row back.
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { BudgetExceededError, LimitExceededError } from '../errors.js';
import { DuplicateIntentError, LedgerBusyError } from './errors.js';
import {
  type Intent,
  type IntentHistoryEntry,
  type IntentPatch,
  type IntentStatus,
  isTerminal,
  type NewIntent,
} from './intent.js';
import {
  LIVE_SQL,
  PAYOUT_INDEXES,
  PAYOUT_SQL,
  packId,
  packToken,
  STEPS,
  unpackId,
  unpackToken,
} from './sqlite-schema.js';
import { type BudgetWindow, type CreateGuards, EVENT_MEMORY_MS } from './store.js';
import { SCHEDULE_FIELDS } from './validate.js';

const COLUMNS = `seq, id, kind, status, room_id, player_id, amount, unit, description, remote_id,
  code, uri, callback_token, idempotency_key, open_key, group_id, expires_at, created_at,
  updated_at, next_check_at, checks, lease_owner, lease_until, error, meta`;

/** Patchable fields and their columns; `meta` is the one stored as JSON text. */
const PATCH_COLUMNS = {
  remoteId: 'remote_id',
  code: 'code',
  uri: 'uri',
  expiresAt: 'expires_at',
  nextCheckAt: 'next_check_at',
  checks: 'checks',
  leaseOwner: 'lease_owner',
  leaseUntil: 'lease_until',
  error: 'error',
  meta: 'meta',
} as const satisfies Record<keyof IntentPatch, string>;
const PATCH_FIELDS = Object.keys(PATCH_COLUMNS) as (keyof IntentPatch)[];

/** The most sources a move may list: every status that may move to one target. */
const MAX_SOURCES = 4;

/** One intent's row as the statements return it (node:sqlite hands integers over as numbers). */
interface Row {
  seq: number;
  id: string | Uint8Array;
  kind: Intent['kind'];
  status: IntentStatus;
  room_id: string | null;
  player_id: string;
  amount: string;
  unit: string;
  description: string;
  remote_id: string | Uint8Array | null;
  code: string | null;
  uri: string | null;
  callback_token: string | Uint8Array | null;
  idempotency_key: string | null;
  open_key: string | null;
  group_id: string | null;
  expires_at: number | null;
  created_at: number;
  updated_at: number;
  next_check_at: number | null;
  checks: number;
  lease_owner: string | null;
  lease_until: number | null;
  error: string | null;
  meta: string | null;
}

interface Move {
  step: number;
  at: number;
  note: string | null;
}

type Params = Record<string, SQLInputValue>;

export class SqliteCore {
  private readonly sql: ReturnType<typeof prepareStatements>;
  /** UPDATE statements by patch shape (and target, for moves): a few dozen at most. */
  private readonly shaped = new Map<string, StatementSync>();
  /** Inside batch(): each write is a savepoint of the batch's one transaction. */
  private batching = false;
  /**
   * The budget scopes whose index a create of this connection has built (or found), once that
   * create was kept: a refused one rolls its index back with it. Until then each budgeted
   * create asks again (a no-op once the index exists).
   */
  private readonly payoutIndexed = new Set<BudgetWindow['scope']>();

  constructor(readonly db: DatabaseSync) {
    this.sql = prepareStatements(db);
  }

  /** `guards.budgets` are the windows that apply to this intent (validate.ts budgetsFor). */
  create(input: NewIntent, now: number, guards: CreateGuards): Intent {
    const params: Params = {
      id: packId(input.id as string),
      kind: input.kind,
      room_id: input.roomId,
      player_id: input.playerId,
      amount: input.amount,
      unit: input.unit,
      description: input.description,
      callback_token: input.callbackToken == null ? null : packToken(input.callbackToken),
      idempotency_key: input.idempotencyKey ?? null,
      open_key: input.openKey ?? null,
      group_id: input.groupId ?? null,
      expires_at: input.expiresAt ?? null,
      now,
      next_check_at: input.nextCheckAt ?? null,
      meta: metaText(input.meta),
    };
    try {
      const created = this.write(() => {
        this.guard(input, now, guards);
        return this.toIntent(this.sql.insert.get(params) as unknown as Row, []);
      });
      for (const budget of guards.budgets ?? []) this.payoutIndexed.add(budget.scope);
      return created;
    } catch (err) {
      const dup = duplicateOrSelf(err);
      if (dup instanceof DuplicateIntentError && dup.field === 'openKey') {
        const holder = this.sql.openKeyHolder.get(input.openKey ?? null) as
          | { id: string | Uint8Array }
          | undefined;
        const existingId = holder === undefined ? null : unpackId(holder.id);
        throw new DuplicateIntentError('openKey', { cause: err, existingId });
      }
      throw dup;
    }
  }

  /** The guards of a create, inside its write transaction: a refusal rolls the insert back. */
  private guard(input: NewIntent, now: number, guards: CreateGuards): void {
    if (guards.maxOpenPerPlayer !== undefined) {
      const { open } = this.sql.countOpen.get(input.playerId) as { open: number };
      if (open >= guards.maxOpenPerPlayer) {
        throw new LimitExceededError('maxOpenPerPlayer', guards.maxOpenPerPlayer, input.playerId);
      }
    }
    for (const budget of guards.budgets ?? []) {
      // Part of this create's transaction: kept with it, or rolled back with its refusal.
      if (!this.payoutIndexed.has(budget.scope)) this.sql.payoutIndex[budget.scope].run();
      const since = now - budget.windowMs;
      const row = (
        budget.scope === 'player'
          ? this.sql.reservedByPlayer.get(input.playerId, since)
          : budget.scope === 'room'
            ? this.sql.reservedByRoom.get(input.roomId, since)
            : this.sql.reservedByGame.get(since)
      ) as { reserved: bigint };
      if (row.reserved + BigInt(input.amount) > BigInt(budget.limitMsat)) {
        throw new BudgetExceededError(
          budget.scope,
          String(budget.limitMsat),
          String(row.reserved),
          budget.windowMs,
        );
      }
    }
  }

  get(id: string): Intent | null {
    return this.one(this.sql.byId.get(packId(id)));
  }

  byCallbackToken(token: string): Intent | null {
    return this.one(this.sql.byToken.get(packToken(token)));
  }

  byRemoteId(kind: Intent['kind'], remoteId: string): Intent | null {
    return this.one(this.sql.byRemote.get(kind, packId(remoteId)));
  }

  openByRoom(roomId: string): Intent[] {
    return this.many(this.sql.openByRoom.all(roomId));
  }

  openByPlayer(playerId: string): Intent[] {
    return this.many(this.sql.openByPlayer.all(playerId));
  }

  byGroup(groupId: string): Intent[] {
    return this.many(this.sql.byGroup.all(groupId));
  }

  /** `sources` deduplicated and checked by assertMove, `patch` by parsePatch and assertSchedulable. */
  transition(
    id: string,
    sources: readonly IntentStatus[],
    to: IntentStatus,
    patch: IntentPatch,
    now: number,
    note: string | null,
  ): Intent | null {
    const terminal = isTerminal(to);
    const fields = patchFields(patch, terminal);
    const statement = this.shape(`move:${terminal ? 't' : 'o'}:${fields.join(',')}`, () => {
      const sets = ['status = :to', 'updated_at = :now', ...patchSets(fields)];
      if (terminal) {
        sets.push(
          'live = NULL',
          'next_check_at = NULL',
          'lease_owner = NULL',
          'lease_until = NULL',
        );
      }
      const slots = Array.from({ length: MAX_SOURCES }, (_, i) => `:from${i}`).join(', ');
      return `UPDATE intents SET ${sets.join(', ')}
        WHERE id = :id AND status IN (${slots}) RETURNING ${COLUMNS}`;
    });
    const params: Params = { ...patchParams(patch, fields), id: packId(id), to, now };
    for (let i = 0; i < MAX_SOURCES; i++) params[`from${i}`] = sources[i] ?? null;
    return this.write(() => {
      const row = statement.get(params) as Row | undefined;
      if (row === undefined) return null;
      // A move out of `creating` is the intent's first (the hot path: every answer of the
      // service): its history needs no read.
      const before = sources.length === 1 && sources[0] === 'creating' ? [] : this.moves(row.seq);
      const step = STEPS.indexOf(to);
      this.sql.appendMove.run(row.seq, step, now, note === null ? null : this.noteId(note));
      return this.toIntent(row, [...before, { step, at: now, note }]);
    });
  }

  update(id: string, status: IntentStatus, patch: IntentPatch, now: number): Intent | null {
    const fields = patchFields(patch, false);
    const statement = this.shape(`update:${fields.join(',')}`, () => {
      const sets = ['updated_at = :now', ...patchSets(fields)];
      return `UPDATE intents SET ${sets.join(', ')}
        WHERE id = :id AND status = :status RETURNING ${COLUMNS}`;
    });
    const params: Params = { ...patchParams(patch, fields), id: packId(id), status, now };
    return this.write(() => this.one(statement.get(params)));
  }

  claimDue(now: number, limit: number, owner: string, leaseMs: number): Intent[] {
    const rows = this.write(
      () => this.sql.claim.all({ now, limit, owner, until: now + leaseMs }) as unknown as Row[],
    );
    // RETURNING yields rows in no promised order; the contract is nextCheckAt, then age.
    rows.sort(
      (a, b) =>
        (a.next_check_at ?? 0) - (b.next_check_at ?? 0) ||
        a.created_at - b.created_at ||
        a.seq - b.seq,
    );
    return this.many(rows);
  }

  release(id: string, owner: string): void {
    this.write(() => this.sql.release.run(packId(id), owner));
  }

  unknowns(limit: number): Intent[] {
    return this.many(this.sql.unknowns.all(limit));
  }

  advanceChecks(at: number): number {
    return Number(this.write(() => this.sql.advance.run({ at }).changes));
  }

  recordEvent(eventId: string, now: number): boolean {
    return this.write(() => {
      this.sql.forgetEvents.run(now - EVENT_MEMORY_MS);
      return this.sql.recordEvent.run(eventId, now).changes === 1;
    });
  }

  close(): void {
    try {
      // Refreshes the planner's statistics where they are stale; SQLite advises it on close.
      this.db.exec('PRAGMA optimize');
    } finally {
      this.db.close();
    }
  }

  /**
   * Runs `fn` in one transaction in which every write is a savepoint: one commit, and so one
   * fsync, for a whole batch of calls, each of which still fails alone. Throws LedgerBusyError
   * when the write lock cannot be had (nothing ran), and what COMMIT throws (all undone).
   */
  batch(fn: () => void): void {
    this.begin();
    this.batching = true;
    try {
      fn();
    } finally {
      this.batching = false;
    }
    try {
      this.sql.commit.run();
    } catch (err) {
      if (this.db.isTransaction) this.sql.rollback.run();
      throw busyOrSelf(err);
    }
  }

  /** Takes the write lock up front (IMMEDIATE), so a transaction never fails halfway on a lock upgrade. */
  private write<T>(fn: () => T): T {
    if (this.batching) {
      this.sql.savepoint.run();
      try {
        const result = fn();
        this.sql.releaseSavepoint.run();
        return result;
      } catch (err) {
        this.sql.rollbackSavepoint.run();
        this.sql.releaseSavepoint.run();
        throw busyOrSelf(err);
      }
    }
    this.begin();
    try {
      const result = fn();
      this.sql.commit.run();
      return result;
    } catch (err) {
      if (this.db.isTransaction) this.sql.rollback.run();
      throw busyOrSelf(err);
    }
  }

  private begin(): void {
    try {
      this.sql.begin.run();
    } catch (err) {
      throw busyOrSelf(err);
    }
  }

  private shape(key: string, sql: () => string): StatementSync {
    let statement = this.shaped.get(key);
    if (statement === undefined) {
      statement = this.db.prepare(sql());
      this.shaped.set(key, statement);
    }
    return statement;
  }

  /** A note's id in `notes`, recorded the first time it is seen (inside the move's transaction). */
  private noteId(text: string): number {
    const known = this.sql.noteId.get(text) as { id: number } | undefined;
    return known?.id ?? (this.sql.addNote.get(text) as { id: number }).id;
  }

  private moves(seq: number): Move[] {
    return this.sql.moves.all(seq) as unknown as Move[];
  }

  private one(row: unknown): Intent | null {
    return row === undefined ? null : this.toIntent(row as Row, this.moves((row as Row).seq));
  }

  private many(rows: unknown[]): Intent[] {
    return (rows as Row[]).map((row) => this.toIntent(row, this.moves(row.seq)));
  }

  private toIntent(row: Row, moves: readonly Move[]): Intent {
    const history: IntentHistoryEntry[] = [{ at: row.created_at, from: null, to: 'creating' }];
    for (const move of moves) {
      const entry: IntentHistoryEntry = {
        at: move.at,
        from: (history.at(-1) as IntentHistoryEntry).to,
        to: STEPS[move.step] as IntentStatus,
      };
      if (move.note !== null) entry.note = move.note;
      history.push(entry);
    }
    return {
      id: unpackId(row.id),
      kind: row.kind,
      status: row.status,
      roomId: row.room_id,
      playerId: row.player_id,
      amount: row.amount,
      unit: row.unit,
      description: row.description,
      remoteId: row.remote_id === null ? null : unpackId(row.remote_id),
      code: row.code,
      uri: row.uri === '' ? `lightning:${row.code}` : row.uri,
      callbackToken: row.callback_token === null ? null : unpackToken(row.callback_token),
      idempotencyKey: row.idempotency_key,
      openKey: row.open_key,
      groupId: row.group_id,
      expiresAt: row.expires_at,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      nextCheckAt: row.next_check_at,
      checks: row.checks,
      leaseOwner: row.lease_owner,
      leaseUntil: row.lease_until,
      error: row.error,
      meta: row.meta === null ? {} : (JSON.parse(row.meta) as Record<string, unknown>),
      history,
    };
  }
}

/** The fields a patch writes, in a fixed order (the statement cache's key). */
function patchFields(patch: IntentPatch, terminal: boolean): (keyof IntentPatch)[] {
  // A terminal move clears the schedule whatever the patch says (assertSchedulable let through
  // only nulls), so those fields are left to its own SET terms.
  return PATCH_FIELDS.filter(
    (f) => patch[f] !== undefined && !(terminal && SCHEDULE_FIELDS.has(f)),
  );
}

function patchSets(fields: readonly (keyof IntentPatch)[]): string[] {
  const sets: string[] = [];
  for (const field of fields) {
    const col = PATCH_COLUMNS[field];
    if (field === 'uri') {
      // Stored as '' when it is the code with its scheme, against the code as it will be.
      const code = fields.includes('code') ? ':code' : 'code';
      sets.push(`uri = CASE WHEN :uri = 'lightning:' || ${code} THEN '' ELSE :uri END`);
    } else {
      sets.push(`${col} = :${col}`);
    }
  }
  if (fields.includes('code') && !fields.includes('uri')) {
    // The old uri was implied by the old code: spell it out before the code changes.
    sets.push("uri = CASE WHEN uri = '' THEN 'lightning:' || code ELSE uri END");
  }
  return sets;
}

function patchParams(patch: IntentPatch, fields: readonly (keyof IntentPatch)[]): Params {
  const params: Params = {};
  for (const field of fields) {
    const value = patch[field];
    params[PATCH_COLUMNS[field]] =
      field === 'meta'
        ? metaText(value as Record<string, unknown>)
        : field === 'remoteId' && typeof value === 'string'
          ? packId(value)
          : ((value ?? null) as SQLInputValue);
  }
  return params;
}

/** Meta as stored: NULL for the empty object every intent starts with. */
function metaText(meta: Record<string, unknown> | undefined): string | null {
  return meta === undefined || Object.keys(meta).length === 0 ? null : JSON.stringify(meta);
}

function prepareStatements(db: DatabaseSync) {
  const open = `SELECT ${COLUMNS} FROM intents WHERE %col = ? AND ${LIVE_SQL} ORDER BY created_at, seq`;
  return {
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
    savepoint: db.prepare('SAVEPOINT call'),
    releaseSavepoint: db.prepare('RELEASE call'),
    rollbackSavepoint: db.prepare('ROLLBACK TO call'),
    insert: db.prepare(`
      INSERT INTO intents (id, kind, status, live, room_id, player_id, amount, unit, description,
        callback_token, idempotency_key, open_key, group_id, expires_at, created_at,
        updated_at, next_check_at, checks, meta)
      VALUES (:id, :kind, 'creating', 1, :room_id, :player_id, :amount, :unit, :description,
        :callback_token, :idempotency_key, :open_key, :group_id, :expires_at, :now,
        :now, :next_check_at, 0, :meta)
      RETURNING ${COLUMNS}`),
    appendMove: db.prepare('INSERT INTO moves (intent, step, at, note) VALUES (?, ?, ?, ?)'),
    moves: db.prepare(`SELECT m.step, m.at, n.text AS note
      FROM moves AS m LEFT JOIN notes AS n ON n.id = m.note
      WHERE m.intent = ? ORDER BY m.step`),
    noteId: db.prepare('SELECT id FROM notes WHERE text = ?'),
    addNote: db.prepare('INSERT INTO notes (text) VALUES (?) RETURNING id'),
    byId: db.prepare(`SELECT ${COLUMNS} FROM intents WHERE id = ?`),
    recordEvent: db.prepare('INSERT OR IGNORE INTO events (id, seen_at) VALUES (?, ?)'),
    forgetEvents: db.prepare('DELETE FROM events WHERE seen_at < ?'),
    byToken: db.prepare(`SELECT ${COLUMNS} FROM intents WHERE callback_token = ?`),
    byRemote: db.prepare(
      `SELECT ${COLUMNS} FROM intents WHERE kind = ? AND remote_id = ? ORDER BY created_at, seq LIMIT 1`,
    ),
    openByRoom: db.prepare(open.replace('%col', 'room_id')),
    openByPlayer: db.prepare(open.replace('%col', 'player_id')),
    byGroup: db.prepare(
      `SELECT ${COLUMNS} FROM intents WHERE group_id = ? AND group_id IS NOT NULL ORDER BY created_at, seq`,
    ),
    // Leases are bookkeeping about who is looking, not a change to the intent: updated_at stays.
    claim: db.prepare(`
      UPDATE intents SET lease_owner = :owner, lease_until = :until
      WHERE seq IN (
        SELECT seq FROM intents
        WHERE next_check_at <= :now AND next_check_at IS NOT NULL AND ${LIVE_SQL}
          AND (lease_owner IS NULL OR lease_until IS NULL OR lease_until <= :now)
        ORDER BY next_check_at, created_at, seq
        LIMIT :limit)
      RETURNING ${COLUMNS}`),
    release: db.prepare(
      'UPDATE intents SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?',
    ),
    countOpen: db.prepare(
      `SELECT COUNT(*) AS open FROM intents WHERE player_id = ? AND ${LIVE_SQL}`,
    ),
    openKeyHolder: db.prepare(`SELECT id FROM intents WHERE open_key = ? AND ${LIVE_SQL}`),
    payoutIndex: {
      player: db.prepare(PAYOUT_INDEXES.player),
      room: db.prepare(PAYOUT_INDEXES.room),
      game: db.prepare(PAYOUT_INDEXES.game),
    },
    reservedByPlayer: reserved(db, `player_id = ? AND ${PAYOUT_SQL}`),
    reservedByRoom: reserved(db, `room_id = ? AND ${PAYOUT_SQL}`),
    reservedByGame: reserved(db, PAYOUT_SQL),
    unknowns: db.prepare(
      `SELECT ${COLUMNS} FROM intents WHERE status = 'unknown' ORDER BY created_at, seq LIMIT ?`,
    ),
    // The start-up sweep: the same WHERE terms as the due index, so it walks only open intents.
    advance: db.prepare(`
      UPDATE intents SET next_check_at = :at
      WHERE next_check_at IS NOT NULL AND ${LIVE_SQL} AND next_check_at > :at
        AND kind <> 'match'`),
  } satisfies Record<string, StatementSync | Record<string, StatementSync>>;
}

/** What a budget window holds: payouts created after `since`, unless expired or failed. */
function reserved(db: DatabaseSync, where: string): StatementSync {
  const statement = db.prepare(`
    SELECT COALESCE(SUM(CAST(amount AS INTEGER)), 0) AS reserved FROM intents
    WHERE ${where} AND created_at > ? AND status NOT IN ('expired', 'failed')`);
  statement.setReadBigInts(true);
  return statement;
}

/** SQLITE_BUSY and its extended codes (the low byte is the primary code). */
function busyOrSelf(err: unknown): unknown {
  const errcode = (err as { errcode?: unknown } | null)?.errcode;
  return typeof errcode === 'number' && (errcode & 0xff) === 5
    ? new LedgerBusyError({ cause: err })
    : err;
}

function duplicateOrSelf(err: unknown): unknown {
  if (err instanceof Error && (err as { errcode?: number }).errcode === 2067) {
    // SQLITE_CONSTRAINT_UNIQUE names the column; the id, the token and the open key are unique.
    if (err.message.includes('intents.id')) return new DuplicateIntentError('id', { cause: err });
    if (err.message.includes('intents.callback_token')) {
      return new DuplicateIntentError('callbackToken', { cause: err });
    }
    if (err.message.includes('intents.open_key')) {
      return new DuplicateIntentError('openKey', { cause: err });
    }
  }
  return err;
}
