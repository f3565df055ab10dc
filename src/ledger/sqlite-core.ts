/**
 * The SQLite driver's statements and transactions, synchronous, on one connection: what
 * SqliteLedger runs inline (':memory:') or on its worker thread (a file). Inputs arrive parsed
 * by the core (core.ts); the statements are in sql/sqlite/, but for a move's and an update's
 * UPDATE, prepared per patch shape so that it writes only the columns the patch names.
 *
 * Every write is one `BEGIN IMMEDIATE ... COMMIT` (or a savepoint inside a batch, see batch()),
 * so a status change is a compare-and-set on the status column: of two writers moving the same
 * intent, in this process or another, exactly one gets a row back. A move's history is not
 * read back when the caller hands the intent it read (`read`) or the move is the first.
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { LimitExceededError } from '../errors.js';
import type { ClaimCall, CreateCall, MoveCall } from './core.js';
import { DuplicateIntentError, InvalidIntentError, LedgerBusyError } from './errors.js';
import type { Intent, IntentHistoryEntry, IntentPatch, IntentStatus, NewIntent } from './intent.js';
import { canMove, INTENT_STATUSES, isTerminal } from './intent.js';
import { type AccountBalance, accountClass, type JournalEntry, type Posting } from './journal.js';
import type { NewOperatorAction, OperatorAction, OperatorLogFilter } from './operator-log.js';
import type { LineChange } from './rules.js';
import * as rules from './rules.js';
import { loadSql } from './sql.js';
import { SqliteOperatorLog } from './sqlite-operator.js';
import {
  COLUMN,
  COLUMNS,
  HELD_STEP,
  joinedSql,
  joinedToIntent,
  LIVE_SQL,
  MOVES_SQL,
  type Move,
  OPEN_COUNT_SQL,
  PAYOUT_INDEXES,
  PAYOUT_SQL,
  packId,
  packToken,
  QUEUED_STEP,
  type Row,
  rowToIntent,
  STEPS,
  unpackId,
} from './sqlite-schema.js';
import type { BudgetWindow, DueAlso, SeatGuard } from './store.js';
import { type JournalFilter, SCHEDULE_FIELDS } from './validate.js';

/** Thrown inside a write whose posting is already journaled: the write is rolled back whole. */
class AlreadyJournaled extends Error {}

/** One entry's row as the journal query returns it (read as bigints: amounts pass 2^53). */
interface EntryRow {
  seq: bigint;
  id: string | Uint8Array;
  tag: string;
  player_id: string;
  group_id: string | null;
  debit: string;
  credit: string;
  amount: bigint;
  unit: string;
  why: string;
  at: bigint;
}

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

/** The most sources a move may list: every status that may move to one target (5: `failed`). */
const MAX_SOURCES = Math.max(
  ...INTENT_STATUSES.map((to) => INTENT_STATUSES.filter((from) => canMove(from, to)).length),
);
/** The names of a move's source parameters (`:from0` ...), made once. */
const FROM_PARAMS = Array.from({ length: MAX_SOURCES }, (_, i) => `from${i}`);

/**
 * The account classes every game shares (no owner: `wallet`, `inflight`, `house:...`): their
 * ids are kept once committed, so nearly every posting names one without a lookup. Accounts of
 * a player or a match are looked up: there is one per owner, and keeping them would grow with
 * the players.
 */
const SHARED_CLASSES: ReadonlySet<string> = new Set(['wallet', 'inflight', 'house']);
/** Notes kept once committed: the texts moves and postings repeat are a few dozen. */
const MAX_KNOWN_NOTES = 1_000;

type Params = Record<string, SQLInputValue>;

