/**
 * The SQLite driver's primitives, synchronous, on one connection, inline (':memory:') or on the
 * worker thread (a file). Every write is one `BEGIN IMMEDIATE ... COMMIT` (a savepoint inside a
 * batch), so a status change is a compare-and-set on the status column; a move's UPDATE is
 * prepared per patch shape, writing only the columns the patch names.
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { LimitExceededError } from '../errors.js';
import type { ClaimCall, CreateCall, LedgerDriver, MoveCall } from './core.js';
import { DuplicateIntentError, InvalidIntentError, LedgerBusyError } from './errors.js';
import type { Intent, IntentPatch, IntentStatus, NewIntent } from './intent.js';
import {
  canMove,
  INTENT_STATUSES,
  isTerminal,
  PATCH_COLUMN,
  patchFields,
  SETTLED_NOTE,
} from './intent.js';
import type { AccountBalance, JournalEntry, Posting } from './journal.js';
import { accountClass, HOUSE_CLASSES } from './journal.js';
import { lineOf, type NewOperatorAction, type OperatorAction } from './operator-log.js';
import type { LineChange, WindowRead } from './rules.js';
import * as rules from './rules.js';
import { filterTerms, LOG_FILTERS, loadSql, OPERATOR_SQL, WINDOW_SQL } from './sql.js';
import {
  COLUMN,
  COLUMNS,
  joinedSql,
  joinedToIntent,
  LIVE_SQL,
  MOVES_SQL,
  type Move,
  packId,
  packToken,
  type Row,
  rowToIntent,
  STEPS,
  unpackId,
  WINDOW_INDEXES,
} from './sqlite-schema.js';
import type { SeatGuard } from './store.js';
import type { AccountsFilter, FundsCheck, JournalFilter, OperatorLogFilter } from './validate.js';

/** Thrown inside a write whose posting is already journaled: the write is rolled back whole. */
class AlreadyJournaled extends Error {}

/** The most sources a move may list, and their parameters' names (`:from0` ...). */
const MAX_SOURCES = Math.max(
  ...INTENT_STATUSES.map((to) => INTENT_STATUSES.filter((from) => canMove(from, to)).length),
);
const FROM_PARAMS = Array.from({ length: MAX_SOURCES }, (_, i) => `from${i}`);

/** Nearly every posting names a house account: their ids are kept once committed. */
const HOUSE: ReadonlySet<string> = new Set(HOUSE_CLASSES);
/** The note texts moves and postings repeat are a few dozen. */
const MAX_KNOWN_NOTES = 1_000;

/** The statements in sql/sqlite/, by file name; the first ones answer intents' rows. */
const ROWS = [
  'insert',
  'by-remote',
  'open-by-room',
  'open-by-player',
  'by-group',
  'claim',
] as const;
const NAMES = [
  ...[...ROWS, 'unknowns', 'held', 'append-move', 'note-id', 'add-note'],
  ...['account-id', 'add-account', 'add-entry', 'add-balances', 'add-class-balances'],
  ...['account-balances', 'class-balances', 'class-accounts', 'record-event', 'release'],
  ...['count-open', 'open-key-holder', 'seat-of', 'seats-taken', 'take-seat', 'pass-seat'],
  ...['due-also', 'advance', 'open-count', ...OPERATOR_SQL],
] as const;
const LINE_COLUMNS = 'seq, at, by, action, intent_id, player_id, before, after, note';
const JOURNAL_FILTERS = {
  playerId: 'i.player_id',
  matchId: 'i.group_id',
  intentId: 'i.id',
  since: 'j.at',
};

type Params = Record<string, SQLInputValue>;
type Name = (typeof NAMES)[number];

/** The primitives SqliteLedger forwards as they are, inline or to the thread. */
export type Forwarded = Exclude<
  keyof LedgerDriver,
  'move' | 'takeToken' | 'holdCalls' | 'open' | 'close'
>;

