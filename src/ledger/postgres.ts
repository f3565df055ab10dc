/**
 * The relational store, shared by every process of a game on any number of machines:
 * `new PostgresLedger(process.env.DATABASE_URL)` (a URL, pg.PoolConfig or pg.Pool). Its tables
 * live in their own schema (`lightning`); `pg` is loaded only when the store opens its own pool.
 * A status change is one `UPDATE ... WHERE status = ANY($2)`; a guarded create takes advisory
 * locks on what it counts against, in one order; `claimDue` takes an advisory lock exclusive that
 * every other write takes shared, so a claim sees no write half done; postings are CTEs of the
 * intent's own write; a write whose answer a dropped connection lost reads its token
 * (`last_call`) back. Text cannot hold NUL: a key with one finds nothing, a value is refused,
 * text for people gets U+FFFD.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Pool, PoolClient, PoolConfig } from 'pg';
import { type Clock, systemClock } from '../clock.js';
import { ConfigurationError, LimitExceededError } from '../errors.js';
import { VERSION } from '../version.js';
import type { ClaimCall, CreateCall, LedgerDriver, MoveCall } from './core.js';
import { LedgerCore } from './core.js';
import {
  DuplicateIntentError,
  IncompatibleLedgerError,
  InvalidIntentError,
  LedgerBusyError,
  LedgerError,
  LedgerNotDurableError,
  LedgerUnavailableError,
} from './errors.js';
import type { Intent, IntentPatch, IntentStatus } from './intent.js';
import { isTerminal, PATCH_COLUMN, patchFields, SCHEDULE_FIELDS, SETTLED_NOTE } from './intent.js';
import type { AccountBalance, JournalEntry, Posting } from './journal.js';
import type { NewOperatorAction, OperatorAction } from './operator-log.js';
import { lineOf } from './operator-log.js';
import * as db from './postgres-schema.js';
import type { RateLimit } from './rate.js';
import type { LineChange, WindowRead } from './rules.js';
import * as rules from './rules.js';
import { filterTerms, LOG_FILTERS, loadSql, OPERATOR_SQL } from './sql.js';
import type { SeatGuard } from './store.js';
import type { AccountsFilter, FundsCheck, JournalFilter, OperatorLogFilter } from './validate.js';

/** What to connect to: a connection string, node-postgres pool options, or a ready pg.Pool. */
export type PostgresConnection = string | PoolConfig | Pool;

export interface PostgresLedgerOptions {
  /** The schema (namespace) of the tables, created if missing: letters, digits, underscores. */
  schema?: string;
  /** The time source used when a call gives no `now`. Default the system clock. */
  clock?: Clock;
  /** 'fsync' (default) refuses a server with fsync off; 'none' is for tests and benchmarks. */
  durability?: 'fsync' | 'none';
  /** Where the store's one-time warnings go. Default the console. */
  logger?: { warn(message: string): void };
  /**
   * Named (prepared) statements, default true: turn off behind a pooler that cannot keep them
   * (PgBouncer in transaction mode before 1.21).
   */
  preparedStatements?: boolean;
}

/** A capped create too near its cap to admit it unless counted exactly. */
class NearCap extends Error {}

/** A deadlock's victim was rolled back whole: made again, up to this many times. */
const DEADLOCK_RETRIES = 5;
/** How long a write whose answer was lost keeps trying to read whether it committed. */
const RECOVER_MS = 3_000;

type Queryable = Pool | PoolClient;
type Rows = Record<string, unknown>[];

class PostgresDriver implements LedgerDriver {
  readonly schema: string;
  readonly #pool: Promise<Pool>;
  /** The rate's own connection (never queued behind moves), when the store owns its pool. */
  #ratePool: Promise<Pool> | undefined;
  readonly #rateConnection: string | PoolConfig | undefined | null;
  readonly #durability: 'fsync' | 'none';
  readonly #logger: { warn(message: string): void };
  readonly #prepare: boolean;
  /** The quoted schema, ready to prefix table names. */
  readonly #s: string;
  /** Claims take it exclusive, every other write to an intent shared. */
  readonly #movesLock: string;
  /** Creates near the game's cap take it, one at a time, to count exactly. */
  readonly #countLock: string;
  /** The journal writers' lock key (db.writerLock), as pg_locks shows it. */
  readonly #writerKey: number;
  readonly #sql: ReturnType<typeof statements>;
  #closed = false;
  #opened: Promise<void> | undefined;
  /** The game's open count as the last capped create read it: a hint, never a proof. */
  #lastOpen = 0;

  constructor(connection?: PostgresConnection, options: PostgresLedgerOptions = {}) {
    this.schema = options.schema ?? 'lightning';
    if (typeof this.schema !== 'string' || !db.SCHEMA_NAME.test(this.schema)) {
      throw new ConfigurationError(
        'PostgresLedger options.schema',
        'must be letters, digits and underscores (at most 63), not starting with a digit',
      );
    }
    this.#durability = options.durability ?? 'fsync';
    if (this.#durability !== 'fsync' && this.#durability !== 'none') {
      throw new ConfigurationError(
        'PostgresLedger options.durability',
        "must be 'fsync' or 'none'",
      );
    }
    this.#logger = options.logger ?? { warn: (m) => console.warn(`[lightning] ${m}`) };
    this.#prepare = options.preparedStatements ?? true;
    this.#s = `"${this.schema}"`;
    this.#movesLock = this.#lockKey('moves');
    this.#countLock = this.#lockKey('open count');
    this.#writerKey = Number(BigInt(this.#lockKey('journal writers')) & 0x7fffffffn);
    this.#sql = statements(this.#s, this.#movesLock, this.#writerKey);
    if (isPool(connection)) {
      this.#rateConnection = null;
      guardClients(connection);
      this.#pool = Promise.resolve(connection);
    } else {
      this.#rateConnection = connection;
      this.#pool = openPool(connection);
      // A failed import (no pg) surfaces on the first call, not as an unhandled rejection.
      this.#pool.catch(() => {});
    }
  }