export class SqliteCore {
  readonly #sql: ReturnType<typeof prepareStatements>;
  /** UPDATE statements by patch shape (and target, for moves): a few dozen at most. */
  readonly #shaped = new Map<string, StatementSync>();
  /** Inside batch(): each write is a savepoint of the batch's one transaction. */
  #batching = false;
  /**
   * The budget scopes whose index a create of this connection has built (or found), once that
   * create was kept: a refused one rolls its index back with it. Until then each budgeted
   * create asks again (a no-op once the index exists).
   */
  readonly #payoutIndexed = new Set<BudgetWindow['scope']>();
  /**
   * Ids of shared accounts and of notes whose rows are committed: a row of either table never
   * changes or goes once written, so its id holds for good, in every process on the file.
   */
  readonly #knownAccounts = new Map<string, number>();
  readonly #knownNotes = new Map<string, number>();
  /**
   * Ids the open transaction found or made, kept (known*) only once it commits: a rolled-back
   * insert's id goes to the next name that is inserted.
   */
  #seen: [Map<string, number>, string, number][] = [];

  /** The operator log's statements (sqlite-operator.ts). */
  readonly #operator: SqliteOperatorLog;

  constructor(readonly db: DatabaseSync) {
    this.#sql = prepareStatements(db);
    this.#operator = new SqliteOperatorLog(db);
  }

  /** A create (core.ts), its guards decided by rules.ts inside its transaction. */
  create(call: CreateCall): Intent {
    const { input, now, guards, budgets, hold, postings } = call;
    const params: Params = {
      id: packId(input.id),
      kind: input.kind,
      status: 'creating',
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
      const created = this.#write(() => {
        const playerOpen =
          guards.maxOpenPerPlayer === undefined
            ? undefined
            : (this.#sql.countOpen.get(input.playerId) as { open: number }).open;
        const sums = rules.windowsOf(call).map((w) => this.#reserved(w.scope, input, w.since));
        const status = rules.admit(call, playerOpen, sums);
        // One row the schema's triggers keep (sqlite-schema.ts), not a count of the open intents.
        if (guards.maxOpenPerGame !== undefined) {
          rules.refuseGameCap(input, guards.maxOpenPerGame, this.openCount());
        }
        params.status = status;
        if (status === 'held') params.next_check_at = null;
        const row = this.#sql.insert.get(params) as unknown as Row;
        // After the insert: a key an open intent holds is that one's answer, before any seat's.
        if (guards.seat !== undefined) this.#seat(input, row[COLUMN.seq], guards.seat);
        this.#post(row[COLUMN.seq], postings, now);
        if (status === 'creating') return rowToIntent(row, []);
        const step = status === 'held' ? HELD_STEP : QUEUED_STEP;
        this.#sql.appendMove.run(row[COLUMN.seq], step, now, null);
        return rowToIntent(row, [[step, now, null]]);
      });
      for (const budget of budgets) this.#payoutIndexed.add(budget.scope);
      if (hold.window !== null) this.#payoutIndexed.add('player');
      return created;
    } catch (err) {
      throw duplicateOrSelf(err);
    }
  }

  /** The id of the open intent that holds `openKey`, or null. */
  openKeyHolder(openKey: string): string | null {
    const holder = this.#sql.openKeyHolder.get(openKey) as { id: string | Uint8Array } | undefined;
    return holder === undefined ? null : unpackId(holder.id);
  }

  /** What payouts created after `since` hold in a scope's window, inside the create's write. */
  #reserved(scope: BudgetWindow['scope'], input: NewIntent, since: number): bigint {
    // Part of this create's transaction: kept with it, or rolled back with its refusal.
    if (!this.#payoutIndexed.has(scope)) this.#sql.payoutIndex[scope].run();
    const row = (
      scope === 'player'
        ? this.#sql.reservedByPlayer.get(input.playerId, since)
        : scope === 'room'
          ? this.#sql.reservedByRoom.get(input.roomId, since)
          : this.#sql.reservedByGame.get(since)
    ) as { reserved: bigint };
    return row.reserved;
  }

