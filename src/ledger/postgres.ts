/**
 * The relational ledger store: intents in PostgreSQL, shared by every process of a game on any
 * number of machines, in the database a studio already backs up and replicates.
 *
 * Usage:
 *   const ledger = new PostgresLedger(process.env.DATABASE_URL); // a URL, pg.PoolConfig,
 *   const lightning = createLightning({ ledger, ... });           // or a ready pg.Pool
 *
 * Footprint: one pg.Pool (none when given one; node-postgres's default of up to 10
 * connections), and a second of one connection for the rate's takes once one is taken (not
 * with a given pool), no timers. A move, an update, a release and a read are one statement each (one
 * round trip), journal postings included; a create is one INSERT, or four round trips when it
 * has guards (five with the game's cap, and near that cap the create may run twice; three more
 * with a seat: the player's, the group's count, the new holder); a claim
 * is three. A write with postings holds no lock that other writes wait on
 * but its intent's and its balance rows (a house account's are split in shards, one per
 * connection: postgres-schema.ts), so writes on different intents commit together; a write
 * that would take a shard past its share of 64 bits is made again on the exact path, a
 * transaction of three statements more (only near 2^63 / 16, about 5.8e17 msats). On a 2-core
 * test machine shared with other work, 16 moves in flight made about 1,600 moves/s with a
 * posting each against 2,200 without (one posting committing at a time, before: 300 against
 * 1,700; bench/README.md, 5). A journal page is one statement; it reads pg_locks only when
 * entries it can see wait above its snapshot's xmin.
 * Statements are prepared once per connection (`preparedStatements: false` for poolers that
 * cannot keep them). `pg` is loaded only when this store opens its own pool, so importing the
 * ledger never requires it.
 *
 * Tables live in their own schema (namespace), `lightning` unless `{ schema }` says otherwise;
 * the store lays them out on first use (sql/postgres/migrations/, schema.sql to read), under an
 * advisory lock so that processes starting together do it once, and refuses a schema a newer
 * or a pre-release library wrote (IncompatibleLedgerError). Once laid out, the store needs only
 * SELECT, INSERT, UPDATE and DELETE on its tables.
 *
 * Atomicity across processes:
 * - a status change is one compare-and-set: `UPDATE ... WHERE id = $1 AND status = ANY($2)
 *   RETURNING`; of two writers making one move, exactly one gets a row back;
 * - `create` with guards takes transaction-level advisory locks on the player, room and game it
 *   counts against (in one global order, so two creates never deadlock), sums and counts under
 *   them, then inserts; open keys are a partial unique index;
 * - the game's cap (`maxOpenPerGame`) takes no game-wide lock far from the cap: triggers count
 *   open intents into `open_count` (postgres-schema.ts), each write on its backend's row, and a
 *   create reads the sum after its insert, holding its own row until COMMIT. Up to 15 other
 *   creates can then be in flight unseen, so a create is admitted at once while the count has
 *   that margin (creates on different connections commit side by side); within 16
 *   of the cap it runs again under the journal lock and every opening row, reads the exact
 *   count and commits alone. Ends take other rows and never wait for creates. Measured on the
 *   2-core test machine (busy), 16 guarded creates in flight: 960 to 1,360/s, against 1,250 to
 *   1,650/s before the count existed, and 400 to 520/s when every create took one shared row;
 * - `claimDue` leases with `FOR UPDATE SKIP LOCKED` under an exclusive advisory lock that every
 *   other write to an existing intent takes shared, so a claim sees every write acknowledged
 *   before it and none half done: concurrent claims, moves and releases act as some order of
 *   them, as on the other stores (a bare SKIP LOCKED would pass over an intent whose move is
 *   still committing, and hand out fewer than any order of the calls would);
 * - postings are CTEs of the intent's own INSERT or UPDATE (postgres-schema.ts `journaled`),
 *   written only from the row it wrote; an entry id already journaled fails the statement on
 *   the journal's primary key, so the write is refused whole and answers null. Entries record
 *   their transaction's id and are listed in (xid, seq) order below a horizon no transaction
 *   that may still journal is under, so a reader paging by `after` never passes over an entry
 *   (postgres-schema.ts, header); balance rows are upserted in one sorted order.
 *
 * Journal reads: a write is listed as soon as it commits, unless a journaled write that took its
 * transaction id earlier is still running; then both are listed once it ends. Transactions that
 * journal nothing (another application's, a long report's, an autovacuum's) hold nothing back.
 * Entries of writes that ran at once are listed in the order their transactions took ids, one
 * intent's in the order of its moves; `seq` names an entry and is the cursor, and may step back
 * within a page.
 *
 * The operator log (sql/postgres/schema.sql): an append is one short
 * transaction under one advisory lock of its own (so lines commit in seq order, and a reader
 * paging by `after` never passes over one), a block's INSERT or DELETE of its `blocked` row in the
 * same transaction; `isBlocked`, which every money helper reads, is one primary-key SELECT (a
 * round trip). Operators act seldom: the lock never meets a move's.
 *
 * Durability: on first use the store reads `fsync` and `synchronous_commit` and refuses a server
 * with fsync off (LedgerNotDurableError: a crash could lose or corrupt acknowledged intents);
 * `synchronous_commit = off` is allowed with one warning (a crash may forget the last commits).
 * `durability: 'none'` allows both, for tests and benchmarks. Synchronous replication is the
 * server's business (`synchronous_standby_names`): every commit then waits for the standby.
 *
 * PostgreSQL text cannot hold the NUL character: a value to store containing one is refused
 * with InvalidIntentError, except in `error`, history notes and a posting's `why` (text for
 * people), where it becomes U+FFFD; a lookup by such a key finds nothing, and an account so
 * named never moved.
 */

import { createHash } from 'node:crypto';
import type { Pool, PoolClient, PoolConfig } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { type Clock, systemClock } from '../clock.js';
import { BudgetExceededError, ConfigurationError, LimitExceededError } from '../errors.js';
import { VERSION } from '../version.js';
import {
  DuplicateIntentError,
  IncompatibleLedgerError,
  InvalidIntentError,
  LedgerBusyError,
  LedgerClosedError,
  LedgerNotDurableError,
  LedgerUnavailableError,
} from './errors.js';
import {
  type Intent,
  type IntentHistoryEntry,
  type IntentPatch,
  type IntentStatus,
  isTerminal,
  type NewIntent,
} from './intent.js';
import type {
  AccountBalance,
  JournalEntry,
  JournalPage,
  JournalQuery,
  Posting,
} from './journal.js';
import {
  type NewOperatorAction,
  type OperatorAction,
  type OperatorActionName,
  type OperatorLogPage,
  type OperatorLogQuery,
  parseBlock,
  parseOperatorAction,
  parseOperatorLogQuery,
  parsePause,
  parsePlayerId,
} from './operator-log.js';
import {
  COLUMNS,
  EXACT_COUNT_LOCKS,
  journalExactly,
  journaled,
  journalPage,
  LAYOUT,
  LINE_COLUMNS,
  layoutSql,
  lockBalances,
  OPEN_COUNT_SQL,
  OPEN_SQL,
  OPEN_STRIPES,
  PAYOUT_SQL,
  rateHold,
  rateTake,
  SCHEMA_NAME,
  writerLock,
} from './postgres-schema.js';
import { holdFor, parseTake, type RateLimit } from './rate.js';
import { type IntentRow, rowToEntry, rowToIntent as toIntent } from './rows.js';
import type {
  BudgetWindow,
  CreateGuards,
  LedgerStore,
  SeatGuard,
  TransitionOptions,
} from './store.js';
import {
  type HoldCheck,
  parseAccounts,
  parseClaim,
  parseCreate,
  parseEpochMs,
  parseEventId,
  parseJournalQuery,
  parseLimit,
  parseMove,
  parsePostings,
  parseUpdate,
  SCHEDULE_FIELDS,
} from './validate.js';
import { writeToken } from './write-token.js';

/** What to connect to: a connection string, node-postgres pool options, or a ready pg.Pool. */
export type PostgresConnection = string | PoolConfig | Pool;