  async open(): Promise<void> {
    await this.#ready();
  }

  async create(create: CreateCall): Promise<Intent> {
    const { input, now, guards, postings } = create;
    const call = writeToken();
    // The row in the status the create records (rules.admit): a held or settled one is never due.
    const row = (status: IntentStatus) => [
      ...[input.id, input.kind, input.roomId, input.playerId, input.amount, input.unit],
      ...[input.description, input.callbackToken ?? null, input.idempotencyKey ?? null],
      ...[input.openKey ?? null, input.expiresAt ?? null, now],
      status === 'held' || status === 'completed' ? null : (input.nextCheckAt ?? null),
      JSON.stringify(input.meta ?? {}),
      JSON.stringify(
        status === 'completed'
          ? [
              { at: now, from: null, to: 'creating' },
              { at: now, from: 'creating', to: status, note: SETTLED_NOTE },
            ]
          : [{ at: now, from: null, to: status }],
      ),
      ...[input.groupId ?? null, call, status, create.counts],
    ];
    const journaling = postings.length > 0;
    const insert = journaling
      ? db.journaled(this.#s, this.#sql.markCte, this.#sql.insertMarked, 20)
      : this.#sql.insert;
    const params = (values: unknown[]) =>
      journaling ? [...values, ...postingParams(postings, now)] : values;
    assertNoNul(params(row('creating')));
    const { windows } = create;
    const counted = guards.maxOpenPerPlayer !== undefined || windows.length > 0;
    const cap = guards.maxOpenPerGame;
    const locks = counted || cap !== undefined ? this.#guardLocks(create, windows) : [];
    const status = (client: Queryable) =>
      counted ? this.#guard(client, create, windows) : rules.admit(create, undefined, []);
    // `exactCount`: near the game's cap; `exactShares`: past a balance shard's share.
    const attempt = async (pool: Pool, exactCount: boolean, exactShares: boolean) => {
      const plain = !counted && cap === undefined && guards.seat === undefined;
      if (plain && !exactShares && create.funds === null) {
        return this.#run(pool, insert, params(row(rules.admit(create, undefined, []))));
      }
      const held = exactCount ? [...locks, this.#countLock] : locks;
      return this.#transaction(pool, held, async (client) => {
        const values = row(await status(client));
        const rows = exactShares
          ? [await this.#exactly(client, this.#sql.insertExact, values, postings, now)]
          : await this.#run(client, insert, params(values));
        // After the insert: a key an open intent holds is that one's answer, before a seat's.
        if (guards.seat !== undefined) await this.#seat(client, create, guards.seat);
        if (create.funds !== null) await this.#refuseOverdraw(client, create.funds);
        // After the insert, whose journal writer's lock must come before the transaction's id.
        if (exactCount) await this.#run(client, this.#sql['exact-count-locks'], []);
        if (cap !== undefined) await this.#gameGuard(client, create, cap, exactCount);
        return rows;
      });
    };
    try {
      const pool = await this.#ready();
      let exactCount = cap !== undefined && this.#lastOpen + db.OPEN_STRIPES > cap;
      let exactShares = false;
      for (let deadlocks = 0; ; ) {
        try {
          return db.rowToIntent((await attempt(pool, exactCount, exactShares))[0]);
        } catch (err) {
          if (err instanceof NearCap && !exactCount) exactCount = true;
          else if (journaling && !exactShares && pastShare(err)) exactShares = true;
          else if (!deadlocked(err) || deadlocks++ >= DEADLOCK_RETRIES) throw err;
        }
      }
    } catch (err) {
      if (mayHaveCommitted(err)) {
        const mine = await this.#recover(input.id, call);
        if (mine) return mine;
      }
      throw err;
    }
  }

  async openKeyHolder(openKey: string): Promise<string | null> {
    const rows = await this.#run(await this.#ready(), this.#sql['open-key-holder'], [openKey]);
    return (rows[0]?.id as string | undefined) ?? null;
  }

  /**
   * The player's seat in the group, in the create's transaction: the count row's upsert holds it
   * until COMMIT, so creates racing for the last seat queue on it.
   */
  async #seat(client: Queryable, { input }: CreateCall, seat: SeatGuard): Promise<void> {
    const [group, player] = [input.groupId, input.playerId];
    if (seat.replaces !== undefined) {
      const passed = [input.id, group, player, seat.replaces];
      if ((await this.#run(client, this.#sql['pass-seat'], passed)).length > 0) return;
    }
    const holder = async () => {
      const [found] = await this.#run(client, this.#sql['seat-of'], [group, player]);
      return found === undefined ? null : String(found.intent_id);
    };
    const held = await holder();
    if (held !== null) throw new DuplicateIntentError('seat', { existingId: held });
    const count = [group, seat.seats ?? null];
    if ((await this.#run(client, this.#sql['take-seat-count'], count)).length === 0) {
      throw new LimitExceededError('seats', seat.seats as number, player);
    }
    const took = await this.#run(client, this.#sql['take-seat'], [group, player, input.id]);
    // The same player's other create took it first (it committed while this one waited).
    if (took.length === 0) throw new DuplicateIntentError('seat', { existingId: await holder() });
  }

  /**
   * A `funds` guard, in the create's transaction after its postings: their upsert of the
   * account's one balance row holds its lock until COMMIT, so draws on one balance queue there
   * and each reads the balance with the others' committed draws.
   */
  async #refuseOverdraw(client: Queryable, funds: FundsCheck): Promise<void> {
    const rows = await this.#run(client, this.#sql['account-balances'], [[funds.account]]);
    const row = rows.find((r) => r.unit === funds.unit);
    rules.refuseOverdraw(funds, String(row?.balance ?? '0'));
  }

  /** The advisory locks of a guarded create (player, room, game), in one global order. */
  #guardLocks({ input, guards }: CreateCall, windows: WindowRead[]): string[] {
    const keys = new Set<string>();
    if (guards.maxOpenPerPlayer !== undefined) keys.add(this.#lockKey('player', input.playerId));
    for (const { scope } of windows) {
      if (scope === 'player') keys.add(this.#lockKey('player', input.playerId));
      else if (scope === 'room') keys.add(this.#lockKey('room', input.roomId as string));
      else keys.add(this.#lockKey('game'));
    }
    return [...keys].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  }

  /** What a create's guards read, under its locks; rules.admit decides. */
  async #guard(client: Queryable, create: CreateCall, windows: WindowRead[]) {
    const { input, guards } = create;
    const values: unknown[] = [];
    const param = (value: unknown, cast = '') => `$${values.push(value)}${cast}`;
    const columns = ['1 AS one'];
    if (guards.maxOpenPerPlayer !== undefined) {
      columns.push(`(SELECT count(*) FROM ${this.#s}.intents
        WHERE player_id = ${param(input.playerId)} AND ${db.OPEN_SQL}) AS open`);
    }
    for (const [i, { scope, since, over }] of windows.entries()) {
      const who =
        scope === 'game'
          ? ''
          : `${scope}_id = ${param(scope === 'player' ? input.playerId : input.roomId)} AND `;
      columns.push(`(SELECT COALESCE(sum(amount), 0)::text FROM ${this.#s}.intents
        WHERE ${who}${db.WINDOW_SQL[over]} AND created_at > ${param(since, '::bigint')}
          AND status NOT IN ('expired', 'failed')) AS w${i}`);
    }
    const [found = {}] = await this.#run(client, `SELECT ${columns.join(',\n')}`, values);
    const sums = windows.map((_, i) => String(found[`w${i}`] ?? '0'));
    return rules.admit(create, Number(found.open ?? 0), sums);
  }

  /**
   * The game's cap, after the insert, which the trigger counted on its backend's stripe (held
   * until COMMIT): at most OPEN_STRIPES - 1 other creates are in flight uncounted, so nearer the
   * cap than that the create runs again exactly (NearCap).
   */
  async #gameGuard(client: Queryable, create: CreateCall, max: number, exact: boolean) {
    const { input, counts, guards } = create;
    const [found] = await this.#run(client, this.#sql['open-count'], []);
    const open = Number(found?.open ?? 0);
    this.#lastOpen = open;
    // A settled record is never open: the trigger did not count it.
    const mine = counts && !guards.settled ? 1 : 0;
    rules.refuseGameCap(input, max, open - mine);
    if (!exact && mine === 1 && open + db.OPEN_STRIPES - 1 > max) throw new NearCap();
  }

  get(id: string) {
    return this.#one(this.#sql['by-id'], [id], 1);
  }

  byCallbackToken(token: string) {
    return this.#one(this.#sql['by-token'], [token], 1);
  }

  byRemoteId(kind: Intent['kind'], remoteId: string) {
    return this.#one(this.#sql['by-remote'], [kind, remoteId], 2);
  }

  openByRoom(roomId: string) {
    return this.#many(this.#sql['open-by-room'], [roomId], 1);
  }

  openByPlayer(playerId: string) {
    return this.#many(this.#sql['open-by-player'], [playerId], 1);
  }

  byGroup(groupId: string) {
    return this.#many(this.#sql['by-group'], [groupId], 1);
  }

  seatHolder(groupId: string, playerId: string) {
    return this.#one(this.#sql['seat-holder'], [groupId, playerId], 2);
  }

  async move({ id, sources, to, now, patch, dueAlso, note, postings }: MoveCall) {
    const values: unknown[] = [id, sources, to, now];
    const noted = note === null ? '' : `, 'note', $${values.push(diagnostic(note))}::text`;
    const call = writeToken();
    const sets = [
      'status = $3',
      'updated_at = $4',
      `last_call = $${values.push(call)}`,
      `history = history || jsonb_build_array(jsonb_build_object('at', $4::bigint, 'from', status, 'to', $3::text${noted}))`,
      ...patchSets(patch, isTerminal(to), values),
    ];
    const write = `UPDATE ${this.#s}.intents SET ${sets.join(', ')} FROM moves
      WHERE id = $1 AND status = ANY($2::text[]) RETURNING ${db.COLUMNS}`;
    let touch: string | undefined;
    if (dueAlso !== null) {
      const [i, st, at] = [dueAlso.id, dueAlso.status, dueAlso.at].map((v) => values.push(v));
      // Reads `written`: made only with the move, in its statement.
      touch = `touched AS (UPDATE ${this.#s}.intents SET next_check_at = $${at}::bigint
        WHERE id = $${i}::text AND status = $${st}::text
          AND (next_check_at IS NULL OR next_check_at > $${at}::bigint)
          AND EXISTS (SELECT 1 FROM written))`;
    }
    return this.#write(id, call, write, values, postings, now, touch);
  }

  async update(
    id: string,
    status: IntentStatus,
    patch: IntentPatch,
    now: number,
    postings: Posting[],
  ) {
    const values: unknown[] = [id, status, now];
    const sets = ['updated_at = $3', ...patchSets(patch, isTerminal(status), values)];
    // Only an update that journals carries a token: a plain one leaves the last move's alone,
    // so that move's read-back still finds it.
    const call = writeToken();
    if (postings.length > 0) sets.push(`last_call = $${values.push(call)}`);
    const write = `UPDATE ${this.#s}.intents SET ${sets.join(', ')} FROM moves
      WHERE id = $1 AND status = $2 RETURNING ${db.COLUMNS}`;
    return this.#write(id, call, write, values, postings, now);
  }

  /**
   * Runs `write` (an UPDATE of intent `id` reading the `moves` CTE, setting `last_call = call`)
   * with its postings, on the exact path past a shard's share. An entry already journaled
   * refuses it whole (null); an answer lost with the connection is read back by its token.
   */
  async #write(
    id: string,
    call: string,
    write: string,
    values: unknown[],
    postings: Posting[],
    now: number,
    touch?: string,
  ): Promise<Intent | null> {
    // With `touch`, the write becomes the CTE `written` that it reads.
    const statement = (ctes: string) =>
      touch === undefined
        ? `WITH ${ctes}\n${write}`
        : `WITH ${ctes},\n written AS (${write}),\n ${touch}\n SELECT * FROM written`;
    try {
      if (postings.length === 0) return await this.#one(statement(this.#sql.movesCte), values, 1);
      const sql = db.journaled(this.#s, this.#sql.journalingCte, write, values.length + 1, touch);
      try {
        return await this.#one(sql, [...values, ...postingParams(postings, now)], 1);
      } catch (err) {
        if (!pastShare(err)) throw err;
        const pool = await this.#ready();
        const first = statement(this.#sql.journalingCte);
        for (let deadlocks = 0; ; deadlocks++) {
          try {
            const row = await this.#transaction(pool, [], (client) =>
              this.#exactly(client, first, values, postings, now),
            );
            return row === undefined ? null : db.rowToIntent(row);
          } catch (e) {
            if (!deadlocked(e) || deadlocks >= DEADLOCK_RETRIES) throw e;
          }
        }
      }
    } catch (err) {
      if (isJournaledAlready(err)) return null;
      if (!mayHaveCommitted(err)) throw err;
      const mine = await this.#recover(id, call);
      if (mine) return mine;
      throw err;
    }
  }

  /**
   * The answer of a write whose connection dropped: its own token in the row says it committed.
   * Tried on fresh connections for up to RECOVER_MS while a restarting server comes back; null
   * when it did not commit or the server stays away.
   */
  async #recover(id: string, call: string): Promise<Intent | null> {
    const deadline = Date.now() + RECOVER_MS;
    for (let pause = 25; ; pause = Math.min(pause * 2, 400)) {
      try {
        const rows = await this.#run(await this.#pool, this.#sql['by-call'], [id, call]);
        return rows[0] ? db.rowToIntent(rows[0]) : null;
      } catch (err) {
        if (!lostConnection(err) || Date.now() + pause > deadline || this.#closed) return null;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  /**
   * The exact path of a write with postings: `first` writes the intent, then every balance row
   * the postings name is locked and the entries and whole totals written; undefined: no row.
   */
  async #exactly(client: Queryable, first: string, values: unknown[], p: Posting[], now: number) {
    const [row] = await this.#run(client, first, values);
    if (row === undefined) return undefined;
    const accounts = [p.flatMap((e) => [e.debit, e.credit]), p.flatMap((e) => [e.unit, e.unit])];
    await this.#run(client, this.#sql.lockBalances, accounts);
    const intent = [row.id, row.player_id, row.group_id];
    await this.#run(client, this.#sql.journalExactly, [...intent, ...postingParams(p, now)]);
    return row;
  }

  async journal({ after, limit, ...filters }: JournalFilter): Promise<JournalEntry[]> {
    const keys = [filters.playerId, filters.matchId, filters.intentId];
    if (keys.some((k) => k?.includes('\u0000'))) return [];
    const values: unknown[] = [after, limit + 1];
    const where = filterTerms(filters, JOURNAL_FILTERS, values, '$');
    const page = db.journalPage(this.#s, where, this.#writerKey);
    return (await this.#run(await this.#ready(), page, values)).map(db.rowToEntry);
  }

  async classBalances(): Promise<AccountBalance[]> {
    const rows = await this.#run(await this.#ready(), this.#sql['class-balances'], []);
    return rows as unknown as AccountBalance[];
  }

  async accountBalances(names: readonly string[]): Promise<AccountBalance[]> {
    const stored = names.filter((n) => !n.includes('\u0000'));
    if (stored.length === 0) return [];
    const rows = await this.#run(await this.#ready(), this.#sql['account-balances'], [stored]);
    return rows as unknown as AccountBalance[];
  }

  async classAccounts({ cls, after, limit }: AccountsFilter): Promise<AccountBalance[]> {
    const values = [cls, after?.balance.toString() ?? null, after?.account ?? null, limit + 1];
    const rows = await this.#run(await this.#ready(), this.#sql['class-accounts'], values);
    return rows as unknown as AccountBalance[];
  }

  async claimDue({ now, limit, owner, leaseMs, queued }: ClaimCall): Promise<Intent[]> {
    const values = [owner, now + leaseMs, now, limit, queued !== null, queued ?? 0];
    assertNoNul(values);
    const rows = await this.#transaction(await this.#ready(), [this.#movesLock], (client) =>
      this.#run(client, this.#sql.claim, values),
    );
    return rows.map(db.rowToIntent);
  }

  async release(id: string, owner: string): Promise<void> {
    await this.#many(this.#sql.release, [id, owner], 2);
  }

  inStatus(status: 'unknown' | 'held', limit: number) {
    return this.#many(this.#sql[status === 'held' ? 'held' : 'unknowns'], [limit], 0);
  }

  async openCount(): Promise<number> {
    const rows = await this.#run(await this.#ready(), this.#sql['open-count'], []);
    return Number(rows[0]?.open ?? 0);
  }

  async advanceChecks(at: number): Promise<number> {
    const rows = await this.#run(await this.#ready(), this.#sql.advance, [at]);
    return Number(rows[0]?.n ?? 0);
  }

  async recordEvent(eventId: string, now: number): Promise<boolean> {
    assertNoNul([eventId]);
    const rows = await this.#run(await this.#ready(), this.#sql['record-event'], [eventId, now]);
    return rows.length === 1;
  }

  /** The line and its compare-and-set, under the log's lock: appends commit in seq order. */
  async appendLine(
    line: NewOperatorAction,
    now: number,
    change: LineChange | null,
  ): Promise<OperatorAction | null> {
    const values = [now, line.by, line.action, line.intentId, line.playerId, line.before];
    values.push(line.after, line.note);
    assertNoNul(values);
    const sql = this.#sql;
    const lock = [this.#lockKey('operator log')];
    return this.#transaction(await this.#ready(), lock, async (client) => {
      const changed = change && (await this.#run(client, sql[change.kind], change.values));
      if (changed?.length === 0) return null;
      const appended = lineOf((await this.#run(client, sql['append-line'], values))[0] ?? {});
      // The pause's row names its line: written after it.
      if (change?.kind === 'pause') await this.#run(client, sql['pause-line'], [appended.seq]);
      return appended;
    });
  }

  async payoutPause(): Promise<OperatorAction | null> {
    const [row] = await this.#run(await this.#ready(), this.#sql.paused, []);
    return row === undefined ? null : lineOf(row);
  }

  async isBlocked(id: string): Promise<boolean> {
    return (await this.#run(await this.#ready(), this.#sql.blocked, [id])).length === 1;
  }

  async operatorLog(q: OperatorLogFilter): Promise<OperatorAction[]> {
    const values: unknown[] = [q.after, q.limit + 1];
    const terms = ['seq > $1', ...filterTerms(q, LOG_FILTERS, values, '$')];
    // By the table's seq: LINE_COLUMNS names its text `seq`, which an ORDER BY would sort by.
    const sql = `SELECT ${db.LINE_COLUMNS} FROM ${this.#s}.operator_log AS l
      WHERE ${terms.join(' AND ')} ORDER BY l.seq LIMIT $2`;
    return (await this.#run(await this.#ready(), sql, values)).map(lineOf);
  }

  /** By the database's clock, shared by every process: `now` is not used. */
  async takeToken({ perSecond, burst }: RateLimit, _now: number, keep: number): Promise<number> {
    const rows = await this.#run(await this.#forRate(), this.#sql['rate-take'], [
      perSecond,
      burst,
      keep,
    ]);
    const wait = rows[0]?.wait;
    if (typeof wait !== 'string') {
      throw new IncompatibleLedgerError(`the rate row of schema "${this.schema}" is missing`);
    }
    return Number(wait);
  }

  async holdCalls(_until: number, _now: number, forMs: number): Promise<void> {
    await this.#run(await this.#forRate(), this.#sql['rate-hold'], [forMs]);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#rateConnection === null) return;
    for (const pool of [this.#ratePool, this.#pool]) {
      // Never opened (pg missing) or already ended: nothing is left to flush.
      await pool?.then((p) => p.end()).catch(() => {});
    }
  }

  async #one(sql: string, values: unknown[], keys: number): Promise<Intent | null> {
    return (await this.#many(sql, values, keys))[0] ?? null;
  }

  /** A statement that finds intents by its first `keys` values (one with NUL finds nothing). */
  async #many(sql: string, values: unknown[], keys: number): Promise<Intent[]> {
    if (values.slice(0, keys).some((v) => typeof v === 'string' && v.includes('\u0000'))) {
      return [];
    }
    assertNoNul(values.slice(keys));
    return (await this.#run(await this.#ready(), sql, values)).map(db.rowToIntent);
  }

  /** One statement, prepared once per connection under a name derived from its text. */
  /**
   * One statement, on a transaction's client or on a connection of the pool's. Not pool.query,
   * which ends its connection after any error: a refusal the server answered (a duplicate, a
   * lost race) leaves the connection sound, and a player's repeats must not cost one each.
   */
  async #run(on: Queryable, text: string, values: unknown[]): Promise<Rows> {
    const query = this.#prepare ? { name: statementName(text), text, values } : { text, values };
    if ('release' in on) {
      try {
        return (await on.query(query)).rows as Rows;
      } catch (err) {
        throw mapError(err);
      }
    }
    // Callbacks, as pool.query's own: no promise between taking the connection and the query.
    return new Promise((resolve, reject) => {
      on.connect((connectError, client, release) => {
        if (connectError || client === undefined) return reject(mapError(connectError));
        try {
          client.query(query, (err: Error | null, result: { rows: Rows }) => {
            release(err && (!isDatabaseError(err) || lostConnection(err)) ? err : undefined);
            if (err) reject(mapError(err));
            else resolve(result.rows);
          });
        } catch (err) {
          release(err as Error);
          reject(mapError(err));
        }
      });
    });
  }

  /** BEGIN with the advisory locks, `fn`, COMMIT; a connection that broke is destroyed. */
  async #transaction<T>(pool: Pool, locks: string[], fn: (c: PoolClient) => Promise<T>) {
    const client = await pool.connect().catch((err: unknown) => {
      throw mapError(err);
    });
    // Unheard, the 'error' of a client whose server dies would end the process.
    const ignore = () => {};
    client.on('error', ignore);
    let broken: Error | undefined;
    try {
      const lockSql = locks.map((k) => `pg_advisory_xact_lock(${k})`).join(', ');
      await client.query(locks.length > 0 ? `BEGIN; SELECT ${lockSql}` : 'BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch((rollback: Error) => {
        broken = rollback;
      });
      throw mapError(err);
    } finally {
      client.off('error', ignore);
      client.release(broken);
    }
  }

  /** A 64-bit advisory lock key (decimal) for this schema and `parts`. */
  #lockKey(...parts: string[]): string {
    const digest = createHash('sha256')
      .update(['colyseus-lightning', this.schema, ...parts].join('\u0000'))
      .digest();
    return digest.readBigInt64BE(0).toString();
  }

  async #forRate(): Promise<Pool> {
    const shared = await this.#ready();
    if (this.#rateConnection === null) return shared;
    if (this.#ratePool === undefined) {
      const config = this.#rateConnection;
      const opening = openPool({
        ...(typeof config === 'string' ? { connectionString: config } : config),
        max: 1,
      });
      this.#ratePool = opening;
      opening.catch(() => {
        if (this.#ratePool === opening) this.#ratePool = undefined;
      });
    }
    return this.#ratePool;
  }

  /** Once: checks durability and lays the schema out; a refusal holds for good, a failure not. */
  #ready(): Promise<Pool> {
    this.#opened ??= (async () => {
      const lock = [this.#lockKey('migrate')];
      await this.#transaction(await this.#pool, lock, async (client) => {
        await this.#checkDurability(client);
        await this.#migrate(client);
      });
    })().catch((err: unknown) => {
      if (!(err instanceof IncompatibleLedgerError) && !(err instanceof LedgerNotDurableError)) {
        this.#opened = undefined;
      }
      throw mapError(err);
    });
    return this.#opened.then(() => this.#pool);
  }

  /** The migrations the schema lacks, in the transaction that holds the migrations' lock. */
  async #migrate(client: PoolClient): Promise<void> {
    const from = await this.#layout(client);
    // CREATE SCHEMA needs a right a runtime role may lack: only a missing one is created.
    const found = 'SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1';
    if (from === 0 && (await client.query(found, [this.schema])).rows.length === 0) {
      await client.query(`CREATE SCHEMA ${this.#s}`);
    }
    for (let to = from + 1; to <= db.LAYOUT; to++) {
      await client.query(db.layoutSql(this.#s, to));
      await client.query(
        `INSERT INTO ${this.#s}.layout (version) VALUES ($1)
         ON CONFLICT (only_row) DO UPDATE SET version = EXCLUDED.version`,
        [to],
      );
    }
  }

  /** The schema's layout (0: none yet); refuses a newer library's or a pre-release one's. */
  async #layout(client: PoolClient): Promise<number> {
    const version = async (table: string) => {
      const found = await client.query('SELECT to_regclass($1) IS NOT NULL AS found', [
        `${this.#s}.${table}`,
      ]);
      if (!found.rows[0]?.found) return null;
      const { rows } = await client.query(`SELECT version FROM ${this.#s}.${table}`);
      return Number(rows[0]?.version ?? 0);
    };
    const where = `the PostgreSQL ledger in schema "${this.schema}"`;
    const old = await version('schema_version');
    if (old !== null) {
      throw new IncompatibleLedgerError(
        `${where} was written by a pre-release colyseus-lightning (schema version ${old}), whose layout this one (${VERSION}) does not read. Drop that schema, or give this ledger another ({ schema }), and start anew.`,
      );
    }
    const layout = (await version('layout')) ?? 0;
    if (layout > db.LAYOUT) {
      throw new IncompatibleLedgerError(
        `${where} has layout ${layout}, written by a newer colyseus-lightning; this one (${VERSION}) reads up to layout ${db.LAYOUT}. Upgrade colyseus-lightning in every process before starting this one.`,
      );
    }
    return layout;
  }

  async #checkDurability(client: PoolClient): Promise<void> {
    if (this.#durability === 'none') return;
    const result = await client.query(
      `SELECT current_setting('fsync') AS fsync,
              current_setting('synchronous_commit') AS synchronous_commit`,
    );
    const row = result.rows[0] as { fsync: string; synchronous_commit: string };
    if (row.fsync !== 'on') {
      throw new LedgerNotDurableError(
        "PostgresLedger refuses a server with fsync off: a crash could lose or corrupt acknowledged intents (and the money the service moved for them). Set `fsync = on` in postgresql.conf, or pass { durability: 'none' } for tests and benchmarks",
      );
    }
    if (row.synchronous_commit === 'off') {
      this.#logger.warn(
        'PostgresLedger runs with synchronous_commit off: a crash of the server may forget the last commits (up to 3 x wal_writer_delay); `synchronous_commit = on` keeps every acknowledged write',
      );
    }
  }
}

export class PostgresLedger extends LedgerCore {
  /** The schema that holds the tables (unquoted). */
  readonly schema: string;