  /**
   * The player's seat in the new intent's group (CreateGuards.seat), inside the create's write:
   * the holder row, and the group's count kept by the schema's triggers (sqlite-schema.ts).
   */
  #seat(input: NewIntent, seq: number, seat: SeatGuard): void {
    const group = input.groupId as string;
    const holder = this.#sql.seatOf.get(group, input.playerId) as
      | { intent: number; id: string | Uint8Array }
      | undefined;
    if (holder !== undefined) {
      const id = unpackId(holder.id);
      if (id !== seat.replaces) throw new DuplicateIntentError('seat', { existingId: id });
      this.#sql.passSeat.run(seq, group, input.playerId);
      return;
    }
    const taken = (this.#sql.seatsTaken.get(group) as { taken: number } | undefined)?.taken ?? 0;
    if (seat.seats !== undefined && taken >= seat.seats) {
      throw new LimitExceededError('seats', seat.seats, input.playerId);
    }
    this.#sql.takeSeat.run(group, input.playerId, seq);
  }

  /** The intent holding the player's seat in the group, or null. */
  seatHolder(groupId: string, playerId: string): Intent | null {
    const holder = this.#sql.seatOf.get(groupId, playerId) as
      | { intent: number; id: string | Uint8Array }
      | undefined;
    return holder === undefined ? null : this.get(unpackId(holder.id));
  }

  get(id: string): Intent | null {
    return joinedToIntent(this.#sql.byId.all(packId(id)));
  }

  byCallbackToken(token: string): Intent | null {
    return joinedToIntent(this.#sql.byToken.all(packToken(token)));
  }

  byRemoteId(kind: Intent['kind'], remoteId: string): Intent | null {
    return this.#one(this.#sql.byRemote.get(kind, packId(remoteId)));
  }

  openByRoom(roomId: string): Intent[] {
    return this.#many(this.#sql.openByRoom.all(roomId));
  }

  openByPlayer(playerId: string): Intent[] {
    return this.#many(this.#sql.openByPlayer.all(playerId));
  }

  byGroup(groupId: string): Intent[] {
    return this.#many(this.#sql.byGroup.all(groupId));
  }

  /** A move (core.ts MoveCall, without the caller's reading). */
  transition(move: Omit<MoveCall, 'read'>): Intent | null {
    const { id, sources, to, patch, now, note, postings, dueAlso } = move;
    const terminal = isTerminal(to);
    const fields = patchFields(patch, terminal);
    const statement = this.#rowShape(`move:${terminal ? 't' : 'o'}:${fields.join(',')}`, () =>
      moveSql(fields, terminal, COLUMNS),
    );
    return this.#journaled(() => {
      const row = statement.get(moveParams(id, sources, to, patch, now, fields)) as Row | undefined;
      if (row === undefined) return null;
      const seq = row[COLUMN.seq];
      this.#appendMove(seq, to, now, note, postings, dueAlso);
      // A move out of `creating` is the intent's first (every answer of the service), unless it
      // was recorded `held` or `queued` (a move of a step before `creating`, one key lookup):
      // its history needs no read.
      if (sources.length === 1 && sources[0] === 'creating' && !this.#sql.firstOwn.get(seq)) {
        return rowToIntent(row, [[STEPS.indexOf(to), now, note]]);
      }
      return rowToIntent(row, this.#moves(seq));
    });
  }