export interface PostgresLedgerOptions {
  /**
   * The PostgreSQL schema (namespace) that holds the ledger's tables, created if missing:
   * letters, digits and underscores. Two games on one database use two schemas. Default
   * 'lightning'.
   */
  schema?: string;
  /** The time source used when a call gives no `now`. Default the system clock. */
  clock?: Clock;
  /**
   * 'fsync' (default): refuse a server with fsync off, warn once about synchronous_commit off.
   * 'none': run on any server, for tests and benchmarks only.
   */
  durability?: 'fsync' | 'none';
  /** Where the store's one-time warnings go. Default the console. */
  logger?: { warn(message: string): void };
  /**
   * Prepare each statement once per connection (named statements; about 1.4x the moves per
   * second). Turn off behind a pooler that cannot keep them: PgBouncer in transaction mode
   * before 1.21, or without `max_prepared_statements`. Default true.
   */
  preparedStatements?: boolean;
}

/** Patchable fields, their columns and the cast their parameter needs. */
const PATCH_COLUMNS: Record<keyof IntentPatch, [string, string]> = {
  remoteId: ['remote_id', ''],
  code: ['code', ''],
  uri: ['uri', ''],
  expiresAt: ['expires_at', '::bigint'],
  nextCheckAt: ['next_check_at', '::bigint'],
  checks: ['checks', '::bigint'],
  leaseOwner: ['lease_owner', ''],
  leaseUntil: ['lease_until', '::bigint'],
  error: ['error', ''],
  meta: ['meta', '::json'],
};

/**
 * What a capped create throws (and `create` catches, to run it again exactly) when the count it
 * read is too near its cap to admit it without the exact count. Never leaves the store.
 */
class NearCap extends Error {}

/** SQLSTATEs after which nothing was written and the call may simply be made again. */
const BUSY_CODES = new Set(['40001', '40P01', '55P03']);

type Queryable = Pick<Pool, 'query'>;

export class PostgresLedger implements LedgerStore {
  /** The schema that holds the tables (unquoted). */
  readonly schema: string;
  readonly #pool: Promise<Pool>;
  /**
   * A pool of one connection for the rate's takes and holds, when the store opened its own pool:
   * a take then never waits behind the pool's other queries (moves waiting for a claim's lock
   * can hold every connection), and one process's takes are one after the other anyway.
   */
  #ratePool: Promise<Pool> | undefined;
  readonly #rateConnection: string | PoolConfig | undefined | null;
  readonly #ownsPool: boolean;
  readonly #clock: Clock;
  readonly #durability: 'fsync' | 'none';
  readonly #logger: { warn(message: string): void };
  readonly #prepare: boolean;
  /** The quoted schema, ready to prefix table names. */
  readonly #s: string;
  /** The advisory lock that orders claims (exclusive) against other writes (shared). */
  readonly #movesLock: string;
  /** The advisory lock creates near the game's cap take, one at a time, to count exactly. */
  readonly #countLock: string;
  /**
   * The first half of the journal writer's lock (`writerLock`), which every write with postings
   * holds on its intent from before its transaction has an id until it ends.
   */
  readonly #writerKey: number;
  readonly #sql: ReturnType<typeof statements>;
  #closed = false;
  #opened: Promise<void> | undefined;
  /** The game's open intents as the last capped create read them: a hint, never a proof. */
  #lastOpen = 0;

  constructor(connection?: PostgresConnection, options: PostgresLedgerOptions = {}) {
    this.schema = options.schema ?? 'lightning';
    if (typeof this.schema !== 'string' || !SCHEMA_NAME.test(this.schema)) {
      throw new ConfigurationError(
        'PostgresLedger options.schema',
        'must be letters, digits and underscores (at most 63), not starting with a digit',
      );
    }
    this.#clock = options.clock ?? systemClock;
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
    // Non-negative, so that pg_locks (which shows it as an oid) shows the same number.
    this.#writerKey = Number(BigInt(this.#lockKey('journal writers')) & 0x7fffffffn);
    this.#sql = statements(this.#s, this.#movesLock, this.#writerKey);
    if (isPool(connection)) {
      this.#ownsPool = false;
      this.#rateConnection = null;
      guardClients(connection);
      this.#pool = Promise.resolve(connection);
    } else {
      this.#ownsPool = true;
      this.#rateConnection = connection;
      this.#pool = openPool(connection);
      // A failed import (pg not installed) surfaces on the first call, not as an unhandled rejection.
      this.#pool.catch(() => {});
    }
  }

  async open(): Promise<void> {
    this.#assertOpen();
    await this.#ready();
  }

