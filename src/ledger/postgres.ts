/**
 * The relational ledger store: intents in PostgreSQL, shared by every process of a game on any
 * number of machines.
 *
 *   const ledger = new PostgresLedger(process.env.DATABASE_URL); // a URL, pg.PoolConfig or pg.Pool
 *
 * The driver under the core (core.ts): its statements are in sql/postgres/, its tables in their
 * own schema (namespace, `lightning` by default), laid out on first use (sql/postgres/migrations/,
 * schema.sql to read) under an advisory lock; a schema a newer or a pre-release library wrote is
 * refused (IncompatibleLedgerError). `pg` is loaded only when the store opens its own pool; the
 * rate's takes then run on a pool of one connection of their own, never queued behind moves
 * waiting on a claim's lock. The locking protocol:
 * - a status change is one compare-and-set, `UPDATE ... WHERE id = $1 AND status = ANY($2)`;
 * - a guarded create takes transaction-level advisory locks on what it counts against (player,
 *   room, game), in one global order so that two creates never deadlock;
 * - the game's cap reads open_count's stripes after the insert (postgres-schema.ts): far from
 *   the cap a create is admitted with the margin of the creates in flight unseen; near it, the
 *   create runs again under the count lock and every stripe, and counts exactly;
 * - `claimDue` takes `FOR UPDATE SKIP LOCKED` under an exclusive advisory lock that every other
 *   write to an existing intent takes shared, so a claim sees every acknowledged write and none
 *   half done: claims, moves and releases act as some order of them;
 * - postings are CTEs of the intent's own write (postgres-schema.ts `journaled`): an entry id
 *   already journaled refuses the write whole (null). Balance rows of house accounts are split
 *   in shards; a write that would take a shard past its share runs again on the exact path.
 *   Entries are listed below a horizon no journaling transaction is under, so paging by `after`
 *   never passes over one;
 * - a write whose answer a dropped connection lost reads its own token (`last_call`) back.
 *
 * Durability: a server with fsync off is refused (LedgerNotDurableError) unless `durability:
 * 'none'`; synchronous_commit off is warned about once. PostgreSQL text cannot hold NUL: a value
 * to store with one is refused (InvalidIntentError), but in text for people (`error`, notes, a
 * posting's `why`), where it becomes U+FFFD; a lookup by such a key finds nothing.
 */