  /**
   * The move of an intent whose caller read it in its one source and holds it: the same write
   * as transition, answering only `seq` and what the write did not set itself (movedColumns),
   * for SqliteLedger to lay over that reading (afterMove). No history is read, nothing the
   * caller holds is sent back.
   */
  moveRead(move: Omit<MoveCall, 'read'>): unknown[] | null {
    const { id, sources, to, patch, now, note, postings, dueAlso } = move;
    const terminal = isTerminal(to);
    const fields = patchFields(patch, terminal);
    const statement = this.#rowShape(`read:${terminal ? 't' : 'o'}:${fields.join(',')}`, () =>
      moveSql(fields, terminal, `seq, ${movedColumns(fields, terminal).join(', ')}`),
    );
    return this.#journaled(() => {
      const row = statement.get(moveParams(id, sources, to, patch, now, fields)) as
        | unknown[]
        | undefined;
      if (row === undefined) return null;
      this.#appendMove(row[0] as number, to, now, note, postings, dueAlso);
      return row;
    });
  }

  /**
   * What every move writes besides its row: its postings, its step in the history, and the
   * other intent it makes due (TransitionOptions.dueAlso).
   */
  #appendMove(
    seq: number,
    to: IntentStatus,
    now: number,
    note: string | null,
    postings: readonly Posting[],
    dueAlso: DueAlso | null,
  ): void {
    this.#post(seq, postings, now);
    const noteId = note === null ? null : this.#noteId(note);
    this.#sql.appendMove.run(seq, STEPS.indexOf(to), now, noteId);
    if (dueAlso !== null) {
      this.#sql.dueAlso.run({ id: packId(dueAlso.id), status: dueAlso.status, at: dueAlso.at });
    }
  }

  update(
    id: string,
    status: IntentStatus,
    patch: IntentPatch,
    now: number,
    postings: readonly Posting[] = [],
  ): Intent | null {
    const fields = patchFields(patch, false);
    const statement = this.#rowShape(`update:${fields.join(',')}`, () => {
      const sets = ['updated_at = :now', ...patchSets(fields)];
      return `UPDATE intents SET ${sets.join(', ')}
        WHERE id = :id AND status = :status RETURNING ${COLUMNS}`;
    });
    const params: Params = { ...patchParams(patch, fields), id: packId(id), status, now };
    return this.#journaled(() => {
      const row = statement.get(params) as Row | undefined;
      if (row === undefined) return null;
      this.#post(row[COLUMN.seq], postings, now);
      return this.#one(row);
    });
  }

  /** `query` as parseJournalQuery leaves it. */
  /** Up to `limit + 1` entries: the core tells a next page by the one more. */
  journal(query: JournalFilter): JournalEntry[] {
    const terms = ['j.seq > :after'];
    const params: Params = { after: query.after, limit: query.limit + 1 };
    if (query.playerId !== undefined) {
      terms.push('i.player_id = :player');
      params.player = query.playerId;
    }
    if (query.matchId !== undefined) {
      terms.push('i.group_id = :match');
      params.match = query.matchId;
    }
    if (query.intentId !== undefined) {
      terms.push('i.id = :intent');
      params.intent = packId(query.intentId);
    }
    if (query.since !== undefined) {
      terms.push('j.at >= :since');
      params.since = query.since;
    }
    // By time alone: the planner would walk the whole journal in seq order for a recent
    // window; its index finds the window, then its few entries are sorted.
    const byTime = terms.length === 2 && query.since !== undefined;
    const statement = this.#shape(
      `journal:${terms.join(' AND ')}`,
      () => `
        SELECT j.seq, i.id, j.tag, i.player_id, i.group_id, d.name AS debit, c.name AS credit,
          j.amount, j.unit, n.text AS why, j.at
        FROM journal AS j ${byTime ? 'INDEXED BY journal_at' : ''}
        JOIN intents AS i ON i.seq = j.intent
        JOIN accounts AS d ON d.id = j.debit
        JOIN accounts AS c ON c.id = j.credit
        JOIN notes AS n ON n.id = j.why
        WHERE ${terms.join(' AND ')}
        ORDER BY j.seq LIMIT :limit`,
    );
    statement.setReadBigInts(true);
    return (statement.all(params) as unknown as EntryRow[]).map(toEntry);
  }

  classBalances(): AccountBalance[] {
    return (
      this.#sql.classBalances.all() as { class: string; unit: string; balance: bigint }[]
    ).map((r) => ({ account: r.class, unit: r.unit, balance: String(r.balance) }));
  }

  /** The balance rows of the accounts that ever moved, by unit. */
  accountBalances(accounts: readonly string[]): AccountBalance[] {
    return accounts.flatMap((account) =>
      (this.#sql.accountBalances.all(account) as { unit: string; balance: bigint }[]).map((r) => ({
        account,
        unit: r.unit,
        balance: String(r.balance),
      })),
    );
  }

  claimDue({ now, limit, owner, leaseMs, queued }: ClaimCall): Intent[] {
    const split = queued === null ? 0 : 1;
    const share = queued ?? 0;
    const until = now + leaseMs;
    const rows = this.#write(
      () => this.#sql.claim.all({ now, limit, owner, until, split, share }) as unknown as Row[],
    );
    // RETURNING yields rows in no promised order; the contract is nextCheckAt, then age.
    rows.sort(
      (a, b) =>
        (a[COLUMN.next_check_at] ?? 0) - (b[COLUMN.next_check_at] ?? 0) ||
        a[COLUMN.created_at] - b[COLUMN.created_at] ||
        a[COLUMN.seq] - b[COLUMN.seq],
    );
    return this.#many(rows);
  }

  release(id: string, owner: string): void {
    this.#write(() => this.#sql.release.run(packId(id), owner));
  }

  inStatus(status: 'unknown' | 'held', limit: number): Intent[] {
    return this.#many(this.#sql[status === 'held' ? 'held' : 'unknowns'].all(limit));
  }

  openCount(): number {
    return Number((this.#sql.openInGame.get() as { n: number }).n);
  }

  advanceChecks(at: number): number {
    return Number(this.#write(() => this.#sql.advance.run({ at }).changes));
  }

  recordEvent(eventId: string, now: number): boolean {
    // Kept for good: a signed event has no timestamp, so only its id tells a late replay.
    return this.#write(() => this.#sql.recordEvent.run(eventId, now).changes === 1);
  }

  appendLine(
    line: NewOperatorAction,
    now: number,
    change: LineChange | null,
  ): OperatorAction | null {
    return this.#write(() => this.#operator.append(line, now, change));
  }

  isBlocked(playerId: string): boolean {
    return this.#operator.isBlocked(playerId);
  }

  payoutPause(): OperatorAction | null {
    return this.#operator.paused();
  }

  operatorLog(query: OperatorLogFilter): OperatorAction[] {
    return this.#operator.page(query);
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
    try {
      this.#sql.commit.run();
      this.#keepSeen();
    } catch (err) {
      this.#seen = [];
      if (this.db.isTransaction) this.#sql.rollback.run();
      throw busyOrSelf(err);
    }
  }

  /** Takes the write lock up front (IMMEDIATE), so a transaction never fails halfway on a lock upgrade. */
  #write<T>(fn: () => T): T {
    if (this.#batching) {
      const seen = this.#seen.length;
      this.#sql.savepoint.run();
      try {
        const result = fn();
        this.#sql.releaseSavepoint.run();
        return result;
      } catch (err) {
        this.#seen.length = seen;
        this.#sql.rollbackSavepoint.run();
        this.#sql.releaseSavepoint.run();
        throw busyOrSelf(err);
      }
    }
    this.#begin();
    try {
      const result = fn();
      this.#sql.commit.run();
      this.#keepSeen();
      return result;
    } catch (err) {
      this.#seen = [];
      if (this.db.isTransaction) this.#sql.rollback.run();
      throw busyOrSelf(err);
    }
  }

  /** After a commit: the ids its transaction found or made are known for good. */
  #keepSeen(): void {
    for (const [known, name, id] of this.#seen) {
      if (known !== this.#knownNotes || known.size < MAX_KNOWN_NOTES) known.set(name, id);
    }
    this.#seen = [];
  }

  #begin(): void {
    try {
      this.#sql.begin.run();
    } catch (err) {
      throw busyOrSelf(err);
    }
  }

  #shape(key: string, sql: () => string): StatementSync {
    let statement = this.#shaped.get(key);
    if (statement === undefined) {
      statement = this.db.prepare(sql());
      this.#shaped.set(key, statement);
    }
    return statement;
  }

  /** shape() for a statement that returns intents' rows: read as arrays (Row). */
  #rowShape(key: string, sql: () => string): StatementSync {
    let statement = this.#shaped.get(key);
    if (statement === undefined) {
      statement = arrays(this.db.prepare(sql()));
      this.#shaped.set(key, statement);
    }
    return statement;
  }

  /**
   * A write that may carry postings: null when one of them is already journaled, and then
   * nothing of it is kept (its transaction or savepoint is rolled back).
   */
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
   * write. Throws AlreadyJournaled when an entry's id is taken, InvalidIntentError when a
   * balance would pass a signed 64-bit integer (STRICT refuses the REAL SQLite makes of it).
   */
  #post(seq: number, postings: readonly Posting[], now: number): void {
    for (const p of postings) {
      const debit = this.#accountId(p.debit);
      const credit = this.#accountId(p.credit);
      const amount = BigInt(p.amount);
      const entry = [seq, p.tag, debit, credit, amount, p.unit, this.#noteId(p.why), now] as const;
      if (this.#sql.addEntry.run(...entry).changes === 0) throw new AlreadyJournaled();
      try {
        this.#sql.addBalances.run(credit, p.unit, amount, debit, p.unit, -amount);
        this.#sql.addClassBalances.run(
          accountClass(p.credit),
          p.unit,
          amount,
          accountClass(p.debit),
          p.unit,
          -amount,
        );
      } catch (err) {
        if ((err as { errcode?: unknown }).errcode !== 3091) throw err;
        throw new InvalidIntentError(
          `invalid postings: ${p.tag} would take a balance past a signed 64-bit integer`,
          { cause: err },
        );
      }
    }
  }

  /** An account's id in `accounts`, recorded the first time it is named. */
  #accountId(name: string): number {
    const kept = this.#knownAccounts.get(name);
    if (kept !== undefined) return kept;
    const found = this.#sql.accountId.get(name) as { id: number } | undefined;
    const id = found?.id ?? (this.#sql.addAccount.get(name) as { id: number }).id;
    if (SHARED_CLASSES.has(accountClass(name))) this.#seen.push([this.#knownAccounts, name, id]);
    return id;
  }

  /** A note's id in `notes`, recorded the first time it is seen (inside the move's transaction). */
  #noteId(text: string): number {
    const kept = this.#knownNotes.get(text);
    if (kept !== undefined) return kept;
    const found = this.#sql.noteId.get(text) as { id: number } | undefined;
    const id = found?.id ?? (this.#sql.addNote.get(text) as { id: number }).id;
    this.#seen.push([this.#knownNotes, text, id]);
    return id;
  }

  #moves(seq: number): Move[] {
    return this.#sql.moves.all(seq) as unknown as Move[];
  }

  #one(row: unknown): Intent | null {
    return row === undefined
      ? null
      : rowToIntent(row as Row, this.#moves((row as Row)[COLUMN.seq]));
  }

  #many(rows: unknown[]): Intent[] {
    return (rows as Row[]).map((row) => rowToIntent(row, this.#moves(row[COLUMN.seq])));
  }
}