  async create(
    intent: NewIntent,
    now: number = this.#clock.now(),
    guards: CreateGuards = {},
    postings?: readonly Posting[],
  ): Promise<Intent> {
    this.#assertOpen();
    const { input, checks, budgets, hold } = parseCreate(intent, now, guards);
    const entries = parsePostings(postings);
    const history: IntentHistoryEntry[] = [{ at: now, from: null, to: 'creating' }];
    const call = writeToken();
    const values = [
      input.id ?? uuidv7(),
      input.kind,
      input.roomId,
      input.playerId,
      input.amount,
      input.unit,
      input.description,
      input.callbackToken ?? null,
      input.idempotencyKey ?? null,
      input.openKey ?? null,
      input.expiresAt ?? null,
      now,
      input.nextCheckAt ?? null,
      JSON.stringify(input.meta ?? {}),
      JSON.stringify(history),
      input.groupId ?? null,
      call,
      'creating',
    ];
    // A payout the approvals hold: the same row in status `held`, never due (validate.ts holdFor).
    const heldValues = [...values];
    heldValues[12] = null;
    heldValues[14] = JSON.stringify([{ at: now, from: null, to: 'held' }]);
    heldValues[17] = 'held';
    // A payout for the queue, unless held: the same row in status `queued`, due as it says.
    if (hold.queue) {
      values[14] = JSON.stringify([{ at: now, from: null, to: 'queued' }]);
      values[17] = 'queued';
    }
    const journaling = entries.length > 0;
    const insert = journaling
      ? journaled(this.#s, this.#sql.markCte, this.#sql.insertMarked, values.length + 1)
      : this.#sql.insert;
    const paramsOf = (row: unknown[]) =>
      journaling ? [...row, ...postingParams(entries, now)] : row;
    const params = paramsOf(values);
    assertNoNul(params);
    const pool = await this.#ready();
    const counted =
      checks.maxOpenPerPlayer !== undefined || budgets.length > 0 || hold.window !== null;
    const cap = checks.maxOpenPerGame;
    const locks = counted || cap !== undefined ? this.#guardLocks(input, checks, budgets) : [];
    if (hold.window !== null && !locks.includes(this.#lockKey('player', input.playerId))) {
      locks.push(this.#lockKey('player', input.playerId));
      locks.sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
    }
    // One attempt: `exactCount` near the game's cap (no other create in flight uncounted),
    // `exactShares` past a house balance shard's share of 64 bits (the exact path of the
    // journal). A refused attempt rolled back whole: the guards are counted again.
    const attempt = (exactCount: boolean, exactShares: boolean) => {
      if (!counted && cap === undefined && !exactShares && checks.seat === undefined) {
        return this.#run(pool, insert, hold.now ? paramsOf(heldValues) : params);
      }
      return this.#transaction(
        pool,
        exactCount ? [...locks, this.#countLock] : locks,
        async (client) => {
          const held = counted
            ? await this.#guard(client, input, now, checks.maxOpenPerPlayer, budgets, hold)
            : hold.now;
          const row = held ? heldValues : values;
          let rows: Record<string, unknown>[];
          if (exactShares) {
            const exact = await this.#exactly(client, this.#sql.insertExact, row, entries, now);
            rows = exact === null ? [] : [exact];
          } else {
            rows = await this.#run(client, insert, held ? paramsOf(heldValues) : params);
          }
          // After the insert: a key an open intent holds is that one's answer, before a seat's.
          if (checks.seat !== undefined) {
            await this.#seat(client, input, values[0] as string, checks.seat);
          }
          // After the insert, which took the journal writer's lock before its transaction got
          // an id: the stripes' row locks would give it one first (postgres-schema.ts).
          if (exactCount) await client.query(EXACT_COUNT_LOCKS(this.#s));
          if (cap !== undefined) await this.#gameGuard(client, input, cap, exactCount);
          return rows;
        },
      );
    };
    try {
      // Where the last count seen was near this cap, straight to the exact count.
      let exactCount = cap !== undefined && this.#lastOpen + OPEN_STRIPES > cap;
      let exactShares = false;
      let deadlocks = 0;
      let rows: Record<string, unknown>[];
      for (;;) {
        try {
          rows = await attempt(exactCount, exactShares);
          break;
        } catch (err) {
          if (err instanceof NearCap && !exactCount) exactCount = true;
          else if (journaling && !exactShares && pastShare(err)) exactShares = true;
          // PostgreSQL rolled the loser back whole: nothing of it was written (see deadlocked).
          else if (deadlocked(err) && deadlocks++ < DEADLOCK_RETRIES) continue;
          else throw err;
        }
      }
      return toIntent(rows[0]);
    } catch (err) {
      const mapped = mapError(err);
      if (mapped instanceof LedgerUnavailableError && maybeSent(err)) {
        const mine = await this.#recover(values[0] as string, call);
        if (mine) return mine;
      }
      if (mapped instanceof DuplicateIntentError && mapped.field === 'openKey') {
        const holder = await this.#run(pool, this.#sql.openKeyHolder, [input.openKey]);
        throw new DuplicateIntentError('openKey', {
          cause: err,
          existingId: (holder[0]?.id as string | undefined) ?? null,
        });
      }
      throw mapped;
    }
  }

  /**
   * The player's seat in the new intent's group (CreateGuards.seat), in the create's transaction.
   * The count row's upsert adds one only below the cap, holding the row until COMMIT: creates
   * racing for a group's last seat queue on it, and the first to commit takes the seat (the
   * others read the count it left, and are refused). A refusal rolls the insert back.
   */
  async #seat(client: Queryable, input: NewIntent, id: string, seat: SeatGuard): Promise<void> {
    const group = input.groupId as string;
    const player = input.playerId;
    if (seat.replaces !== undefined) {
      const passed = await this.#run(client, this.#sql.passSeat, [
        id,
        group,
        player,
        seat.replaces,
      ]);
      if (passed.length > 0) return;
    }
    const holder = async () => {
      const [row] = await this.#run(client, this.#sql.seatOf, [group, player]);
      return row === undefined ? null : String(row.intent_id);
    };
    const held = await holder();
    if (held !== null) throw new DuplicateIntentError('seat', { existingId: held });
    const taken = await this.#run(client, this.#sql.takeSeatCount, [group, seat.seats ?? null]);
    if (taken.length === 0) {
      throw new LimitExceededError('seats', seat.seats as number, player);
    }
    const took = await this.#run(client, this.#sql.takeSeat, [group, player, id]);
    // The same player's other create took it first (it committed while this one waited).
    if (took.length === 0) throw new DuplicateIntentError('seat', { existingId: await holder() });
  }

  /** The advisory locks a guarded create holds: one per player, room or game it counts against. */
  #guardLocks(input: NewIntent, checks: CreateGuards, budgets: BudgetWindow[]): string[] {
    const keys = new Set<string>();
    if (checks.maxOpenPerPlayer !== undefined) keys.add(this.#lockKey('player', input.playerId));
    for (const b of budgets) {
      if (b.scope === 'player') keys.add(this.#lockKey('player', input.playerId));
      else if (b.scope === 'room') keys.add(this.#lockKey('room', input.roomId as string));
      else keys.add(this.#lockKey('game'));
    }
    // One global order: two creates that share two keys take them in the same order.
    return [...keys].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  }

  /**
   * The guards of a create, under its locks: a refusal rolls the transaction back. Resolves
   * with whether the approvals hold it (`hold`: its amount, or its player's window).
   */
  async #guard(
    client: Queryable,
    input: NewIntent,
    now: number,
    maxOpen: number | undefined,
    budgets: BudgetWindow[],
    hold: HoldCheck,
  ): Promise<boolean> {
    const values: unknown[] = [];
    const param = (value: unknown, cast = '') => {
      values.push(value);
      return `$${values.length}${cast}`;
    };
    const columns = ['1 AS one'];
    if (maxOpen !== undefined) {
      columns.push(`(SELECT count(*) FROM ${this.#s}.intents
        WHERE player_id = ${param(input.playerId)} AND ${OPEN_SQL}) AS open`);
    }
    // The rewards a window holds: created after its start, unless they ended unpaid.
    for (const [i, b] of budgets.entries()) {
      const who =
        b.scope === 'player'
          ? `player_id = ${param(input.playerId)} AND `
          : b.scope === 'room'
            ? `room_id = ${param(input.roomId)} AND `
            : '';
      columns.push(`(SELECT COALESCE(sum(amount), 0)::text FROM ${this.#s}.intents
        WHERE ${who}${PAYOUT_SQL} AND created_at > ${param(now - b.windowMs, '::bigint')}
          AND status NOT IN ('expired', 'failed')) AS b${i}`);
    }
    if (hold.window !== null && !hold.now) {
      columns.push(`(SELECT COALESCE(sum(amount), 0)::text FROM ${this.#s}.intents
        WHERE player_id = ${param(input.playerId)} AND ${PAYOUT_SQL}
          AND created_at > ${param(now - hold.window.windowMs, '::bigint')}
          AND status NOT IN ('expired', 'failed')) AS hold`);
    }
    const sql = `SELECT ${columns.join(',\n')}`;
    const [row] = await this.#run(client, sql, values);
    if (maxOpen !== undefined && Number(row?.open) >= maxOpen) {
      throw new LimitExceededError('maxOpenPerPlayer', maxOpen, input.playerId);
    }
    for (const [i, b] of budgets.entries()) {
      const held = String(row?.[`b${i}`] ?? '0');
      if (BigInt(held) + BigInt(input.amount) > BigInt(b.limitMsat)) {
        throw new BudgetExceededError(b.scope, String(b.limitMsat), held, b.windowMs);
      }
    }
    if (hold.now || hold.window === null) return hold.now;
    const sum = BigInt(String(row?.hold ?? '0'));
    return sum + BigInt(input.amount) > BigInt(hold.window.limitMsat);
  }

  /**
   * The game's cap, after the insert: the trigger has counted it on its backend's row of
   * open_count (postgres-schema.ts `openCount`), held until this transaction ends, so at most
   * OPEN_STRIPES - 1 other creates are in flight, uncounted in the sum read now. With that margin
   * to spare the create is admitted at once; nearer the cap it rejects with NearCap, and the
   * create runs again `exact` (under the count lock and EXACT_COUNT_LOCKS: no other create in
   * flight). A refusal
   * rolls the insert back.
   */
  async #gameGuard(
    client: Queryable,
    input: NewIntent,
    max: number,
    exact: boolean,
  ): Promise<void> {
    const [row] = await this.#run(client, this.#sql.openCount, []);
    const open = Number(row?.open ?? 0);
    this.#lastOpen = open;
    const mine = input.kind === 'match' ? 0 : 1;
    if (open - mine >= max) throw new LimitExceededError('maxOpenPerGame', max, input.playerId);
    if (!exact && mine === 1 && open + OPEN_STRIPES - 1 > max) throw new NearCap();
  }

  async get(id: string): Promise<Intent | null> {
    return this.#one(this.#sql.byId, [id], 1);
  }

  async byCallbackToken(token: string): Promise<Intent | null> {
    return this.#one(this.#sql.byToken, [token], 1);
  }

  async byRemoteId(kind: Intent['kind'], remoteId: string): Promise<Intent | null> {
    return this.#one(this.#sql.byRemote, [kind, remoteId], 2);
  }

  async openByRoom(roomId: string): Promise<Intent[]> {
    return this.#many(this.#sql.openByRoom, [roomId], 1);
  }

  async openByPlayer(playerId: string): Promise<Intent[]> {
    return this.#many(this.#sql.openByPlayer, [playerId], 1);
  }

  async byGroup(groupId: string): Promise<Intent[]> {
    return this.#many(this.#sql.byGroup, [groupId], 1);
  }

  async seatHolder(groupId: string, playerId: string): Promise<Intent | null> {
    return this.#one(this.#sql.seatHolder, [groupId, playerId], 2);
  }

  async transition(
    id: string,
    from: IntentStatus | readonly IntentStatus[],
    to: IntentStatus,
    options: TransitionOptions = {},
  ): Promise<Intent | null> {
    this.#assertOpen();
    const { sources, now, patch, dueAlso } = parseMove(from, to, options, () => this.#clock.now());
    const entries = parsePostings(options.postings);
    const values: unknown[] = [id, sources, to, now];
    let entry = `jsonb_build_object('at', $4::bigint, 'from', status, 'to', $3::text)`;
    if (options.note !== undefined) {
      values.push(diagnostic(options.note));
      entry = `jsonb_build_object('at', $4::bigint, 'from', status, 'to', $3::text, 'note', $5::text)`;
    }
    const call = writeToken();
    values.push(call);
    const sets = [
      'status = $3',
      'updated_at = $4',
      `last_call = $${values.length}`,
      `history = history || jsonb_build_array(${entry})`,
      ...patchSets(patch, isTerminal(to), values),
    ];
    const write = `UPDATE ${this.#s}.intents SET ${sets.join(', ')} FROM moves
      WHERE id = $1 AND status = ANY($2::text[])
      RETURNING ${COLUMNS}`;
    let touch: string | undefined;
    if (dueAlso !== null) {
      values.push(dueAlso.id, dueAlso.status, dueAlso.at);
      const [i, st, at] = [values.length - 2, values.length - 1, values.length];
      // Reads `written`: made only with the move, in its statement. Never later.
      touch = `touched AS (UPDATE ${this.#s}.intents SET next_check_at = $${at}::bigint
        WHERE id = $${i}::text AND status = $${st}::text
          AND (next_check_at IS NULL OR next_check_at > $${at}::bigint)
          AND EXISTS (SELECT 1 FROM written))`;
    }
    return this.#write(id, call, write, values, entries, now, touch);
  }

  /**
   * Runs `write` (an UPDATE of intent `id` that reads the `moves` CTE and sets `last_call =
   * call`) as one statement, alone or with the statements that journal `entries`; when that
   * would take a balance shard past its share, again on the exact path. An entry already
   * journaled refuses it whole (null); an answer lost with the connection is read back by its
   * token.
   */
  async #write(
    id: string,
    call: string,
    write: string,
    values: unknown[],
    entries: Posting[],
    now: number,
    touch?: string,
  ): Promise<Intent | null> {
    const journaling = entries.length > 0;
    // With a CTE that reads the write's row: the write itself becomes the CTE `written`.
    const alone = (ctes: string) =>
      touch === undefined
        ? `WITH ${ctes}\n${write}`
        : `WITH ${ctes},\n written AS (${write}),\n ${touch}\n SELECT * FROM written`;
    try {
      if (!journaling) {
        return await this.#one(
          touch === undefined
            ? `${this.#sql.withMovesLock}\n${write}`
            : alone(this.#sql.withMovesLock.slice('WITH '.length)),
          values,
          1,
        );
      }
      const sql = journaled(this.#s, this.#sql.journalingMovesCte, write, values.length + 1, touch);
      try {
        return await this.#one(sql, [...values, ...postingParams(entries, now)], 1);
      } catch (err) {
        if (!pastShare(err)) throw err;
        const pool = await this.#ready();
        const first = alone(this.#sql.journalingMovesCte);
        for (let deadlocks = 0; ; deadlocks++) {
          try {
            const row = await this.#transaction(pool, [], (client) =>
              this.#exactly(client, first, values, entries, now),
            );
            return row === null ? null : toIntent(row);
          } catch (e) {
            if (!deadlocked(e) || deadlocks >= DEADLOCK_RETRIES) throw mapError(e);
          }
        }
      }
    } catch (err) {
      if (isJournaledAlready(err)) return null;
      if (!(err instanceof LedgerUnavailableError) || !maybeSent(err.cause)) throw err;
      const mine = await this.#recover(id, call);
      if (mine) return mine;
      throw err;
    }
  }

  /**
   * A write whose connection dropped before its answer may have committed. Its own token in the
   * row says it did: then the write's answer is the row, and the caller (which announces moves)
   * learns that its move won; any other writer's later compare-and-set would hide it. Tried on
   * fresh connections for up to RECOVER_MS, while a restarting server comes back; null when the
   * write did not commit, or the server stays away (the caller gets the original error).
   */
  async #recover(id: string, call: string): Promise<Intent | null> {
    const deadline = Date.now() + RECOVER_MS;
    for (let pause = 25; ; pause = Math.min(pause * 2, 400)) {
      try {
        const rows = await this.#run(await this.#pool, this.#sql.byCall, [id, call]);
        return rows[0] ? toIntent(rows[0]) : null;
      } catch (err) {
        if (!lostConnection(err) || Date.now() + pause > deadline || this.#closed) return null;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  async update(
    id: string,
    status: IntentStatus,
    patch: IntentPatch,
    now: number = this.#clock.now(),
    postings?: readonly Posting[],
  ): Promise<Intent | null> {
    this.#assertOpen();
    const input = parseUpdate(status, patch, now);
    const entries = parsePostings(postings);
    const values: unknown[] = [id, status, now];
    const sets = ['updated_at = $3', ...patchSets(input, isTerminal(status), values)];
    // Only an update that journals carries a token: a plain one (a schedule, a note) leaves the
    // token of the last move alone, so that move's read-back still finds it.
    const call = writeToken();
    if (entries.length > 0) {
      values.push(call);
      sets.push(`last_call = $${values.length}`);
    }
    const write = `UPDATE ${this.#s}.intents SET ${sets.join(', ')} FROM moves
      WHERE id = $1 AND status = $2
      RETURNING ${COLUMNS}`;
    return entries.length > 0
      ? this.#write(id, call, write, values, entries, now)
      : this.#one(`${this.#sql.withMovesLock}\n${write}`, values, 1);
  }

  /**
   * The exact path of a write with postings, inside the caller's transaction: `first` writes
   * the intent (taking the journal writer's lock), then every balance row the postings name is
   * locked (a house account's every shard) and the entries and whole totals are written
   * (postgres-schema.ts `lockBalances`, `journalExactly`). Null when `first` wrote no row.
   */
  async #exactly(
    client: PoolClient,
    first: string,
    values: unknown[],
    entries: Posting[],
    now: number,
  ): Promise<Record<string, unknown> | null> {
    const [row] = await this.#run(client, first, values);
    if (row === undefined) return null;
    const accounts = entries.flatMap((p) => [p.debit, p.credit]);
    const units = entries.flatMap((p) => [p.unit, p.unit]);
    await this.#run(client, this.#sql.lockBalances, [accounts, units]);
    const { id, player_id, group_id } = row as unknown as IntentRow;
    await this.#run(client, this.#sql.journalExactly, [
      id,
      player_id,
      group_id,
      ...postingParams(entries, now),
    ]);
    return row;
  }

  async journal(query?: JournalQuery): Promise<JournalPage> {
    this.#assertOpen();
    const { after, limit, ...filters } = parseJournalQuery(query);
    const keys = [filters.playerId, filters.matchId, filters.intentId];
    // A key PostgreSQL text cannot hold matches no entry.
    if (keys.some((k) => k?.includes('\u0000'))) return { entries: [], next: null };
    const values: unknown[] = [after, limit + 1];
    const where: string[] = [];
    const filter = (column: string, value: unknown, cast = '') => {
      if (value === undefined) return;
      values.push(value);
      where.push(`j.${column} ${column === 'at' ? '>=' : '='} $${values.length}${cast}`);
    };
    filter('player_id', filters.playerId);
    filter('match_id', filters.matchId);
    filter('intent_id', filters.intentId);
    filter('at', filters.since, '::bigint');
    const pool = await this.#ready();
    const rows = await this.#run(pool, journalPage(this.#s, where, this.#writerKey), values).catch(
      (err: unknown) => {
        throw mapError(err);
      },
    );
    const entries: JournalEntry[] = rows.slice(0, limit).map(rowToEntry);
    const last = entries.at(-1);
    return { entries, next: rows.length > limit && last ? String(last.seq) : null };
  }

  async balances(accounts?: readonly string[]): Promise<AccountBalance[]> {
    this.#assertOpen();
    const names = parseAccounts(accounts);
    const pool = await this.#ready();
    try {
      if (names === undefined) {
        const rows = await this.#run(pool, this.#sql.classBalances, []);
        return rows as unknown as AccountBalance[];
      }
      const unique = [...new Set(names)];
      // A name PostgreSQL text cannot hold never moved.
      const stored = unique.filter((n) => !n.includes('\u0000'));
      const rows = (stored.length === 0
        ? []
        : await this.#run(pool, this.#sql.accountBalances, [
            stored,
          ])) as unknown as AccountBalance[];
      const found = new Map<string, AccountBalance[]>();
      for (const row of rows) found.set(row.account, [...(found.get(row.account) ?? []), row]);
      return unique.flatMap(
        (account) => found.get(account) ?? [{ account, unit: 'msats', balance: '0' }],
      );
    } catch (err) {
      throw mapError(err);
    }
  }