export class SqliteCore implements Pick<LedgerDriver, Forwarded> {
  readonly #sql: Record<Name, StatementSync>;
  readonly #tx: Record<'begin' | 'commit' | 'rollback' | 'save' | 'keep' | 'undo', StatementSync>;
  readonly #byId: StatementSync;
  readonly #byToken: StatementSync;
  readonly #moves: StatementSync;
  /** Statements by shape (a move's patch, a page's filters, a window): a few dozen at most. */
  readonly #shaped = new Map<string, StatementSync>();
  /** Inside batch(): each write is a savepoint of the batch's one transaction. */
  #batching = false;
  /** The windows (`over:scope`) whose index a kept create of this connection built (or found). */
  readonly #windowIndexed = new Set<string>();
  /** Ids of shared accounts and of notes, committed: such rows never change or go. */
  readonly #knownAccounts = new Map<string, number>();
  readonly #knownNotes = new Map<string, number>();
  /** Ids the open transaction found or made, kept only once it commits. */
  #seen: [Map<string, number>, string, number][] = [];

  constructor(readonly db: DatabaseSync) {
    const text = loadSql('sqlite', NAMES, {
      columns: COLUMNS,
      live: LIVE_SQL,
      lines: LINE_COLUMNS,
    });
    const prepared = (sql: string) => db.prepare(sql);
    this.#sql = Object.fromEntries(NAMES.map((n) => [n, prepared(text[n])])) as Record<
      Name,
      StatementSync
    >;
    for (const name of [...ROWS, 'unknowns', 'held'] as const) arrays(this.#sql[name]);
    this.#tx = {
      begin: prepared('BEGIN IMMEDIATE'),
      commit: prepared('COMMIT'),
      rollback: prepared('ROLLBACK'),
      save: prepared('SAVEPOINT call'),
      keep: prepared('RELEASE call'),
      undo: prepared('ROLLBACK TO call'),
    };
    this.#byId = arrays(prepared(joinedSql('i.id = ?')));
    this.#byToken = arrays(prepared(joinedSql('i.callback_token = ?')));
    this.#moves = arrays(prepared(MOVES_SQL));
  }

  create(call: CreateCall): Intent {
    const { input, now, guards, postings } = call;
    const params: Params = {
      id: packId(input.id),
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
      live: call.counts ? 1 : 0,
    };
    try {
      const created = this.#write(() => {
        const playerOpen =
          guards.maxOpenPerPlayer === undefined
            ? undefined
            : (this.#sql['count-open'].get(input.playerId) as { open: number }).open;
        const sums = call.windows.map((w) => this.#windowSum(w, input));
        const status = rules.admit(call, playerOpen, sums);
        if (guards.maxOpenPerGame !== undefined) {
          rules.refuseGameCap(input, guards.maxOpenPerGame, this.openCount());
        }
        params.status = status;
        if (status === 'held' || status === 'completed') params.next_check_at = null;
        // A settled record is ended from its create: never live, as a terminal move leaves one.
        if (status === 'completed') params.live = null;
        const row = this.#sql.insert.get(params) as unknown as Row;
        const seq = row[COLUMN.seq] as number;
        // After the insert: a key an open intent holds is that one's answer, before any seat's.
        if (guards.seat !== undefined) this.#seat(input, seq, guards.seat);
        this.#post(seq, postings, now);
        if (call.funds !== null) this.#refuseOverdraw(call.funds);
        if (status === 'creating') return rowToIntent(row, []);
        const step = STEPS.indexOf(status);
        const note = status === 'completed' ? SETTLED_NOTE : null;
        this.#sql['append-move'].run(seq, step, now, note === null ? null : this.#noteId(note));
        return rowToIntent(row, [[step, now, note]]);
      });
      for (const w of call.windows) this.#windowIndexed.add(`${w.over}:${w.scope}`);
      return created;
    } catch (err) {
      throw duplicateOrSelf(err);
    }
  }

  /** A `funds` guard, inside the create's write after its postings: a refusal rolls it back. */
  #refuseOverdraw(funds: FundsCheck): void {
    const rows = plain(this.#sql['account-balances'].all(funds.account));
    rules.refuseOverdraw(funds, rows.find((r) => r.unit === funds.unit)?.balance ?? '0');
  }

  openKeyHolder(openKey: string): string | null {
    const holder = this.#sql['open-key-holder'].get(openKey) as { id: string } | undefined;
    return holder === undefined ? null : unpackId(holder.id);
  }