/** A move's UPDATE: its status, its patch's columns, and the end of its schedule when terminal. */
function moveSql(fields: readonly (keyof IntentPatch)[], terminal: boolean, returning: string) {
  const sets = ['status = :to', 'updated_at = :now', ...patchSets(fields)];
  if (terminal) {
    sets.push('live = NULL', 'next_check_at = NULL', 'lease_owner = NULL', 'lease_until = NULL');
  }
  const slots = FROM_PARAMS.map((name) => `:${name}`).join(', ');
  return `UPDATE intents SET ${sets.join(', ')}
    WHERE id = :id AND status IN (${slots}) RETURNING ${returning}`;
}

function moveParams(
  id: string,
  sources: readonly IntentStatus[],
  to: IntentStatus,
  patch: IntentPatch,
  now: number,
  fields: readonly (keyof IntentPatch)[],
): Params {
  const params = patchParams(patch, fields);
  params.id = packId(id);
  params.to = to;
  params.now = now;
  for (let i = 0; i < MAX_SOURCES; i++) params[FROM_PARAMS[i] as string] = sources[i] ?? null;
  return params;
}

/**
 * The columns a move's row may hold that its own write did not set, in COLUMN's order: what
 * another write may have changed since the caller read the intent (any patchable column, and
 * the lease), and `meta` always (it is read back as JSON keeps it).
 */