import { createHash } from 'node:crypto';
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
import type { AccountBalance, JournalEntry, Posting } from './journal.js';
import {
  lineOf,
  type NewOperatorAction,
  type OperatorAction,
  type OperatorLogFilter,
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
import type { RateLimit } from './rate.js';
import { type IntentRow, rowToEntry, rowToIntent as toIntent } from './rows.js';
import type { LineChange } from './rules.js';
import * as rules from './rules.js';
import { loadSql, OPERATOR_SQL } from './sql.js';
import type { CreateGuards, SeatGuard } from './store.js';
import { type JournalFilter, SCHEDULE_FIELDS } from './validate.js';
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
   * Prepare each statement once per connection (named statements). Turn off behind a pooler
   * that cannot keep them: PgBouncer in transaction mode before 1.21, or without
   * `max_prepared_statements`. Default true.
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

class PostgresDriver implements LedgerDriver {
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
    await this.#ready();
  }

  async create(create: CreateCall): Promise<Intent> {
    const { input, now, guards: checks, postings: entries } = create;
    const history: IntentHistoryEntry[] = [{ at: now, from: null, to: 'creating' }];
    const call = writeToken();
    const values = [
      input.id,
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
    // The row in the status the create records (rules.admit): a held one is never due.
    const rowIn = (status: string) => {
      if (status === 'creating') return values;
      const row = [...values];
      if (status === 'held') row[12] = null;
      row[14] = JSON.stringify([{ at: now, from: null, to: status }]);
      row[17] = status;
      return row;
    };
    const journaling = entries.length > 0;
    const insert = journaling
      ? journaled(this.#s, this.#sql.markCte, this.#sql.insertMarked, values.length + 1)
      : this.#sql.insert;
    const paramsOf = (row: unknown[]) =>
      journaling ? [...row, ...postingParams(entries, now)] : row;
    assertNoNul(paramsOf(values));
    const pool = await this.#ready();
    const windows = rules.windowsOf(create);
    const counted = checks.maxOpenPerPlayer !== undefined || windows.length > 0;
    const cap = checks.maxOpenPerGame;
    const locks = counted || cap !== undefined ? this.#guardLocks(input, checks, windows) : [];
    // One attempt: `exactCount` near the game's cap (no other create in flight uncounted),
    // `exactShares` past a house balance shard's share of 64 bits (the exact path of the
    // journal). A refused attempt rolled back whole: the guards are counted again.
    const attempt = (exactCount: boolean, exactShares: boolean) => {
      if (!counted && cap === undefined && !exactShares && checks.seat === undefined) {
        return this.#run(pool, insert, paramsOf(rowIn(rules.admit(create, undefined, []))));
      }
      return this.#transaction(
        pool,
        exactCount ? [...locks, this.#countLock] : locks,
        async (client) => {
          const row = rowIn(
            counted
              ? await this.#guard(client, create, windows)
              : rules.admit(create, undefined, []),
          );
          let rows: Record<string, unknown>[];
          if (exactShares) {
            const exact = await this.#exactly(client, this.#sql.insertExact, row, entries, now);
            rows = exact === null ? [] : [exact];
          } else {
            rows = await this.#run(client, insert, paramsOf(row));
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
      throw mapped;
    }
  }

  async openKeyHolder(openKey: string): Promise<string | null> {
    const rows = await this.#run(await this.#ready(), this.#sql['open-key-holder'], [openKey]);
    return (rows[0]?.id as string | undefined) ?? null;
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
      const passed = await this.#run(client, this.#sql['pass-seat'], [
        id,
        group,
        player,
        seat.replaces,
      ]);
      if (passed.length > 0) return;
    }
    const holder = async () => {
      const [row] = await this.#run(client, this.#sql['seat-of'], [group, player]);
      return row === undefined ? null : String(row.intent_id);
    };
    const held = await holder();
    if (held !== null) throw new DuplicateIntentError('seat', { existingId: held });
    const taken = await this.#run(client, this.#sql['take-seat-count'], [
      group,
      seat.seats ?? null,
    ]);
    if (taken.length === 0) {
      throw new LimitExceededError('seats', seat.seats as number, player);
    }
    const took = await this.#run(client, this.#sql['take-seat'], [group, player, id]);
    // The same player's other create took it first (it committed while this one waited).
    if (took.length === 0) throw new DuplicateIntentError('seat', { existingId: await holder() });
  }

  /** The advisory locks a guarded create holds: one per player, room or game it counts against. */
  #guardLocks(input: NewIntent, checks: CreateGuards, windows: rules.WindowRead[]): string[] {
    const keys = new Set<string>();
    if (checks.maxOpenPerPlayer !== undefined) keys.add(this.#lockKey('player', input.playerId));
    for (const { scope } of windows) {
      if (scope === 'player') keys.add(this.#lockKey('player', input.playerId));
      else if (scope === 'room') keys.add(this.#lockKey('room', input.roomId as string));
      else keys.add(this.#lockKey('game'));
    }
    // One global order: two creates that share two keys take them in the same order.
    return [...keys].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  }

  /**
   * The guards of a create, under its locks (rules.ts decides): a refusal rolls the transaction
   * back. Resolves with the status the create records.
   */
  async #guard(
    client: Queryable,
    create: CreateCall,
    windows: rules.WindowRead[],
  ): Promise<string> {
    const { input, guards } = create;
    const values: unknown[] = [];
    const param = (value: unknown, cast = '') => {
      values.push(value);
      return `$${values.length}${cast}`;
    };
    const columns = ['1 AS one'];
    if (guards.maxOpenPerPlayer !== undefined) {
      columns.push(`(SELECT count(*) FROM ${this.#s}.intents
        WHERE player_id = ${param(input.playerId)} AND ${OPEN_SQL}) AS open`);
    }
    // The payouts a window holds: created after its start, unless they ended unpaid.
    for (const [i, { scope, since }] of windows.entries()) {
      const who =
        scope === 'player'
          ? `player_id = ${param(input.playerId)} AND `
          : scope === 'room'
            ? `room_id = ${param(input.roomId)} AND `
            : '';
      columns.push(`(SELECT COALESCE(sum(amount), 0)::text FROM ${this.#s}.intents
        WHERE ${who}${PAYOUT_SQL} AND created_at > ${param(since, '::bigint')}
          AND status NOT IN ('expired', 'failed')) AS w${i}`);
    }
    const [row = {}] = await this.#run(client, `SELECT ${columns.join(',\n')}`, values);
    const sums = windows.map((_, i) => String(row[`w${i}`] ?? '0'));
    return rules.admit(create, Number(row.open ?? 0), sums);
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
    const mine = rules.countsOpen(input.kind) ? 1 : 0;
    rules.refuseGameCap(input, max, open - mine);
    if (!exact && mine === 1 && open + OPEN_STRIPES - 1 > max) throw new NearCap();
  }

  async get(id: string): Promise<Intent | null> {
    return this.#one(this.#sql['by-id'], [id], 1);
  }

  async byCallbackToken(token: string): Promise<Intent | null> {
    return this.#one(this.#sql['by-token'], [token], 1);
  }

  async byRemoteId(kind: Intent['kind'], remoteId: string): Promise<Intent | null> {
    return this.#one(this.#sql['by-remote'], [kind, remoteId], 2);
  }

  async openByRoom(roomId: string): Promise<Intent[]> {
    return this.#many(this.#sql['open-by-room'], [roomId], 1);
  }

  async openByPlayer(playerId: string): Promise<Intent[]> {
    return this.#many(this.#sql['open-by-player'], [playerId], 1);
  }

  async byGroup(groupId: string): Promise<Intent[]> {
    return this.#many(this.#sql['by-group'], [groupId], 1);
  }

  async seatHolder(groupId: string, playerId: string): Promise<Intent | null> {
    return this.#one(this.#sql['seat-holder'], [groupId, playerId], 2);
  }

  async move(move: MoveCall): Promise<Intent | null> {
    const { id, sources, to, now, patch, dueAlso, note, postings: entries } = move;
    const values: unknown[] = [id, sources, to, now];
    let entry = `jsonb_build_object('at', $4::bigint, 'from', status, 'to', $3::text)`;
    if (note !== null) {
      values.push(diagnostic(note));
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
        const rows = await this.#run(await this.#pool, this.#sql['by-call'], [id, call]);
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
    input: IntentPatch,
    now: number,
    entries: Posting[],
  ): Promise<Intent | null> {
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

  async journal(query: JournalFilter): Promise<JournalEntry[]> {
    const { after, limit, ...filters } = query;
    const keys = [filters.playerId, filters.matchId, filters.intentId];
    // A key PostgreSQL text cannot hold matches no entry.
    if (keys.some((k) => k?.includes('\u0000'))) return [];
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
    return rows.map(rowToEntry);
  }

  async classBalances(): Promise<AccountBalance[]> {
    const pool = await this.#ready();
    const rows = await this.#run(pool, this.#sql['class-balances'], []).catch((err: unknown) => {
      throw mapError(err);
    });
    return rows as unknown as AccountBalance[];
  }

  async accountBalances(names: readonly string[]): Promise<AccountBalance[]> {
    // A name PostgreSQL text cannot hold never moved.
    const stored = names.filter((n) => !n.includes('\u0000'));
    if (stored.length === 0) return [];
    const pool = await this.#ready();
    const rows = await this.#run(pool, this.#sql['account-balances'], [stored]).catch(
      (err: unknown) => {
        throw mapError(err);
      },
    );
    return rows as unknown as AccountBalance[];
  }

  async claimDue({ now, limit, owner, leaseMs, queued }: ClaimCall): Promise<Intent[]> {
    const values = [owner, now + leaseMs, now, limit, queued !== null, queued ?? 0];
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

  async inStatus(status: 'unknown' | 'held', limit: number): Promise<Intent[]> {
    return this.#many(status === 'held' ? this.#sql.held : this.#sql.unknowns, [limit], 0);
  }

  async openCount(): Promise<number> {
    const rows = await this.#run(await this.#ready(), this.#sql.openCount, []);
    return Number(rows[0]?.open ?? 0);
  }

  async advanceChecks(at: number): Promise<number> {
    const pool = await this.#ready();
    const result = await pool
      .query(this.#statement(this.#sql.advance, [at]))
      .catch((err: unknown) => {
        throw mapError(err);
      });
    return result.rowCount ?? 0;
  }

  async recordEvent(eventId: string, now: number): Promise<boolean> {
    const values = [eventId, now];
    assertNoNul(values);
    const pool = await this.#ready();
    const rows = await this.#run(pool, this.#sql['record-event'], values).catch((err: unknown) => {
      throw mapError(err);
    });
    return rows.length === 1;
  }

  /** The compare-and-set a line makes (rules.ts LineChange): a statement that answers a row. */
  #change(change: LineChange, now: number): { text: string; values: unknown[]; after?: string } {
    const sql = this.#sql;
    switch (change.kind) {
      case 'block':
        return { text: sql.block, values: [change.playerId, now] };
      case 'unblock':
        return { text: sql.unblock, values: [change.playerId] };
      case 'pause':
        return { text: sql.pause, values: [], after: sql['pause-line'] };
      case 'resume':
        return { text: sql.resume, values: [] };
    }
  }

  /**
   * One transaction under the log's lock: the block's compare-and-set (`change`, which must
   * return a row), then the line. The lock makes appends commit in seq order.
   */
  async appendLine(
    line: NewOperatorAction,
    now: number,
    cas: LineChange | null,
  ): Promise<OperatorAction | null> {
    const change: { text: string; values: unknown[]; after?: string } | null =
      cas === null ? null : this.#change(cas, now);
    const values = [now, line.by, line.action, line.intentId, line.playerId, line.before];
    values.push(line.after, line.note);
    assertNoNul(values);
    const pool = await this.#ready();
    try {
      return await this.#transaction(pool, [this.#lockKey('operator log')], async (client) => {
        if (change !== null && (await this.#run(client, change.text, change.values)).length === 0) {
          return null;
        }
        const [row] = await this.#run(client, this.#sql['append-line'], values);
        const appended = lineOf(row as Record<string, unknown>);
        if (change?.after !== undefined) await this.#run(client, change.after, [appended.seq]);
        return appended;
      });
    } catch (err) {
      throw mapError(err);
    }
  }

  async payoutPause(): Promise<OperatorAction | null> {
    const pool = await this.#ready();
    const rows = await this.#run(pool, this.#sql.paused, []).catch((err: unknown) => {
      throw mapError(err);
    });
    return rows[0] === undefined ? null : lineOf(rows[0]);
  }

  /**
   * One statement on the row `rate`: every process sharing the database draws from one bucket,
   * counted by the database's clock (`now` is checked, not used).
   */
  async takeToken({ perSecond, burst }: RateLimit, _now: number, keep: number): Promise<number> {
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

  async holdCalls(_until: number, _now: number, forMs: number): Promise<void> {
    const pool = await this.#forRate();
    await this.#run(pool, rateHold(this.#s), [forMs]).catch((err: unknown) => {
      throw mapError(err);
    });
  }

  async isBlocked(id: string): Promise<boolean> {
    const pool = await this.#ready();
    const rows = await this.#run(pool, this.#sql.blocked, [id]).catch((err: unknown) => {
      throw mapError(err);
    });
    return rows.length === 1;
  }

  async operatorLog(q: OperatorLogFilter): Promise<OperatorAction[]> {
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
    return rows.map(lineOf);
  }

  async close(): Promise<void> {
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

/** The statements whose text is fixed for an instance (per schema). */
function statements(s: string, movesLock: string, writerKey: number) {
  // Every write to an existing intent holds the moves lock shared until it commits, so that a
  // claim (exclusive) starts only once no such write is in flight.
  const movesCte = `moves AS (SELECT pg_advisory_xact_lock_shared(${movesLock}) AS held)`;
  const withMovesLock = `WITH ${movesCte}`;
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
  const sql = loadSql('postgres', NAMES, {
    s,
    columns: COLUMNS,
    open: OPEN_SQL,
    moves: movesCte,
    lines: LINE_COLUMNS,
  });
  return {
    withMovesLock,
    journalingMovesCte: `moves AS (SELECT pg_advisory_xact_lock_shared(${movesLock}) AS held,
      ${mark} AS mine)`,
    markCte,
    insertMarked,
    insertExact: `WITH ${markCte}\n${insertMarked}`,
    lockBalances: lockBalances(s),
    journalExactly: journalExactly(s),
    insert: `INSERT INTO ${s}.intents ${columns} VALUES (${row}) RETURNING ${COLUMNS}`,
    openCount: OPEN_COUNT_SQL(s),
    ...sql,
  };
}

/** The statements in sql/postgres/, by file name. */
const NAMES = [
  'account-balances',
  'class-balances',
  'open-key-holder',
  'seat-of',
  'seat-holder',
  'pass-seat',
  'take-seat-count',
  'take-seat',
  'by-id',
  'by-call',
  'by-token',
  'by-remote',
  'open-by-room',
  'open-by-player',
  'by-group',
  'unknowns',
  'held',
  'claim',
  'release',
  'advance',
  'record-event',
  ...OPERATOR_SQL,
] as const;

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