  /** What a window's creates after `since` hold, inside the create's write. */
  #windowSum({ scope, since, over }: WindowRead, input: NewIntent): bigint {
    const key = `${over}:${scope}`;
    // In the create's transaction: kept with it, or rolled back with its refusal.
    if (!this.#windowIndexed.has(key)) {
      this.#shape(`index:${key}`, false, () => WINDOW_INDEXES[key] as string).run();
    }
    const reserved = this.#shape(`window:${key}`, false, () => {
      const who = { player: 'player_id = ? AND ', room: 'room_id = ? AND ', game: '' }[scope];
      const slots = { payout: WINDOW_SQL[over], who };
      const statement = this.db.prepare(loadSql('sqlite', ['reserved'], slots).reserved);
      statement.setReadBigInts(true);
      return statement;
    });
    const who = scope === 'player' ? [input.playerId] : scope === 'room' ? [input.roomId] : [];
    return (reserved.get(...who, since) as { reserved: bigint }).reserved;
  }

  /** The player's seat in the group, inside the create's write (counts kept by triggers). */
  #seat(input: NewIntent, seq: number, seat: SeatGuard): void {
    const group = input.groupId as string;
    const holder = this.#sql['seat-of'].get(group, input.playerId) as { id: string } | undefined;
    if (holder !== undefined) {
      const id = unpackId(holder.id);
      if (id !== seat.replaces) throw new DuplicateIntentError('seat', { existingId: id });
      this.#sql['pass-seat'].run(seq, group, input.playerId);
      return;
    }
    const taken = (this.#sql['seats-taken'].get(group) as { taken: number } | undefined)?.taken;
    if (seat.seats !== undefined && (taken ?? 0) >= seat.seats) {
      throw new LimitExceededError('seats', seat.seats, input.playerId);
    }
    this.#sql['take-seat'].run(group, input.playerId, seq);
  }

  seatHolder(groupId: string, playerId: string): Intent | null {
    const holder = this.#sql['seat-of'].get(groupId, playerId) as { id: string } | undefined;
    return holder === undefined ? null : this.get(unpackId(holder.id));
  }

  get(id: string): Intent | null {
    return joinedToIntent(this.#byId.all(packId(id)));
  }

  byCallbackToken(token: string): Intent | null {
    return joinedToIntent(this.#byToken.all(packToken(token)));
  }

  byRemoteId(kind: Intent['kind'], remoteId: string): Intent | null {
    const row = this.#sql['by-remote'].get(kind, packId(remoteId)) as unknown;
    return row === undefined ? null : this.#withMoves(row as Row);
  }

  openByRoom(roomId: string): Intent[] {
    return this.#many(this.#sql['open-by-room'].all(roomId));
  }

  openByPlayer(playerId: string): Intent[] {
    return this.#many(this.#sql['open-by-player'].all(playerId));
  }

  byGroup(groupId: string): Intent[] {
    return this.#many(this.#sql['by-group'].all(groupId));
  }

  /** A move; `known`: the caller has its history, which is not read back (sqlite.ts). */
  transition(move: Omit<MoveCall, 'read'>, known = false): Intent | null {
    const { id, sources, to, patch, now, note, postings, dueAlso } = move;
    const terminal = isTerminal(to);
    const fields = patchFields(patch, terminal);
    const statement = this.#shape(`move:${terminal ? 't' : 'o'}:${fields.join(',')}`, true, () => {
      const sets = ['status = :to', 'updated_at = :now', ...patchSets(fields)];
      if (terminal) {
        sets.push('live = NULL, next_check_at = NULL, lease_owner = NULL, lease_until = NULL');
      }
      const slots = FROM_PARAMS.map((name) => `:${name}`).join(', ');
      return `UPDATE intents SET ${sets.join(', ')}
        WHERE id = :id AND status IN (${slots}) RETURNING ${COLUMNS}`;
    });
    const params = patchParams(patch, fields);
    Object.assign(params, { id: packId(id), to, now });
    for (const [i, name] of FROM_PARAMS.entries()) params[name] = sources[i] ?? null;
    return this.#journaled(() => {
      const row = statement.get(params) as unknown as Row | undefined;
      if (row === undefined) return null;
      const seq = row[COLUMN.seq] as number;
      this.#post(seq, postings, now);
      const noteId = note === null ? null : this.#noteId(note);
      this.#sql['append-move'].run(seq, STEPS.indexOf(to), now, noteId);
      if (dueAlso !== null) {
        const { status, at } = dueAlso;
        this.#sql['due-also'].run({ id: packId(dueAlso.id), status, at });
      }
      return known ? rowToIntent(row, []) : this.#withMoves(row);
    });
  }

  update(
    id: string,
    status: IntentStatus,
    patch: IntentPatch,
    now: number,
    postings: readonly Posting[] = [],
  ): Intent | null {
    const fields = patchFields(patch, false);
    const statement = this.#shape(`update:${fields.join(',')}`, true, () => {
      const sets = ['updated_at = :now', ...patchSets(fields)];
      return `UPDATE intents SET ${sets.join(', ')}
        WHERE id = :id AND status = :status RETURNING ${COLUMNS}`;
    });
    const params: Params = { ...patchParams(patch, fields), id: packId(id), status, now };
    return this.#journaled(() => {
      const row = statement.get(params) as unknown as Row | undefined;
      if (row === undefined) return null;
      this.#post(row[COLUMN.seq] as number, postings, now);
      return this.#withMoves(row);
    });
  }

  journal(query: JournalFilter): JournalEntry[] {
    const values: unknown[] = [query.after, query.limit + 1];
    const filters = { ...query, intentId: query.intentId && packId(query.intentId) };
    const terms = ['j.seq > ?1', ...filterTerms(filters, JOURNAL_FILTERS, values, '?')];
    // By time alone, the planner would walk the whole journal in seq order: its index instead.
    const byTime = terms.length === 2 && query.since !== undefined;
    const where = terms.join(' AND ');
    const statement = this.#shape(`journal:${where}`, false, () => {
      const s = this.db.prepare(`
        SELECT j.seq, i.id AS packed, j.tag, i.player_id AS playerId, i.group_id AS matchId,
          d.name AS debit, c.name AS credit, j.amount, j.unit, n.text AS why, j.at
        FROM journal AS j ${byTime ? 'INDEXED BY journal_at' : ''}
        JOIN intents AS i ON i.seq = j.intent
        JOIN accounts AS d ON d.id = j.debit JOIN accounts AS c ON c.id = j.credit
        JOIN notes AS n ON n.id = j.why
        WHERE ${where} ORDER BY j.seq LIMIT ?2`);
      s.setReadBigInts(true);
      return s;
    });
    return statement.all(...(values as SQLInputValue[])).map((row) => {
      const { packed, seq, amount, at, ...r } = row as Record<string, string | Uint8Array | bigint>;
      const intentId = unpackId(packed as string | Uint8Array);
      const entry = { ...r, id: `${intentId}:${r.tag}`, intentId, amount: String(amount) };
      return { ...entry, seq: Number(seq), at: Number(at) } as JournalEntry;
    });
  }

  classBalances(): AccountBalance[] {
    return plain(this.#sql['class-balances'].all());
  }

  accountBalances(accounts: readonly string[]): AccountBalance[] {
    return accounts.flatMap((account) => plain(this.#sql['account-balances'].all(account)));
  }

  classAccounts({ cls, after, limit }: AccountsFilter): AccountBalance[] {
    // `;` follows `:` in code order: `tab:` up to `tab;` is every `tab:<owner>`.
    const params = {
      low: `${cls}:`,
      high: `${cls};`,
      balance: after?.balance ?? null,
      name: after?.account ?? null,
      limit: limit + 1,
    };
    return plain(this.#sql['class-accounts'].all(params));
  }

  claimDue({ now, limit, owner, leaseMs, queued }: ClaimCall): Intent[] {
    const params = { now, limit, owner, until: now + leaseMs, split: queued === null ? 0 : 1 };
    const rows = this.#write(
      () => this.#sql.claim.all({ ...params, share: queued ?? 0 }) as unknown as Row[],
    );
    // RETURNING yields rows in no promised order; the contract is nextCheckAt, then age.
    const key = (r: Row) => [r[COLUMN.next_check_at] ?? 0, r[COLUMN.created_at], r[COLUMN.seq]];
    rows.sort((a, b) => {
      const [x, y] = [key(a) as number[], key(b) as number[]];
      return x.map((v, i) => v - (y[i] as number)).find((d) => d !== 0) ?? 0;
    });
    return this.#many(rows);
  }

  release(id: string, owner: string): void {
    this.#write(() => this.#sql.release.run(packId(id), owner));
  }

  inStatus(status: 'unknown' | 'held', limit: number): Intent[] {
    return this.#many(this.#sql[status === 'held' ? 'held' : 'unknowns'].all(limit));
  }

  openCount(): number {
    return Number((this.#sql['open-count'].get() as { n: number }).n);
  }

  advanceChecks(at: number): number {
    return Number(this.#write(() => this.#sql.advance.run({ at }).changes));
  }

  recordEvent(eventId: string, now: number): boolean {
    return this.#write(() => this.#sql['record-event'].run(eventId, now).changes === 1);
  }

  /** The line, after its compare-and-set (null when it changed nothing: no line). */
  appendLine(
    line: NewOperatorAction,
    now: number,
    change: LineChange | null,
  ): OperatorAction | null {
    return this.#write(() => {
      const changed = change && Number(this.#sql[change.kind].run(...change.values).changes);
      if (changed === 0) return null;
      const row = this.#sql['append-line'].get({ ...line, at: now });
      const appended = lineOf(row as Record<string, unknown>);
      // The pause's row names its line: written before it, linked after.
      if (change?.kind === 'pause') this.#sql['pause-line'].run(appended.seq);
      return appended;
    });
  }

  isBlocked(playerId: string): boolean {
    return this.#sql.blocked.get(playerId) !== undefined;
  }

  payoutPause(): OperatorAction | null {
    const row = this.#sql.paused.get();
    return row === undefined ? null : lineOf(row);
  }

  operatorLog(query: OperatorLogFilter): OperatorAction[] {
    const values: unknown[] = [query.after, query.limit + 1];
    const terms = ['seq > ?1', ...filterTerms(query, LOG_FILTERS, values, '?')];
    const where = terms.join(' AND ');
    const statement = this.#shape(`log:${where}`, false, () =>
      this.db.prepare(
        `SELECT ${LINE_COLUMNS} FROM operator_log WHERE ${where} ORDER BY seq LIMIT ?2`,
      ),
    );
    return statement.all(...(values as SQLInputValue[])).map(lineOf);
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
   * Runs `fn` in one transaction in which every write is a savepoint: one commit (one fsync)
   * for a batch of calls, each of which still fails alone. Throws LedgerBusyError when the
   * write lock cannot be had (nothing ran), and what COMMIT throws (all undone).
   */
  batch(fn: () => void): void {
    this.#begin();
    this.#batching = true;
    try {
      fn();
    } catch (err) {
      this.#seen = [];
      throw err;
    } finally {
      this.#batching = false;
    }
    this.#commit();
  }

  /** Takes the write lock up front (IMMEDIATE): a transaction never fails halfway on a lock. */
  #write<T>(fn: () => T): T {
    if (this.#batching) {
      const seen = this.#seen.length;
      this.#tx.save.run();
      try {
        const result = fn();
        this.#tx.keep.run();
        return result;
      } catch (err) {
        this.#seen.length = seen;
        this.#tx.undo.run();
        this.#tx.keep.run();
        throw busyOrSelf(err);
      }
    }
    this.#begin();
    let result: T;
    try {
      result = fn();
    } catch (err) {
      this.#seen = [];
      if (this.db.isTransaction) this.#tx.rollback.run();
      throw busyOrSelf(err);
    }
    this.#commit();
    return result;
  }

  #begin(): void {
    try {
      this.#tx.begin.run();
    } catch (err) {
      throw busyOrSelf(err);
    }
  }

  /** COMMIT; then the ids its transaction found or made are known for good. */
  #commit(): void {
    try {
      this.#tx.commit.run();
    } catch (err) {
      this.#seen = [];
      if (this.db.isTransaction) this.#tx.rollback.run();
      throw busyOrSelf(err);
    }
    for (const [known, name, id] of this.#seen) {
      if (known !== this.#knownNotes || known.size < MAX_KNOWN_NOTES) known.set(name, id);
    }
    this.#seen = [];
  }

  /** A statement by shape, prepared once; `rows`: it answers intents' rows, read as arrays. */
  #shape(key: string, rows: boolean, sql: () => string | StatementSync): StatementSync {
    let statement = this.#shaped.get(key);
    if (statement === undefined) {
      const made = sql();
      statement = typeof made === 'string' ? this.db.prepare(made) : made;
      if (rows) arrays(statement);
      this.#shaped.set(key, statement);
    }
    return statement;
  }

  /** A write that may carry postings: null, and nothing kept, when one is already journaled. */
  #journaled<T>(fn: () => T | null): T | null {
    try {
      return this.#write(fn);
    } catch (err) {
      if (err instanceof AlreadyJournaled) return null;
      throw err;
    }
  }

  /**
   * Journals `postings` of the intent `seq` and moves their balances, inside the caller's
   * write: AlreadyJournaled when an entry's id is taken, InvalidIntentError when a balance would
   * pass a signed 64-bit integer (STRICT refuses the REAL SQLite makes of it).
   */
  #post(seq: number, postings: readonly Posting[], now: number): void {
    for (const p of postings) {
      const debit = this.#accountId(p.debit);
      const credit = this.#accountId(p.credit);
      const amount = BigInt(p.amount);
      const entry = [seq, p.tag, debit, credit, amount, p.unit, this.#noteId(p.why), now] as const;
      if (this.#sql['add-entry'].run(...entry).changes === 0) throw new AlreadyJournaled();
      try {
        this.#sql['add-balances'].run(credit, p.unit, amount, debit, p.unit, -amount);
        const [to, from] = [accountClass(p.credit), accountClass(p.debit)];
        this.#sql['add-class-balances'].run(to, p.unit, amount, from, p.unit, -amount);
      } catch (err) {
        if ((err as { errcode?: unknown }).errcode !== 3091) throw err;
        throw new InvalidIntentError(
          `invalid postings: ${p.tag} would take a balance past a signed 64-bit integer`,
          { cause: err },
        );
      }
    }
  }

  #accountId(name: string): number {
    const shared = HOUSE.has(accountClass(name));
    return this.#idOf(this.#knownAccounts, shared, name, 'account-id', 'add-account');
  }

  #noteId(text: string): number {
    return this.#idOf(this.#knownNotes, true, text, 'note-id', 'add-note');
  }

  /** A row's id in `accounts` or `notes`, recorded the first time its name is seen. */
  #idOf(
    known: Map<string, number>,
    keep: boolean,
    name: string,
    find: 'account-id' | 'note-id',
    add: 'add-account' | 'add-note',
  ): number {
    const kept = known.get(name);
    if (kept !== undefined) return kept;
    const found = this.#sql[find].get(name) as { id: number } | undefined;
    const id = found?.id ?? (this.#sql[add].get(name) as { id: number }).id;
    if (keep) this.#seen.push([known, name, id]);
    return id;
  }

  #withMoves(row: Row): Intent {
    return rowToIntent(row, this.#moves.all(row[COLUMN.seq] as number) as unknown as Move[]);
  }

  #many(rows: unknown[]): Intent[] {
    return (rows as Row[]).map((row) => this.#withMoves(row));
  }
}