export function movedColumns(
  fields: readonly (keyof IntentPatch)[],
  terminal: boolean,
): (keyof typeof COLUMN)[] {
  const set = new Set<string>(fields.map((f) => PATCH_COLUMNS[f]));
  if (terminal) for (const f of SCHEDULE_FIELDS) set.add(PATCH_COLUMNS[f]);
  set.delete('meta');
  return MOVABLE.filter((column) => !set.has(column));
}

/**
 * The intent a moveRead left: `read`, the caller's reading in the move's one source, with the
 * move's status, time and patch, the columns `row` answered after its `seq` (movedColumns), and
 * its step appended to the history. Shares nothing with `read`; built in the field order of a
 * read (sqlite-schema.ts), so that every intent the store hands out has one shape.
 */
export function afterMove(
  read: Intent,
  to: IntentStatus,
  patch: IntentPatch,
  now: number,
  note: string | null,
  row: readonly unknown[],
): Intent {
  const terminal = isTerminal(to);
  const fields = patchFields(patch, terminal);
  const key = `${terminal ? 't' : 'o'}:${fields.join(',')}`;
  let plan = plans.get(key);
  if (plan === undefined) {
    plan = {};
    for (const [i, column] of movedColumns(fields, terminal).entries()) {
      plan[FIELD_OF[column] as keyof IntentPatch] = i + 1;
    }
    plans.set(key, plan);
  }
  const at = plan;
  // Answered by the row, else cleared by an ending move, else written as the patch gave it.
  const value = (field: keyof IntentPatch): unknown => {
    const i = at[field];
    if (i !== undefined) return row[i];
    return terminal && SCHEDULE_FIELDS.has(field) ? null : patch[field];
  };
  const history = read.history.map((h) => ({ ...h }));
  const step: IntentHistoryEntry = { at: now, from: read.status, to };
  if (note !== null) step.note = note;
  history.push(step);
  const remoteId = value('remoteId') as string | Uint8Array | null;
  const code = value('code') as string | null;
  const uri = value('uri') as string | null;
  const meta = value('meta') as string | null;
  return {
    id: read.id,
    kind: read.kind,
    status: to,
    roomId: read.roomId,
    playerId: read.playerId,
    amount: read.amount,
    unit: read.unit,
    description: read.description,
    remoteId: remoteId === null ? null : unpackId(remoteId),
    code,
    uri: uri === '' ? `lightning:${code}` : uri,
    callbackToken: read.callbackToken,
    idempotencyKey: read.idempotencyKey,
    openKey: read.openKey,
    groupId: read.groupId,
    expiresAt: value('expiresAt') as number | null,
    createdAt: read.createdAt,
    updatedAt: now,
    nextCheckAt: value('nextCheckAt') as number | null,
    checks: value('checks') as number,
    leaseOwner: value('leaseOwner') as string | null,
    leaseUntil: value('leaseUntil') as number | null,
    error: value('error') as string | null,
    meta: meta === null ? {} : (JSON.parse(meta) as Record<string, unknown>),
    history,
  };
}