  async claimDue(
    now: number,
    limit: number,
    owner: string,
    leaseMs: number,
    queued?: number,
  ): Promise<Intent[]> {
    this.#assertOpen();
    parseEpochMs(now, 'now');
    parseClaim(limit, owner, leaseMs, queued);
    if (limit === 0 && !queued) return [];
    const values = [owner, now + leaseMs, now, limit, queued !== undefined, queued ?? 0];
    assertNoNul(values);
    const pool = await this.#ready();
    const rows = await this.#transaction(pool, [this.#movesLock], (client) =>
      this.#run(client, this.#sql.claim, values),
    ).catch((err: unknown) => {
      throw mapError(err);
    });
    // RETURNING yields rows in no promised order; the contract is nextCheckAt, then age.
    const order = (r: unknown) => {
      const row = r as IntentRow;
      return [Number(row.next_check_at), Number(row.created_at), Number(row.seq)] as const;
    };
    rows.sort((a, b) => {
      const [x, y] = [order(a), order(b)];
      return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    });
    return rows.map(toIntent);
  }

  async release(id: string, owner: string): Promise<void> {
    await this.#many(this.#sql.release, [id, owner], 2);
  }

  async unknowns(limit = 100): Promise<Intent[]> {
    this.#assertOpen();
    parseLimit(limit);
    if (limit === 0) return [];
    return this.#many(this.#sql.unknowns, [limit], 0);
  }

  async held(limit = 100): Promise<Intent[]> {
    this.#assertOpen();
    parseLimit(limit);
    if (limit === 0) return [];
    return this.#many(this.#sql.held, [limit], 0);
  }

  async openCount(): Promise<number> {
    this.#assertOpen();
    const rows = await this.#run(await this.#ready(), this.#sql.openCount, []);
    return Number(rows[0]?.open ?? 0);
  }

  async advanceChecks(at: number): Promise<number> {
    this.#assertOpen();
    parseEpochMs(at, 'at');
    const pool = await this.#ready();
    const result = await pool
      .query(this.#statement(this.#sql.advance, [at]))
      .catch((err: unknown) => {
        throw mapError(err);
      });
    return result.rowCount ?? 0;
  }

  async recordEvent(eventId: string, now: number = this.#clock.now()): Promise<boolean> {
    this.#assertOpen();
    parseEventId(eventId);
    parseEpochMs(now, 'now');
    const values = [eventId, now];
    assertNoNul(values);
    const pool = await this.#ready();
    const rows = await this.#run(pool, this.#sql.recordEvent, values).catch((err: unknown) => {
      throw mapError(err);
    });
    return rows.length === 1;
  }

  async recordOperatorAction(
    line: NewOperatorAction,
    now: number = this.#clock.now(),
  ): Promise<OperatorAction> {
    this.#assertOpen();
    const parsed = parseOperatorAction(line);
    parseEpochMs(now, 'now');
    return (await this.#appendLine(parsed, now, null)) as OperatorAction;
  }

  async recordBlock(
    line: NewOperatorAction,
    now: number = this.#clock.now(),
  ): Promise<OperatorAction | null> {
    this.#assertOpen();
    const parsed = parseBlock(line);
    parseEpochMs(now, 'now');
    const player = parsed.playerId as string;
    const change =
      parsed.action === 'block'
        ? {
            text: `INSERT INTO ${this.#s}.blocked (player_id, since) VALUES ($1, $2)
              ON CONFLICT (player_id) DO NOTHING RETURNING player_id`,
            values: [player, now],
          }
        : {
            text: `DELETE FROM ${this.#s}.blocked WHERE player_id = $1 RETURNING player_id`,
            values: [player],
          };
    return this.#appendLine(parsed, now, change);
  }

  /**
   * One transaction under the log's lock: the block's compare-and-set (`change`, which must
   * return a row), then the line. The lock makes appends commit in seq order.
   */
  async #appendLine(
    line: NewOperatorAction,
    now: number,
    change: { text: string; values: unknown[]; after?: string } | null,
  ): Promise<OperatorAction | null> {
    const values = [now, line.by, line.action, line.intentId, line.playerId, line.before];
    values.push(line.after, line.note);
    assertNoNul(values);
    const pool = await this.#ready();
    try {
      return await this.#transaction(pool, [this.#lockKey('operator log')], async (client) => {
        if (change !== null && (await this.#run(client, change.text, change.values)).length === 0) {
          return null;
        }
        const [row] = await this.#run(
          client,
          `INSERT INTO ${this.#s}.operator_log
            (at, by, action, intent_id, player_id, before, after, note)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${LINE_COLUMNS}`,
          values,
        );
        const appended = toLine(row as Record<string, unknown>);
        if (change?.after !== undefined) await this.#run(client, change.after, [appended.seq]);
        return appended;
      });
    } catch (err) {
      throw mapError(err);
    }
  }

  async recordPause(
    line: NewOperatorAction,
    now: number = this.#clock.now(),
  ): Promise<OperatorAction | null> {
    this.#assertOpen();
    const parsed = parsePause(line);
    parseEpochMs(now, 'now');
    // The pause's row names its line, so it is written after the line, in the same transaction
    // (under the log's lock, which every pause and resume takes: the check stands until commit).
    const change =
      parsed.action === 'pause'
        ? {
            text: `SELECT 1 AS free WHERE NOT EXISTS (SELECT 1 FROM ${this.#s}.payouts_paused)`,
            values: [],
            after: `INSERT INTO ${this.#s}.payouts_paused (line) VALUES ($1)`,
          }
        : { text: `DELETE FROM ${this.#s}.payouts_paused RETURNING line`, values: [] };
    return this.#appendLine(parsed, now, change);
  }

  async payoutPause(): Promise<OperatorAction | null> {
    this.#assertOpen();
    const pool = await this.#ready();
    const rows = await this.#run(
      pool,
      `SELECT ${LINE_COLUMNS} FROM ${this.#s}.operator_log
        WHERE seq = (SELECT line FROM ${this.#s}.payouts_paused)`,
      [],
    ).catch((err: unknown) => {
      throw mapError(err);
    });
    return rows[0] === undefined ? null : toLine(rows[0]);
  }

  /**
   * One statement on the row `rate`: every process sharing the database draws from one bucket,
   * counted by the database's clock (`now` is checked, not used).
   */
  async takeToken(limit: RateLimit, now: number, keep = 0): Promise<number> {
    this.#assertOpen();
    const { perSecond, burst } = parseTake(limit, now, keep);
    const pool = await this.#forRate();
    const rows = await this.#run(pool, rateTake(this.#s), [perSecond, burst, keep]).catch(
      (err: unknown) => {
        throw mapError(err);
      },
    );
    const wait = (rows[0] as { wait?: unknown } | undefined)?.wait;
    // The row is made with the layout and never deleted: without it, no token.
    if (typeof wait !== 'string') {
      throw new IncompatibleLedgerError(`the rate row of schema "${this.schema}" is missing`);
    }
    return Number(wait);
  }

  async holdCalls(until: number, now: number = this.#clock.now()): Promise<void> {
    this.#assertOpen();
    const forMs = holdFor(until, now);
    const pool = await this.#forRate();
    await this.#run(pool, rateHold(this.#s), [forMs]).catch((err: unknown) => {
      throw mapError(err);
    });
  }

  async isBlocked(playerId: string): Promise<boolean> {
    this.#assertOpen();
    const id = parsePlayerId(playerId);
    const pool = await this.#ready();
    const rows = await this.#run(pool, `SELECT 1 FROM ${this.#s}.blocked WHERE player_id = $1`, [
      id,
    ]).catch((err: unknown) => {
      throw mapError(err);
    });
    return rows.length === 1;
  }

  async operatorLog(query?: OperatorLogQuery): Promise<OperatorLogPage> {
    this.#assertOpen();
    const q = parseOperatorLogQuery(query);
    const terms = ['seq > $1'];
    const values: unknown[] = [q.after, q.limit + 1];
    for (const [column, value] of [
      ['intent_id', q.intentId],
      ['player_id', q.playerId],
    ] as const) {
      if (value === undefined) continue;
      values.push(value);
      terms.push(`${column} = $${values.length}`);
    }
    if (q.since !== undefined) {
      values.push(q.since);
      terms.push(`at >= $${values.length}`);
    }
    const pool = await this.#ready();
    const rows = await this.#run(
      pool,
      // By the table's seq: LINE_COLUMNS names its text `seq`, which an ORDER BY would sort by.
      `SELECT ${LINE_COLUMNS} FROM ${this.#s}.operator_log AS l WHERE ${terms.join(' AND ')}
        ORDER BY l.seq LIMIT $2`,
      values,
    ).catch((err: unknown) => {
      throw mapError(err);
    });
    const actions = rows.slice(0, q.limit).map(toLine);
    return { actions, next: rows.length > q.limit ? String(actions.at(-1)?.seq) : null };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#ownsPool) return;
    try {
      await (await this.#ratePool)?.end();
    } catch {
      // Never opened: nothing to end.
    }
    try {
      await (await this.#pool).end();
    } catch {
      // Never opened (pg missing) or already ended: nothing is left to flush.
    }
  }

  /** A read or a single-statement write that returns at most one intent. */
  async #one(sql: string, values: unknown[], keys: number): Promise<Intent | null> {
    return (await this.#many(sql, values, keys))[0] ?? null;
  }

  /**
   * One statement that finds intents by the first `keys` values. A key PostgreSQL text cannot
   * hold (NUL) matches no stored intent, so the answer is empty, as on the other stores; the
   * other values are written, so NUL there is refused.
   */
  async #many(sql: string, values: unknown[], keys: number): Promise<Intent[]> {
    this.#assertOpen();
    if (values.slice(0, keys).some((v) => typeof v === 'string' && v.includes('\u0000'))) {
      return [];
    }
    assertNoNul(values.slice(keys));
    const pool = await this.#ready();
    try {
      const rows = await this.#run(pool, sql, values);
      return rows.map(toIntent);
    } catch (err) {
      throw mapError(err);
    }
  }

  /** One statement, prepared once per connection under a name derived from its text. */
  async #run(on: Queryable, text: string, values: unknown[]): Promise<Record<string, unknown>[]> {
    return (await on.query(this.#statement(text, values))).rows as Record<string, unknown>[];
  }

  #statement(text: string, values: unknown[]) {
    return this.#prepare ? { name: statementName(text), text, values } : { text, values };
  }

  /**
   * BEGIN, the advisory locks (transaction-level: they end with it), `fn`, COMMIT; ROLLBACK on
   * any failure. A connection that broke mid-way is destroyed rather than handed back.
   */
  async #transaction<T>(
    pool: Pool,
    locks: string[],
    fn: (client: PoolClient) => Promise<T>,
  ): Promise<T> {
    const client = await pool.connect();
    // A checked-out client whose server dies emits 'error' on itself (the pool listens only to
    // idle ones): without a listener that would end the process. The query that was running
    // rejects anyway, with the same error.
    const ignore = () => {};
    client.on('error', ignore);
    let broken: Error | undefined;
    try {
      // Keys are our own 64-bit hashes (decimal digits), safe to inline: one round trip.
      const lockSql = locks.map((k) => `pg_advisory_xact_lock(${k})`).join(', ');
      await client.query(locks.length > 0 ? `BEGIN; SELECT ${lockSql}` : 'BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch (rollback) {
        broken = rollback as Error;
      }
      throw err;
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

  /**
   * Once per instance: checks durability, then lays out the schema under an advisory lock,
   * refusing one it cannot read. A connection failure is retried on the next call; a refusal
   * is not.
   */
  /** The pool a rate statement runs on: its own connection when the store owns its pool. */
  async #forRate(): Promise<Pool> {
    const shared = await this.#ready();
    if (this.#rateConnection === null) return shared;
    if (this.#ratePool === undefined) {
      const opening = openPool(rateConfig(this.#rateConnection));
      this.#ratePool = opening;
      opening.catch(() => {
        if (this.#ratePool === opening) this.#ratePool = undefined;
      });
    }
    return this.#ratePool;
  }

  #ready(): Promise<Pool> {
    this.#opened ??= (async () => {
      const pool = await this.#pool;
      const client = await pool.connect();
      const ignore = () => {};
      client.on('error', ignore);
      let broken: Error | undefined;
      try {
        await this.#checkDurability(client);
        await this.#migrate(client);
      } catch (err) {
        if (!isDatabaseError(err) && !(err instanceof IncompatibleLedgerError)) {
          broken = err as Error;
        }
        throw err;
      } finally {
        client.off('error', ignore);
        client.release(broken);
      }
    })().catch((err: unknown) => {
      if (!(err instanceof IncompatibleLedgerError) && !(err instanceof LedgerNotDurableError)) {
        this.#opened = undefined;
      }
      throw err;
    });
    return this.#opened.then(() => this.#pool);
  }

  /**
   * Brings the schema to this library's layout (sql/postgres/migrations/), each migration in a
   * transaction of its own under an advisory lock, so that processes starting together apply
   * each once and the others find it done; refuses a schema it cannot read.
   */
  async #migrate(client: PoolClient): Promise<void> {
    for (;;) {
      await client.query(`BEGIN; SELECT pg_advisory_xact_lock(${this.#lockKey('migrate')})`);
      let layout: number;
      try {
        layout = await this.#layout(client);
        if (layout < LAYOUT) {
          // Only a missing schema is created: CREATE SCHEMA needs a right a runtime role may lack.
          if (layout === 0 && !(await this.#schemaExists(client))) {
            await client.query(`CREATE SCHEMA ${this.#s}`);
          }
          layout += 1;
          await client.query(layoutSql(this.#s, layout));
          await client.query(
            `INSERT INTO ${this.#s}.layout (version) VALUES ($1)
             ON CONFLICT (only_row) DO UPDATE SET version = EXCLUDED.version`,
            [layout],
          );
        }
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      }
      if (layout >= LAYOUT) return;
    }
  }

  /**
   * The schema's layout, read under the migration lock: 0 when it has none yet. Throws
   * IncompatibleLedgerError for one a newer library wrote, or a pre-release one (whose
   * `schema_version` table this library does not read).
   */
  async #layout(client: PoolClient): Promise<number> {
    const found = await client.query(
      `SELECT (SELECT true FROM pg_catalog.pg_tables
                WHERE schemaname = $1 AND tablename = 'layout') AS layout,
              (SELECT true FROM pg_catalog.pg_tables
                WHERE schemaname = $1 AND tablename = 'schema_version') AS pre_release`,
      [this.schema],
    );
    const tables = found.rows[0] as { layout: boolean | null; pre_release: boolean | null };
    if (tables.pre_release) {
      const row = await client.query(`SELECT version FROM ${this.#s}.schema_version`);
      throw new IncompatibleLedgerError(
        `the PostgreSQL ledger in schema "${this.schema}" was written by a pre-release colyseus-lightning (schema version ${row.rows[0]?.version}), whose layout this one (${VERSION}) does not read. Drop that schema, or give this ledger another ({ schema }), and start anew.`,
      );
    }
    if (!tables.layout) return 0;
    const row = await client.query(`SELECT version FROM ${this.#s}.layout`);
    const layout = Number(row.rows[0]?.version ?? 0);
    if (layout > LAYOUT) {
      throw new IncompatibleLedgerError(
        `the PostgreSQL ledger in schema "${this.schema}" has layout ${layout}, written by a newer colyseus-lightning; this one (${VERSION}) reads up to layout ${LAYOUT}. Upgrade colyseus-lightning in every process before starting this one.`,
      );
    }
    return layout;
  }

  async #schemaExists(client: PoolClient): Promise<boolean> {
    const found = await client.query(
      'SELECT true AS found FROM pg_catalog.pg_namespace WHERE nspname = $1',
      [this.schema],
    );
    return found.rows.length > 0;
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

  #assertOpen(): void {
    if (this.#closed) throw new LedgerClosedError();
  }
}

/** The statements whose text is fixed for an instance (per schema). */
function statements(s: string, movesLock: string, writerKey: number) {
  const open = (col: string) =>
    `SELECT ${COLUMNS} FROM ${s}.intents WHERE ${col} = $1 AND ${OPEN_SQL} ORDER BY created_at, seq`;
  // Every write to an existing intent holds the moves lock shared until it commits, so that a
  // claim (exclusive) starts only once no such write is in flight.
  const movesCte = `moves AS (SELECT pg_advisory_xact_lock_shared(${movesLock}) AS held)`;
  const withMovesLock = `WITH ${movesCte}`;
  // An intent the reconciler may claim: due, open, its lease free or run out.
  const due = `next_check_at <= $3::bigint AND ${OPEN_SQL}
        AND (lease_owner IS NULL OR lease_until IS NULL OR lease_until <= $3::bigint)`;
  // A write that journals takes the journal writer's lock of its intent too (after the moves
  // lock, always in this order), in a CTE the write reads: held before its first row.
  const mark = writerLock(writerKey);
  const markCte = `mark AS (SELECT ${mark} AS held)`;
  const columns = `(id, kind, status, room_id, player_id, amount, unit, description,
    callback_token, idempotency_key, open_key, expires_at, created_at, updated_at, next_check_at,
    checks, meta, history, group_id, last_call)`;
  const row = `$1, $2, $18, $3, $4, $5::numeric, $6, $7, $8, $9, $10, $11::bigint,
    $12::bigint, $12::bigint, $13::bigint, 0, $14::json, $15::jsonb, $16, $17`;
  const insertMarked = `INSERT INTO ${s}.intents ${columns} SELECT ${row} FROM mark
    RETURNING ${COLUMNS}`;
  return {
    withMovesLock,
    journalingMovesCte: `moves AS (SELECT pg_advisory_xact_lock_shared(${movesLock}) AS held,
      ${mark} AS mine)`,
    markCte,
    insertMarked,
    insertExact: `WITH ${markCte}\n${insertMarked}`,
    lockBalances: lockBalances(s),
    journalExactly: journalExactly(s),
    // A house account's shards summed: each of its rows holds a part of its balance.
    accountBalances: `SELECT account, unit, sum(balance)::text AS balance FROM ${s}.balances
      WHERE account = ANY($1::text[]) GROUP BY account, unit ORDER BY unit COLLATE "C"`,
    // Class totals: a GROUP BY of the balances (a few rows per account), never of the journal.
    classBalances: `SELECT class AS account, unit, sum(balance)::text AS balance
      FROM ${s}.balances GROUP BY class, unit ORDER BY class COLLATE "C", unit COLLATE "C"`,
    insert: `INSERT INTO ${s}.intents ${columns} VALUES (${row}) RETURNING ${COLUMNS}`,
    openKeyHolder: `SELECT id FROM ${s}.intents WHERE open_key = $1 AND ${OPEN_SQL}`,
    seatOf: `SELECT intent_id FROM ${s}.seats WHERE group_id = $1 AND player_id = $2`,
    seatHolder: `SELECT ${COLUMNS} FROM ${s}.intents WHERE id =
      (SELECT intent_id FROM ${s}.seats WHERE group_id = $1 AND player_id = $2)`,
    passSeat: `UPDATE ${s}.seats SET intent_id = $1
      WHERE group_id = $2 AND player_id = $3 AND intent_id = $4 RETURNING 1 AS passed`,
    // One more taken, only below the cap ($2; null: none): no row back when every seat is.
    takeSeatCount: `INSERT INTO ${s}.seat_counts AS c (group_id, taken) VALUES ($1, 1)
      ON CONFLICT (group_id) DO UPDATE SET taken = c.taken + 1
        WHERE $2::integer IS NULL OR c.taken < $2::integer
      RETURNING taken`,
    takeSeat: `INSERT INTO ${s}.seats (group_id, player_id, intent_id) VALUES ($1, $2, $3)
      ON CONFLICT (group_id, player_id) DO NOTHING RETURNING 1 AS took`,
    openCount: OPEN_COUNT_SQL(s),
    byId: `SELECT ${COLUMNS} FROM ${s}.intents WHERE id = $1`,
    byCall: `SELECT ${COLUMNS} FROM ${s}.intents WHERE id = $1 AND last_call = $2`,
    byToken: `SELECT ${COLUMNS} FROM ${s}.intents WHERE callback_token = $1`,
    byRemote: `SELECT ${COLUMNS} FROM ${s}.intents WHERE kind = $1 AND remote_id = $2
      ORDER BY created_at, seq LIMIT 1`,
    openByRoom: open('room_id'),
    openByPlayer: open('player_id'),
    byGroup: `SELECT ${COLUMNS} FROM ${s}.intents WHERE group_id = $1 AND group_id IS NOT NULL
      ORDER BY created_at, seq`,
    unknowns: `SELECT ${COLUMNS} FROM ${s}.intents WHERE status = 'unknown'
      ORDER BY created_at, seq LIMIT $1`,
    held: `SELECT ${COLUMNS} FROM ${s}.intents WHERE status = 'held'
      ORDER BY created_at, seq LIMIT $1`,
    // Under the exclusive moves lock (taken by the transaction before this statement, so its
    // snapshot already holds every acknowledged write). SKIP LOCKED passes over a row that
    // something outside this protocol holds (an operator's open transaction) instead of waiting.
    // Leases are bookkeeping about who is looking, not a change to the intent: updated_at stays.
    // With a share for the queue ($5), queued payouts are taken apart from the others.
    claim: `WITH others AS (SELECT seq FROM ${s}.intents
        WHERE ${due} AND (NOT $5::boolean OR status <> 'queued')
        ORDER BY next_check_at, created_at, seq
        LIMIT $4
        FOR UPDATE SKIP LOCKED),
      share AS (SELECT seq FROM ${s}.intents
        WHERE ${due} AND $5::boolean AND status = 'queued'
        ORDER BY next_check_at, created_at, seq
        LIMIT $6
        FOR UPDATE SKIP LOCKED)
      UPDATE ${s}.intents SET lease_owner = $1, lease_until = $2::bigint
      WHERE seq IN (SELECT seq FROM others UNION ALL SELECT seq FROM share)
      RETURNING ${COLUMNS}`,
    release: `${withMovesLock}
      UPDATE ${s}.intents SET lease_owner = NULL, lease_until = NULL FROM moves
      WHERE id = $1 AND lease_owner = $2`,
    // The start-up sweep: the same WHERE terms as the due index, so it walks only open intents.
    advance: `${withMovesLock}
      UPDATE ${s}.intents SET next_check_at = $1::bigint FROM moves
      WHERE next_check_at IS NOT NULL AND ${OPEN_SQL} AND next_check_at > $1::bigint
        AND kind <> 'match'`,
    // Remembers an id for good: a signed event has no timestamp, so only its id tells a replay.
    recordEvent: `INSERT INTO ${s}.events (id, seen_at) VALUES ($1, $2::bigint)
      ON CONFLICT (id) DO NOTHING RETURNING id`,
  };
}

/** `col = $n` for each field the patch names (values appended); terminal moves clear the schedule. */
function patchSets(patch: IntentPatch, terminal: boolean, values: unknown[]): string[] {
  const sets: string[] = [];
  for (const [field, [col, cast]] of Object.entries(PATCH_COLUMNS)) {
    const key = field as keyof IntentPatch;
    if (terminal && SCHEDULE_FIELDS.has(key)) {
      sets.push(`${col} = NULL`);
      continue;
    }
    const value = patch[key];
    if (value === undefined) continue;
    values.push(
      value === null
        ? null
        : key === 'meta'
          ? JSON.stringify(value)
          : key === 'error'
            ? diagnostic(value as string)
            : value,
    );
    sets.push(`${col} = $${values.length}${cast}`);
  }
  return sets;
}

/** A prepared statement's name: the same text gets the same name on every connection. */
const names = new Map<string, string>();
function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `lightning_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    // Patch shapes are few, schemas per process too; the cap only guards against a leak.
    if (names.size < 10_000) names.set(text, name);
  }
  return name;
}

/** Diagnostics may carry any text; PostgreSQL text cannot hold NUL, so it becomes U+FFFD. */
function diagnostic(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

function assertNoNul(values: readonly unknown[]): void {
  for (const value of values) {
    const texts = Array.isArray(value) ? value : [value];
    for (const text of texts) {
      if (typeof text === 'string' && text.includes('\u0000')) {
        throw new InvalidIntentError('PostgreSQL text cannot hold the NUL character (\\u0000)');
      }
    }
  }
}

function isDatabaseError(err: unknown): err is Error & { code: string; constraint?: string } {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/**
 * The server is down, restarting or shutting down, or the connection broke: class 08, 57P01-03
 * (admin or crash shutdown, cannot connect now), and the socket errors node-postgres passes on.
 */
/** How long a write whose answer was lost keeps trying to read whether it committed. */
const RECOVER_MS = 3_000;

/** False when the connection was never made (refused, no such host): the write was not sent. */
function maybeSent(err: unknown): boolean {
  const { code, syscall } = (err ?? {}) as { code?: unknown; syscall?: unknown };
  return !(
    syscall === 'connect' ||
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === '57P03'
  );
}

function lostConnection(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (/^08/.test(code) || ['57P01', '57P02', '57P03'].includes(code)) return true;
    if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND'].includes(code))
      return true;
  }
  return /Connection terminated|connection timeout|Client has encountered a connection error/i.test(
    err.message,
  );
}

/** A unique violation names its index; a busy refusal wrote nothing; the rest pass through. */
function mapError(err: unknown): unknown {
  if (lostConnection(err)) return new LedgerUnavailableError({ cause: err });
  if (!isDatabaseError(err)) return err;
  if (err.code === '23505') {
    // An entry id is `<intent id>:<tag>`: on a create, only an intent id used before holds it.
    if (err.constraint === 'intents_id' || err.constraint === 'journal_id') {
      return new DuplicateIntentError('id', { cause: err });
    }
    if (err.constraint === 'intents_callback_token') {
      return new DuplicateIntentError('callbackToken', { cause: err });
    }
    if (err.constraint === 'intents_open_key') {
      return new DuplicateIntentError('openKey', { cause: err });
    }
  }
  if (BUSY_CODES.has(err.code)) return new LedgerBusyError({ cause: err });
  // numeric_value_out_of_range: an intent's amount past numeric's 131,072 digits, or a balance
  // a write would take past a signed 64-bit integer (the write is refused whole).
  if (err.code === '22003') {
    return new InvalidIntentError('invalid write: an amount or a balance is too large to store', {
      cause: err,
    });
  }
  return err;
}

/** A write refused whole because one of its entries is already in the journal. */
function isJournaledAlready(err: unknown): boolean {
  return (
    err instanceof DuplicateIntentError &&
    (err.cause as { constraint?: unknown } | undefined)?.constraint === 'journal_id'
  );
}

/**
 * A write's postings as the parameters `journaled` and `journalExactly` read (six arrays and
 * the write's time). A note for people may hold any text: NUL becomes U+FFFD, as in history
 * notes.
 */
function postingParams(postings: readonly Posting[], now: number): unknown[] {
  return [
    postings.map((p) => p.tag),
    postings.map((p) => p.debit),
    postings.map((p) => p.credit),
    postings.map((p) => p.amount),
    postings.map((p) => p.unit),
    postings.map((p) => diagnostic(p.why)),
    now,
  ];
}

/**
 * A write refused whole because a balance row would pass its share of 64 bits (or a bigint
 * sum would overflow): made again on the exact path, which decides on the account's whole
 * total. Raw or mapped (InvalidIntentError keeps the database's error as its cause).
 */
/** How often a write that PostgreSQL chose as a deadlock's victim is made again. */
const DEADLOCK_RETRIES = 5;

/**
 * PostgreSQL broke a deadlock by rolling this write back whole (40P01). The exact path (a
 * balance past its shard's share) locks every shard of its accounts while holding its own
 * open-count stripe, and a create on another backend with the same stripe and shard number can
 * hold one of those shards while it waits for that stripe: rare, harmless, and safe to make
 * again, since nothing of the loser was written.
 */
function deadlocked(err: unknown): boolean {
  for (const e of [err, (err as { cause?: unknown } | null)?.cause]) {
    if (isDatabaseError(e) && e.code === '40P01') return true;
  }
  return false;
}

function pastShare(err: unknown): boolean {
  for (const e of [err, (err as { cause?: unknown } | null)?.cause]) {
    if (!isDatabaseError(e)) continue;
    if (e.code === '22003') return true;
    if (e.code === '23514' && e.constraint === 'balances_within') return true;
  }
  return false;
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

/** The rate's own pool: the store's connection settings, one connection. */
function rateConfig(connection: string | PoolConfig | undefined): PoolConfig {
  const config = typeof connection === 'string' ? { connectionString: connection } : connection;
  return { ...config, max: 1 };
}

/** Opens a pool with pg, loaded here and not imported: only games on PostgreSQL install it. */
async function openPool(connection: string | PoolConfig | undefined): Promise<Pool> {
  const { Pool: PoolClass } = await import('pg');
  const config = typeof connection === 'string' ? { connectionString: connection } : connection;
  const pool = new PoolClass(config);
  // An idle connection that breaks (a server restart) is dropped and replaced on the next call;
  // without a listener node-postgres would throw it at the process.
  pool.on('error', () => {});
  guardClients(pool);
  return pool;
}

/**
 * Every client the pool connects keeps a listener for 'error' from its birth. pg-pool removes its
 * own idle listener when it hands a client to a waiting `connect()`, and a server that dies
 * (SIGKILL: 57P01) can deliver its FATAL in the same read, before the caller has added its own:
 * node would throw it at the process. The query in flight still rejects with the error.
 */
function guardClients(pool: Pool): void {
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
}

/** A line as LINE_COLUMNS returns it. */
function toLine(row: Record<string, unknown>): OperatorAction {
  return {
    seq: Number(row.seq),
    at: Number(row.at),
    by: row.by as string,
    action: row.action as OperatorActionName,
    intentId: (row.intent_id as string | null) ?? null,
    playerId: (row.player_id as string | null) ?? null,
    before: row.before as string,
    after: row.after as string,
    note: row.note as string,
  };
}