  constructor(connection?: PostgresConnection, options: PostgresLedgerOptions = {}) {
    const driver = new PostgresDriver(connection, options);
    super(driver, options.clock ?? systemClock);
    this.schema = driver.schema;
  }
}

/** The statements whose text is fixed for a schema: sql/postgres/ and the journal's CTEs. */
function statements(s: string, movesLock: string, writerKey: number) {
  // A write that journals takes its intent's journal writer's lock after the moves lock.
  const moves = `moves AS (SELECT pg_advisory_xact_lock_shared(${movesLock}) AS held)`;
  const mark = db.writerLock(writerKey);
  const markCte = `mark AS (SELECT ${mark} AS held)`;
  const columns = `(id, kind, room_id, player_id, amount, unit, description, callback_token,
    idempotency_key, open_key, expires_at, created_at, updated_at, next_check_at, checks, meta,
    history, group_id, last_call, status, moves_money)`;
  const row = `$1, $2, $3, $4, $5::numeric, $6, $7, $8, $9, $10, $11::bigint, $12::bigint,
    $12::bigint, $13::bigint, 0, $14::json, $15::jsonb, $16, $17, $18, $19::boolean`;
  const insertMarked = `INSERT INTO ${s}.intents ${columns} SELECT ${row} FROM mark
    RETURNING ${db.COLUMNS}`;
  return {
    movesCte: moves,
    journalingCte: `moves AS (SELECT pg_advisory_xact_lock_shared(${movesLock}) AS held,
      ${mark} AS mine)`,
    markCte,
    insertMarked,
    insertExact: `WITH ${markCte}\n${insertMarked}`,
    insert: `INSERT INTO ${s}.intents ${columns} VALUES (${row}) RETURNING ${db.COLUMNS}`,
    lockBalances: db.lockBalances(s),
    journalExactly: db.journalExactly(s),
    ...loadSql('postgres', NAMES, {
      s,
      columns: db.COLUMNS,
      open: db.OPEN_SQL,
      moves,
      lines: db.LINE_COLUMNS,
      stripes: String(db.OPEN_STRIPES),
    }),
  };
}

const JOURNAL_FILTERS = {
  playerId: 'j.player_id',
  matchId: 'j.match_id',
  intentId: 'j.intent_id',
  since: 'j.at',
};

/** The statements in sql/postgres/, by file name. */
const NAMES = [
  ...['account-balances', 'class-balances', 'class-accounts', 'open-key-holder', 'open-count'],
  ...['exact-count-locks', 'seat-of', 'seat-holder', 'pass-seat', 'take-seat-count'],
  ...['take-seat', 'by-id', 'by-call', 'by-token', 'by-remote', 'open-by-room', 'open-by-player'],
  ...['by-group', 'unknowns', 'held', 'claim', 'release', 'advance', 'record-event', 'rate-take'],
  ...['rate-hold', ...OPERATOR_SQL],
] as const;

/** `col = $n` for each field the patch names (values appended); terminal moves clear the schedule. */
function patchSets(patch: IntentPatch, terminal: boolean, values: unknown[]): string[] {
  const sets = terminal ? [...SCHEDULE_FIELDS].map((f) => `${PATCH_COLUMN[f]} = NULL`) : [];
  for (const field of patchFields(patch, terminal)) {
    let value = patch[field];
    if (field === 'meta') value = JSON.stringify(value);
    else if (field === 'error' && typeof value === 'string') value = diagnostic(value);
    sets.push(`${PATCH_COLUMN[field]} = $${values.push(value)}`);
  }
  return sets;
}

/** A write's own token (`last_call`): 72 random bits. */
function writeToken(): string {
  return randomBytes(9).toString('base64url');
}

/** A prepared statement's name: the same text gets the same name on every connection. */
const names = new Map<string, string>();
function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `lightning_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    if (names.size < 10_000) names.set(text, name);
  }
  return name;
}

/** Text for people: a NUL becomes U+FFFD. */
function diagnostic(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

function assertNoNul(values: readonly unknown[]): void {
  for (const value of values.flat()) {
    if (typeof value === 'string' && value.includes('\u0000')) {
      throw new InvalidIntentError('PostgreSQL text cannot hold the NUL character (\\u0000)');
    }
  }
}

type DatabaseError = Error & { code: string; constraint?: string };

function isDatabaseError(err: unknown): err is DatabaseError {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** Whether `err`, or its cause, is a database error that passes `test`. */
function fromDatabase(err: unknown, test: (e: DatabaseError) => boolean): boolean {
  const cause = (err as { cause?: unknown } | null)?.cause;
  return [err, cause].some((e) => isDatabaseError(e) && test(e));
}

/** A write refused whole because a balance shard would pass its share (or 64 bits). */
function pastShare(err: unknown): boolean {
  return fromDatabase(
    err,
    (e) => e.code === '22003' || (e.code === '23514' && e.constraint === 'balances_within'),
  );
}

/** PostgreSQL broke a deadlock by rolling this write back whole: safe to make again. */
function deadlocked(err: unknown): boolean {
  return fromDatabase(err, (e) => e.code === '40P01');
}

/** A write refused whole because one of its entries is already in the journal. */
function isJournaledAlready(err: unknown): boolean {
  return (
    err instanceof DuplicateIntentError && fromDatabase(err, (e) => e.constraint === 'journal_id')
  );
}

/** The connection went away after the write may have been sent: it may have committed. */
function mayHaveCommitted(err: unknown): boolean {
  if (!(err instanceof LedgerUnavailableError)) return false;
  const { code, syscall } = (err.cause ?? {}) as { code?: unknown; syscall?: unknown };
  return !(syscall === 'connect' || ['ECONNREFUSED', 'ENOTFOUND', '57P03'].includes(String(code)));
}

/** The server is down, restarting or shutting down, or the connection broke. */
function lostConnection(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = String((err as { code?: unknown }).code);
  return (
    /^(08...|57P0[123]|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENOTFOUND)$/.test(code) ||
    /Connection terminated|connection timeout|Client has encountered a connection error/i.test(
      err.message,
    )
  );
}

/** A unique violation names its index; a busy refusal wrote nothing; the rest pass through. */
function mapError(err: unknown): unknown {
  if (err instanceof LedgerError || err instanceof NearCap) return err;
  if (lostConnection(err)) return new LedgerUnavailableError({ cause: err });
  if (!isDatabaseError(err)) return err;
  const unique: Record<string, 'id' | 'callbackToken' | 'openKey'> = {
    // An entry id is `<intent id>:<tag>`: on a create, only an intent id used before holds it.
    intents_id: 'id',
    journal_id: 'id',
    intents_callback_token: 'callbackToken',
    intents_open_key: 'openKey',
  };
  const field = err.code === '23505' ? unique[err.constraint ?? ''] : undefined;
  if (field !== undefined) return new DuplicateIntentError(field, { cause: err });
  if (['40001', '40P01', '55P03'].includes(err.code)) return new LedgerBusyError({ cause: err });
  // An amount past numeric's range, or a balance past a signed 64-bit integer.
  if (err.code === '22003') {
    return new InvalidIntentError('invalid write: an amount or a balance is too large to store', {
      cause: err,
    });
  }
  return err;
}

/** A write's postings as `journaled` and `journalExactly` read them: six arrays and the time. */
function postingParams(postings: readonly Posting[], now: number): unknown[] {
  const column = (f: (p: Posting) => string) => postings.map(f);
  return [
    ...[column((p) => p.tag), column((p) => p.debit), column((p) => p.credit)],
    ...[column((p) => p.amount), column((p) => p.unit), column((p) => diagnostic(p.why)), now],
  ];
}

function isPool(connection: PostgresConnection | undefined): connection is Pool {
  if (typeof connection !== 'object' || connection === null) return false;
  const candidate = connection as Partial<Pool>;
  if (typeof candidate.connect !== 'function') return false;
  if (typeof candidate.query !== 'function' || !('totalCount' in candidate)) {
    throw new ConfigurationError(
      'PostgresLedger connection',
      'pass a pg.Pool (not a pg.Client), a URL or pool options',
    );
  }
  return true;
}

/** Opens a pool with pg, loaded here and not imported: only games on PostgreSQL install it. */
async function openPool(connection: string | PoolConfig | undefined): Promise<Pool> {
  const { Pool: PoolClass } = await import('pg');
  const pool = new PoolClass(
    typeof connection === 'string' ? { connectionString: connection } : connection,
  );
  // A broken idle connection is dropped and replaced; unheard, node-postgres would throw it.
  pool.on('error', () => {});
  guardClients(pool);
  return pool;
}

const guarded = new WeakSet<Pool>();

/**
 * Every client listens for 'error' from birth, once per pool (several ledgers may share one): a
 * server killed mid-handover can deliver its FATAL before the caller listens.
 */
function guardClients(pool: Pool): void {
  if (guarded.has(pool)) return;
  guarded.add(pool);
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
}