/** Where afterMove finds each field in a moveRead's row, by move shape: a few dozen at most. */
const plans = new Map<string, Partial<Record<keyof IntentPatch, number>>>();

/** A patchable column's field. */
const FIELD_OF: Record<string, keyof IntentPatch> = Object.fromEntries(
  Object.entries(PATCH_COLUMNS).map(([field, column]) => [column, field as keyof IntentPatch]),
);

/** Every column a write may change after the insert, but the status and its time. */
const MOVABLE: readonly (keyof typeof COLUMN)[] = (
  Object.keys(COLUMN) as (keyof typeof COLUMN)[]
).filter((c) => (Object.values(PATCH_COLUMNS) as string[]).includes(c));

/** The fields a patch writes, in a fixed order (the statement cache's key). */
export function patchFields(patch: IntentPatch, terminal: boolean): (keyof IntentPatch)[] {
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

/** The statements in sql/sqlite/, by file name. */
const NAMES = [
  'insert',
  'append-move',
  'first-own',
  'note-id',
  'add-note',
  'account-id',
  'add-account',
  'add-entry',
  'add-balances',
  'add-class-balances',
  'account-balances',
  'class-balances',
  'record-event',
  'by-remote',
  'open-by-room',
  'open-by-player',
  'by-group',
  'claim',
  'release',
  'count-open',
  'open-key-holder',
  'seat-of',
  'seats-taken',
  'take-seat',
  'pass-seat',
  'due-also',
  'unknowns',
  'held',
  'advance',
] as const;

function prepareStatements(db: DatabaseSync) {
  const slots = { columns: COLUMNS, live: LIVE_SQL, payout: PAYOUT_SQL };
  const sql = loadSql('sqlite', NAMES, slots);
  const reserved = (who: string) => {
    const statement = db.prepare(loadSql('sqlite', ['reserved'], { ...slots, who }).reserved);
    statement.setReadBigInts(true);
    return statement;
  };
  const statements = {
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
    savepoint: db.prepare('SAVEPOINT call'),
    releaseSavepoint: db.prepare('RELEASE call'),
    rollbackSavepoint: db.prepare('ROLLBACK TO call'),
    insert: db.prepare(sql.insert),
    appendMove: db.prepare(sql['append-move']),
    firstOwn: db.prepare(sql['first-own']),
    moves: arrays(db.prepare(MOVES_SQL)),
    noteId: db.prepare(sql['note-id']),
    addNote: db.prepare(sql['add-note']),
    accountId: db.prepare(sql['account-id']),
    addAccount: db.prepare(sql['add-account']),
    addEntry: db.prepare(sql['add-entry']),
    addBalances: db.prepare(sql['add-balances']),
    addClassBalances: db.prepare(sql['add-class-balances']),
    accountBalances: bigInts(db.prepare(sql['account-balances'])),
    classBalances: bigInts(db.prepare(sql['class-balances'])),
    byId: arrays(db.prepare(joinedSql('i.id = ?'))),
    recordEvent: db.prepare(sql['record-event']),
    byToken: arrays(db.prepare(joinedSql('i.callback_token = ?'))),
    byRemote: db.prepare(sql['by-remote']),
    openByRoom: db.prepare(sql['open-by-room']),
    openByPlayer: db.prepare(sql['open-by-player']),
    byGroup: db.prepare(sql['by-group']),
    claim: db.prepare(sql.claim),
    release: db.prepare(sql.release),
    countOpen: db.prepare(sql['count-open']),
    openInGame: db.prepare(OPEN_COUNT_SQL),
    openKeyHolder: db.prepare(sql['open-key-holder']),
    seatOf: db.prepare(sql['seat-of']),
    seatsTaken: db.prepare(sql['seats-taken']),
    takeSeat: db.prepare(sql['take-seat']),
    passSeat: db.prepare(sql['pass-seat']),
    dueAlso: db.prepare(sql['due-also']),
    payoutIndex: {
      player: db.prepare(PAYOUT_INDEXES.player),
      room: db.prepare(PAYOUT_INDEXES.room),
      game: db.prepare(PAYOUT_INDEXES.game),
    },
    reservedByPlayer: reserved('player_id = ? AND '),
    reservedByRoom: reserved('room_id = ? AND '),
    reservedByGame: reserved(''),
    unknowns: db.prepare(sql.unknowns),
    held: db.prepare(sql.held),
    advance: db.prepare(sql.advance),
  } satisfies Record<string, StatementSync | Record<string, StatementSync>>;
  // The statements that return intents' rows read them as arrays (Row, in COLUMN's order).
  const { insert, byRemote, openByRoom, openByPlayer, byGroup, claim, unknowns, held } = statements;
  for (const rows of [insert, byRemote, openByRoom, openByPlayer, byGroup, claim, unknowns, held]) {
    arrays(rows);
  }
  return statements;
}

function arrays(statement: StatementSync): StatementSync {
  statement.setReturnArrays(true);
  return statement;
}

function bigInts(statement: StatementSync): StatementSync {
  statement.setReadBigInts(true);
  return statement;
}

function toEntry(row: EntryRow): JournalEntry {
  const intentId = unpackId(row.id);
  return {
    id: `${intentId}:${row.tag}`,
    seq: Number(row.seq),
    intentId,
    playerId: row.player_id,
    matchId: row.group_id,
    tag: row.tag,
    debit: row.debit,
    credit: row.credit,
    amount: String(row.amount),
    unit: row.unit,
    why: row.why,
    at: Number(row.at),
  };
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