function patchSets(fields: readonly (keyof IntentPatch)[]): string[] {
  const sets = fields.map((field) =>
    field === 'uri'
      ? // Stored as '' when it is the code with its scheme, against the code as it will be.
        `uri = CASE WHEN :uri = 'lightning:' || ${fields.includes('code') ? ':code' : 'code'} THEN '' ELSE :uri END`
      : `${PATCH_COLUMN[field]} = :${PATCH_COLUMN[field]}`,
  );
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
    params[PATCH_COLUMN[field]] =
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

/** Rows as plain objects (node:sqlite's have no prototype). */
function plain(rows: object[]): AccountBalance[] {
  return rows.map((row) => ({ ...row }) as AccountBalance);
}

function arrays(statement: StatementSync): StatementSync {
  statement.setReturnArrays(true);
  return statement;
}

/** SQLITE_BUSY and its extended codes (the low byte is the primary code). */
function busyOrSelf(err: unknown): unknown {
  const errcode = (err as { errcode?: unknown } | null)?.errcode;
  return typeof errcode === 'number' && (errcode & 0xff) === 5
    ? new LedgerBusyError({ cause: err })
    : err;
}

/** SQLITE_CONSTRAINT_UNIQUE names the column: the id, the token and the open key are unique. */
function duplicateOrSelf(err: unknown): unknown {
  if (!(err instanceof Error) || (err as { errcode?: number }).errcode !== 2067) return err;
  for (const field of ['id', 'callbackToken', 'openKey'] as const) {
    const column = { id: 'id', callbackToken: 'callback_token', openKey: 'open_key' }[field];
    if (err.message.includes(`intents.${column}`))
      return new DuplicateIntentError(field, { cause: err });
  }
  return err;
}
