/**
 * The cluster ledger store: intents in Redis, shared by every process of a game on any
 * number of machines (the same Redis that RedisPresence and RedisDriver use).
 *
 * Usage:
 *   const ledger = new RedisLedger(process.env.REDIS_URL);   // a URL, a port, ioredis options,
 *   const lightning = await createLightning({ ledger, ... }); // or a ready ioredis client
 *
 * Footprint: one connection (none extra when given a client), no timers. Every write is one
 * Lua script (EVALSHA, loaded on first use) that does the compare-and-set, the history entry
 * and the index upkeep atomically, in one round trip; reads are one round trip too. An intent
 * is one hash plus one member in each of up to six sorted sets. Event ids (recordEvent) are
 * string keys without a TTL, kept for good: a webhook's (`event:ramp:` and a 43-character hash
 * under the default prefix) takes about 140 bytes of Redis memory (used_memory over 100,000 of
 * them; MEMORY USAGE says 120 per key), a million of them about 140 MB.
 *
 * The journal is written by the same scripts, in the same step as the intent: an entry is one
 * field (its JSON) in a hash of a thousand entries by seq, a 'tag:seq' in its intent's own hash
 * (which refuses a step journaled twice without a read) and a member in its player's and its
 * match's sorted sets of seqs, kept for good; no key of its own. Balances are kept as they are
 * written, one hash per account (a field per unit) and one of class totals, so `balances`
 * reads a few hashes and never the journal. What that costs Redis's one thread, measured
 * (bench/README.md, benchmark 5): a move's script takes about 15 µs more with its posting
 * (INCRBY, HSET, ZADD, four HGETs and four HINCRBYs; 27 µs and 14 commands in layouts 3 to 5), and
 * the AOF about 670 bytes more (1,100). `journal` reads the most selective index from its
 * cursor, in steps that look at no more than 1,000 entries each, so a sparse filter never holds
 * Redis for long. Opening a layout-2 keyspace migrates it once: a SCAN of every intent, two round trips
 * per intent that holds money somewhere (its hash, then its opening entries). Opening a
 * layout-3 one takes the TTL off every event id it kept (a SCAN, one round trip per page of
 * 1,000); opening a layout-4 one indexes its open intents (a SCAN, one script per page of
 * 1,000); opening a layout-5 one moves every intent's entries into layout 6's shape: a SCAN,
 * one round trip per intent with entries.
 *
 * The game's cap (`maxOpenPerGame`) is the size of one sorted set, `open`, that the scripts
 * keep as intents open and end: a create's check is one ZCARD, and an open intent (matches
 * aside) costs one more member until it ends, about 175 bytes (MEMORY USAGE over 10,000).
 *
 * The operator's audit log (layout 7; redis-scripts.ts, OPLOG_APPEND): a line is a field of one
 * hash and a member in its intent's and player's sorted sets, appended by one script (with a
 * block's SADD or SREM, the compare-and-set, in the same step); nothing changes or removes it.
 * `isBlocked`, read by every money helper, is one SISMEMBER (one round trip). Opening a layout-6
 * keyspace sets the version and nothing else: the log starts empty.
 *
 * Payout approvals (layout 8): a payout the approvals hold (CreateGuards.hold) is written in
 * status `held` by the create script itself, listed in `held`; a player window's payouts are a
 * sorted set per player (`hold:player:<id>`), summed by the create like a budget's. Opening a
 * layout-7 keyspace sets the version and nothing else.
 *
 * The payout queue (layout 9): a payout recorded with CreateGuards.queue is written `queued` by
 * the create script (unless the hold takes it), open and due; it needs no key of its own.
 * Opening a layout-8 keyspace sets the version and nothing else.
 *
 * Seats (layout 10, CreateGuards.seat): a hash per group (`seats:<group>`), a field per player
 * holding one, its value the holder's id; HLEN is the count the create checks. The create script
 * takes the seat, the move that ends its holder expired or failed gives it back. Opening a
 * layout-9 keyspace sets the version and nothing else.
 *
 * `ioredis` is loaded only when this store creates its own connection, so importing the ledger
 * never requires it. Amounts stay decimal strings end to end; Lua never does arithmetic on
 * them (balances are added by HINCRBY, exact in 64 bits).
 *
 * Durability: an intent is written so that it outlives the API call that follows it, so on
 * first use (`open()`, or the first call) the store reads `INFO persistence` and refuses a Redis
 * with AOF off: a restart would forget every intent, and the money the service moved for them.
 * `durability: 'none'` allows it, for tests and benchmarks. `appendfsync` other than `always` is
 * allowed with one warning (a crash of the machine may lose the last second). `replicas: n`
 * makes each write wait (WAIT) until n replicas have it, so that a failover cannot forget an
 * intent that the service was then asked to create.
 */

import { createHash } from 'node:crypto';
import type { Redis, RedisOptions } from 'ioredis';
import { v7 as uuidv7 } from 'uuid';
import { type Clock, systemClock } from '../clock.js';
import { BudgetExceededError, ConfigurationError, LimitExceededError } from '../errors.js';
import {
  DuplicateIntentError,
  IncompatibleLedgerError,
  InvalidIntentError,
  LedgerClosedError,
  LedgerNotDurableError,
} from './errors.js';
import {
  type Intent,
  type IntentHistoryEntry,
  type IntentPatch,
  type IntentStatus,
  isTerminal,
  type NewIntent,
} from './intent.js';
import {
  type AccountBalance,
  accountClass,
  afterWrite,
  type JournalEntry,
  type JournalPage,
  type JournalQuery,
  openingPostings,
  type Posting,
  postingsFor,
} from './journal.js';
import {
  decodeLine,
  encodeTail,
  type NewOperatorAction,
  type OperatorAction,
  type OperatorLogPage,
  type OperatorLogQuery,
  parseBlock,
  parseOperatorAction,
  parseOperatorLogQuery,
  parsePause,
  parsePlayerId,
} from './operator-log.js';
import { holdFor, parseTake, type RateLimit } from './rate.js';
import {
  ADVANCE,
  BALANCES,
  CLAIM,
  CONVERT,
  CREATE,
  INDEX_OPEN,
  JOURNAL,
  MIGRATE_1_TO_2,
  MIGRATED,
  MIGRATED_5_TO_6,
  OPENING,
  OPLOG_APPEND,
  OPLOG_PAGE,
  PERSIST_EVENTS,
  RATE_HOLD,
  RATE_TAKE,
  READ,
  RELEASE,
  VERSION,
  WRITE,
} from './redis-scripts.js';
import type { BudgetWindow, CreateGuards, LedgerStore, TransitionOptions } from './store.js';
import {
  MAX_POSTING_AMOUNT,
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

/** The commands this store sends; an ioredis 5 or 6 client (or a compatible one) has them. */
export interface RedisClientLike {
  evalsha(sha: string, numKeys: number, ...args: string[]): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: string[]): Promise<unknown>;
  hgetall(key: string): Promise<Record<string, string>>;
  set(...args: (string | number)[]): Promise<unknown>;
  info(section: string): Promise<string>;
  /** Any command by name: CONFIG GET and WAIT. */
  call(command: string, ...args: (string | number)[]): Promise<unknown>;
  quit(): Promise<unknown>;
}

/** What to connect to, as `new RedisPresence(...)` takes it. */
export type RedisConnection = number | string | RedisOptions | Redis | RedisClientLike;

export interface RedisLedgerOptions {
  /** Prepended to every key this store writes. Default `lightning:`. */
  prefix?: string;
  /** The time source used when a call gives no `now`. Default the system clock. */
  clock?: Clock;
  /**
   * 'aof' (default): refuse a Redis with AOF off, naming `appendonly yes`. 'none': run on any
   * Redis, for tests and benchmarks only (a restart forgets every intent).
   */
  durability?: 'aof' | 'none';
  /** Every write waits until this many replicas have it (WAIT). Default 0. */
  replicas?: number;
  /** How long a write waits for its replicas, in ms. Default 1000. */
  replicaTimeoutMs?: number;
  /** Where the store's one-time warnings go. Default the console. */
  logger?: { warn(message: string): void };
}

/** Bumped whenever the key layout changes; an older library refuses newer data. */
const LAYOUT_VERSION = 10;

/** How many entries one step of a journal read looks at, at most (see JOURNAL). */
const JOURNAL_STEP = 1000;
/** How many times the migration reads an intent again that changed under it. */
const OPENING_ATTEMPTS = 5;

interface Script {
  source: string;
  sha: string;
}

function script(source: string): Script {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

const SCRIPTS = {
  create: script(CREATE),
  write: script(WRITE),
  claim: script(CLAIM),
  release: script(RELEASE),
  read: script(READ),
  advance: script(ADVANCE),
  journal: script(JOURNAL),
  balances: script(BALANCES),
  opening: script(OPENING),
  convert: script(CONVERT),
  persistEvents: script(PERSIST_EVENTS),
  indexOpen: script(INDEX_OPEN),
  oplogAppend: script(OPLOG_APPEND),
  oplogPage: script(OPLOG_PAGE),
  rateTake: script(RATE_TAKE),
  rateHold: script(RATE_HOLD),
};

/** Scripts that write an intent: with `replicas`, each waits until the replicas have it. */
const INTENT_WRITES: ReadonlySet<Script> = new Set([
  SCRIPTS.create,
  SCRIPTS.write,
  SCRIPTS.advance,
]);

export class RedisLedger implements LedgerStore {
  readonly prefix: string;
  /** The connection; yours if you passed one (then `close()` leaves it open). */
  /** The connection: the caller's client, or one this store opens on first use. */
  readonly #client: Promise<RedisClientLike>;
  readonly #ownsClient: boolean;
  readonly #clock: Clock;
  readonly #durability: 'aof' | 'none';
  readonly #replicas: number;
  readonly #replicaTimeoutMs: number;
  readonly #logger: { warn(message: string): void };
  #closed = false;
  #opened: Promise<void> | undefined;

  constructor(connection?: RedisConnection, options: RedisLedgerOptions = {}) {
    this.prefix = options.prefix ?? 'lightning:';
    this.#clock = options.clock ?? systemClock;
    this.#durability = options.durability ?? 'aof';
    this.#replicas = options.replicas ?? 0;
    this.#replicaTimeoutMs = options.replicaTimeoutMs ?? 1000;
    this.#logger = options.logger ?? { warn: (m) => console.warn(`[lightning] ${m}`) };
    if (this.#durability !== 'aof' && this.#durability !== 'none') {
      throw new ConfigurationError('RedisLedger options.durability', "must be 'aof' or 'none'");
    }
    if (!Number.isSafeInteger(this.#replicas) || this.#replicas < 0) {
      throw new ConfigurationError(
        'RedisLedger options.replicas',
        'must be a whole number, 0 or more',
      );
    }
    if (!Number.isSafeInteger(this.#replicaTimeoutMs) || this.#replicaTimeoutMs <= 0) {
      throw new ConfigurationError(
        'RedisLedger options.replicaTimeoutMs',
        'must be a positive whole number',
      );
    }
    this.#ownsClient = !isClient(connection);
    this.#client = isClient(connection)
      ? Promise.resolve(connection)
      : openClient(connection as number | string | RedisOptions | undefined);
    // A failed import (ioredis not installed) surfaces on the first call, not as an unhandled rejection.
    this.#client.catch(() => {});
  }

  async create(
    intent: NewIntent,
    now: number = this.#clock.now(),
    guards: CreateGuards = {},
    postings?: readonly Posting[],
  ): Promise<Intent> {
    this.#assertOpen();
    const { input, checks, budgets, hold } = parseCreate(intent, now, guards);
    const journaled = parsePostings(postings);
    const id = input.id ?? uuidv7();
    const history: IntentHistoryEntry[] = [{ at: now, from: null, to: 'creating' }];
    const fields: Record<string, string | number | null | undefined> = {
      id,
      kind: input.kind,
      status: 'creating',
      roomId: input.roomId,
      playerId: input.playerId,
      amount: input.amount,
      unit: input.unit,
      description: input.description,
      callbackToken: input.callbackToken,
      idempotencyKey: input.idempotencyKey,
      openKey: input.openKey,
      groupId: input.groupId,
      expiresAt: input.expiresAt,
      createdAt: now,
      updatedAt: now,
      nextCheckAt: input.nextCheckAt,
      checks: 0,
      meta: JSON.stringify(input.meta ?? {}),
      history: JSON.stringify(history),
      call: writeToken(),
    };
    const pairs: string[] = [];
    for (const [field, value] of Object.entries(fields)) {
      if (value !== null && value !== undefined) pairs.push(field, String(value));
    }
    const reply = await this.#run(SCRIPTS.create, [
      id,
      input.callbackToken ?? '',
      String(now).padStart(16, '0'),
      input.openKey ?? '',
      checks.maxOpenPerPlayer === undefined ? '' : String(checks.maxOpenPerPlayer),
      checks.maxOpenPerGame === undefined ? '' : String(checks.maxOpenPerGame),
      String(budgets.length),
      ...budgets.flatMap((b) => [
        b.scope === 'game'
          ? 'game'
          : b.scope === 'room'
            ? `room:${input.roomId}`
            : `player:${input.playerId}`,
        String(b.limitMsat),
        String(now - b.windowMs),
      ]),
      hold.now ? '1' : '',
      hold.window === null ? '' : String(hold.window.limitMsat),
      hold.window === null ? '' : String(now - hold.window.windowMs),
      hold.queue ? '1' : '',
      checks.seat === undefined ? '' : String(checks.seat.seats ?? '-'),
      checks.seat?.replaces ?? '',
      ...postingArgs(journaled),
      ...pairs,
    ]);
    if (typeof reply === 'string') {
      if (reply === 'OVERFLOW') throw overflow();
      const [what, field, detail] = reply.split(' ');
      if (what === 'DUP' && (field === 'openKey' || field === 'seat')) {
        throw new DuplicateIntentError(field, { existingId: detail ?? null });
      }
      if (what === 'DUP') throw new DuplicateIntentError(field as 'id' | 'callbackToken');
      if (what === 'LIMIT' && field === 'seats') {
        throw new LimitExceededError('seats', checks.seat?.seats as number, input.playerId);
      }
      if (what === 'LIMIT') {
        const limit = field === 'game' ? 'maxOpenPerGame' : 'maxOpenPerPlayer';
        throw new LimitExceededError(limit, checks[limit] as number, input.playerId);
      }
      const budget = budgets[Number(field) - 1] as BudgetWindow;
      throw new BudgetExceededError(
        budget.scope,
        String(budget.limitMsat),
        detail ?? '0',
        budget.windowMs,
      );
    }
    return toIntent(reply);
  }

  async open(): Promise<void> {
    this.#assertOpen();
    await this.#checkLayout();
  }

  async get(id: string): Promise<Intent | null> {
    this.#assertOpen();
    await this.#checkLayout();
    const hash = await (await this.#client).hgetall(`${this.prefix}intent:${id}`);
    return hash.id === undefined ? null : recordToIntent(hash);
  }

  async byCallbackToken(token: string): Promise<Intent | null> {
    this.#assertOpen();
    return (await this.#read('token', token))[0] ?? null;
  }

  async byRemoteId(kind: Intent['kind'], remoteId: string): Promise<Intent | null> {
    this.#assertOpen();
    return (await this.#read('first', `remote:${kind}:${remoteId}`))[0] ?? null;
  }

  async openByRoom(roomId: string): Promise<Intent[]> {
    this.#assertOpen();
    return this.#read('all', `room:${roomId}`);
  }

  async openByPlayer(playerId: string): Promise<Intent[]> {
    this.#assertOpen();
    return this.#read('all', `player:${playerId}`);
  }

  async byGroup(groupId: string): Promise<Intent[]> {
    this.#assertOpen();
    return this.#read('all', `group:${groupId}`);
  }

  async seatHolder(groupId: string, playerId: string): Promise<Intent | null> {
    this.#assertOpen();
    await this.#checkLayout();
    const key = `${this.prefix}seats:${groupId}`;
    const id = await (await this.#client).call('HGET', key, playerId);
    return typeof id === 'string' ? this.get(id) : null;
  }

  async transition(
    id: string,
    from: IntentStatus | readonly IntentStatus[],
    to: IntentStatus,
    options: TransitionOptions = {},
  ): Promise<Intent | null> {
    this.#assertOpen();
    const { sources, now, patch, dueAlso } = parseMove(from, to, options, () => this.#clock.now());
    const postings = parsePostings(options.postings);
    const note = options.note === undefined ? '' : `,"note":${JSON.stringify(options.note)}`;
    return written(
      await this.#run(SCRIPTS.write, [
        id,
        't',
        sources.join(','),
        to,
        String(now),
        note,
        writeToken(),
        dueAlso?.id ?? '',
        dueAlso?.status ?? '',
        dueAlso === null ? '' : String(dueAlso.at),
        ...postingArgs(postings),
        ...patchArgs(patch, isTerminal(to)),
      ]),
    );
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
    const journaled = parsePostings(postings);
    return written(
      await this.#run(SCRIPTS.write, [
        id,
        'u',
        status,
        status,
        String(now),
        '',
        writeToken(),
        '',
        '',
        '',
        ...postingArgs(journaled),
        ...patchArgs(input, isTerminal(status)),
      ]),
    );
  }

  async journal(query?: JournalQuery): Promise<JournalPage> {
    this.#assertOpen();
    const q = parseJournalQuery(query);
    // The most selective index given; the other filters are checked entry by entry, and the
    // index's own is not (it holds for every entry the index names).
    const [mode, from, filters] =
      q.intentId !== undefined
        ? ['intent', q.intentId, [q.playerId, q.matchId, undefined]]
        : q.matchId !== undefined
          ? ['zset', `journal:match:${q.matchId}`, [q.playerId, undefined, undefined]]
          : q.playerId !== undefined
            ? ['zset', `journal:player:${q.playerId}`, [undefined, undefined, undefined]]
            : ['all', '', [undefined, undefined, undefined]];
    const filterArgs = [
      ...filters.map((f) => f ?? ''),
      q.since === undefined ? '' : String(q.since),
    ];
    // One more than a page, to know whether another page follows.
    const want = q.limit + 1;
    const entries: JournalEntry[] = [];
    let after = String(q.after);
    for (;;) {
      const reply = (await this.#run(SCRIPTS.journal, [
        mode,
        from,
        after,
        String(want - entries.length),
        String(JOURNAL_STEP),
        ...filterArgs,
      ])) as [string, number, ...string[]];
      const [last, ended, ...found] = reply;
      for (const text of found) entries.push(toEntry(text));
      if (ended === 1 || entries.length >= want) break;
      after = String(last);
    }
    const page = entries.slice(0, q.limit);
    const next = entries.length > q.limit ? String(page.at(-1)?.seq) : null;
    return { entries: page, next };
  }

  async recordOperatorAction(
    line: NewOperatorAction,
    now: number = this.#clock.now(),
  ): Promise<OperatorAction> {
    this.#assertOpen();
    const parsed = parseOperatorAction(line);
    parseEpochMs(now, 'now');
    return (await this.#appendLine('a', parsed, now)) as OperatorAction;
  }

  async recordBlock(
    line: NewOperatorAction,
    now: number = this.#clock.now(),
  ): Promise<OperatorAction | null> {
    this.#assertOpen();
    const parsed = parseBlock(line);
    parseEpochMs(now, 'now');
    return this.#appendLine(parsed.action === 'block' ? 'b' : 'u', parsed, now);
  }

  async recordPause(
    line: NewOperatorAction,
    now: number = this.#clock.now(),
  ): Promise<OperatorAction | null> {
    this.#assertOpen();
    const parsed = parsePause(line);
    parseEpochMs(now, 'now');
    return this.#appendLine(parsed.action === 'pause' ? 'p' : 'r', parsed, now);
  }

  async payoutPause(): Promise<OperatorAction | null> {
    this.#assertOpen();
    await this.#checkLayout();
    const client = await this.#client;
    const seq = (await client.call('GET', `${this.prefix}paused`)) as string | null;
    if (seq === null) return null;
    const text = (await client.call('HGET', `${this.prefix}oplog`, seq)) as string | null;
    return text === null ? null : decodeLine(text);
  }

  async #appendLine(
    mode: 'a' | 'b' | 'u' | 'p' | 'r',
    line: NewOperatorAction,
    now: number,
  ): Promise<OperatorAction | null> {
    const tail = encodeTail(line);
    const reply = await this.#run(SCRIPTS.oplogAppend, [
      mode,
      String(now),
      writeToken(),
      line.intentId ?? '',
      line.playerId ?? '',
      tail,
    ]);
    return typeof reply === 'string' ? decodeLine(reply) : null;
  }

  async isBlocked(playerId: string): Promise<boolean> {
    this.#assertOpen();
    const id = parsePlayerId(playerId);
    await this.#checkLayout();
    const client = await this.#client;
    return Number(await client.call('SISMEMBER', `${this.prefix}blocked`, id)) === 1;
  }

  async operatorLog(query?: OperatorLogQuery): Promise<OperatorLogPage> {
    this.#assertOpen();
    const q = parseOperatorLogQuery(query);
    // The most selective index given; the other filters are checked line by line.
    const from =
      q.intentId !== undefined
        ? `oplog:intent:${q.intentId}`
        : q.playerId !== undefined
          ? `oplog:player:${q.playerId}`
          : '';
    const filters = [
      q.intentId ?? '',
      q.playerId ?? '',
      q.since === undefined ? '' : String(q.since),
    ];
    const want = q.limit + 1;
    const lines: OperatorAction[] = [];
    let after = String(q.after);
    for (;;) {
      const [last, ended, ...found] = (await this.#run(SCRIPTS.oplogPage, [
        from,
        after,
        String(want - lines.length),
        String(JOURNAL_STEP),
        ...filters,
      ])) as [string, number, ...string[]];
      for (const text of found) lines.push(decodeLine(text));
      if (ended === 1 || lines.length >= want) break;
      after = String(last);
    }
    const actions = lines.slice(0, q.limit);
    return { actions, next: lines.length > q.limit ? String(actions.at(-1)?.seq) : null };
  }

  async balances(accounts?: readonly string[]): Promise<AccountBalance[]> {
    this.#assertOpen();
    const names = parseAccounts(accounts);
    if (names === undefined) {
      const [flat] = (await this.#run(SCRIPTS.balances, [])) as [string[]];
      const rows: AccountBalance[] = [];
      for (let i = 0; i < flat.length; i += 2) {
        const field = flat[i] as string;
        const bar = field.indexOf('|');
        rows.push({
          account: field.slice(0, bar),
          unit: field.slice(bar + 1),
          balance: flat[i + 1] as string,
        });
      }
      return rows.sort(byAccountAndUnit);
    }
    const unique = [...new Set(names)];
    if (unique.length === 0) return [];
    const reply = (await this.#run(SCRIPTS.balances, unique)) as string[][];
    return unique.flatMap((account, i) => {
      const flat = reply[i] ?? [];
      if (flat.length === 0) return [{ account, unit: 'msats', balance: '0' }];
      const rows: AccountBalance[] = [];
      for (let j = 0; j < flat.length; j += 2) {
        rows.push({ account, unit: flat[j] as string, balance: flat[j + 1] as string });
      }
      return rows.sort(byAccountAndUnit);
    });
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
    const reply = await this.#run(SCRIPTS.claim, [
      String(now),
      String(limit),
      owner,
      String(now + leaseMs),
      String(queued ?? -1),
    ]);
    return (reply as string[][]).map(toIntent);
  }

  async release(id: string, owner: string): Promise<void> {
    this.#assertOpen();
    await this.#run(SCRIPTS.release, [id, owner]);
  }

  async unknowns(limit = 100): Promise<Intent[]> {
    this.#assertOpen();
    parseLimit(limit);
    if (limit === 0) return [];
    return this.#read('all', 'unknown', String(limit));
  }

  async held(limit = 100): Promise<Intent[]> {
    this.#assertOpen();
    parseLimit(limit);
    if (limit === 0) return [];
    return this.#read('all', 'held', String(limit));
  }

  async openCount(): Promise<number> {
    this.#assertOpen();
    await this.#checkLayout();
    const client = await this.#client;
    return Number(await client.call('ZCARD', `${this.prefix}open`));
  }

  async advanceChecks(at: number): Promise<number> {
    this.#assertOpen();
    parseEpochMs(at, 'at');
    return Number(await this.#run(SCRIPTS.advance, [String(at)]));
  }

  /**
   * One script on the hash `rate`: every process sharing this Redis draws from one bucket,
   * counted by the server's clock (`now` is checked, not used).
   */
  async takeToken(limit: RateLimit, now: number, keep = 0): Promise<number> {
    this.#assertOpen();
    const { perSecond, burst } = parseTake(limit, now, keep);
    return Number(
      await this.#run(SCRIPTS.rateTake, [String(perSecond), String(burst), String(keep)]),
    );
  }

  async holdCalls(until: number, now: number = this.#clock.now()): Promise<void> {
    this.#assertOpen();
    await this.#run(SCRIPTS.rateHold, [String(holdFor(until, now))]);
  }

  async recordEvent(eventId: string, now: number = this.#clock.now()): Promise<boolean> {
    this.#assertOpen();
    parseEventId(eventId);
    parseEpochMs(now, 'now');
    await this.#checkLayout();
    // No TTL: a signed event has no timestamp, so only its id tells a late replay.
    const set = await (await this.#client).set(`${this.prefix}event:${eventId}`, String(now), 'NX');
    return set === 'OK';
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#ownsClient) return;
    try {
      await (await this.#client).quit();
    } catch {
      // Already disconnected: nothing is left to flush.
    }
  }

  async #read(
    mode: 'token' | 'first' | 'all',
    suffix: string,
    ...limit: string[]
  ): Promise<Intent[]> {
    const reply = (await this.#run(SCRIPTS.read, [mode, suffix, ...limit])) as string[][];
    return reply.map(toIntent);
  }

  /**
   * EVALSHA, falling back to EVAL (which caches the script) when Redis does not know it yet.
   * The one declared key only routes the call: a Redis Cluster client sends it to the node of
   * the prefix's slot, where every key of this ledger lives when the prefix has a hash tag.
   */
  async #run(s: Script, args: readonly string[]): Promise<unknown> {
    await this.#checkLayout();
    const client = await this.#client;
    const reply = await this.#evaluate(client, s, args);
    if (this.#replicas > 0 && INTENT_WRITES.has(s)) {
      await this.#awaitReplicas(client, s, reply, args);
    }
    return reply;
  }

  /** `run` without the layout check and the replicas: what the migration itself runs. */
  async #evaluate(client: RedisClientLike, s: Script, args: readonly string[]): Promise<unknown> {
    const route = `${this.prefix}seq`;
    try {
      return await client.evalsha(s.sha, 1, route, this.prefix, ...args);
    } catch (err) {
      if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
      return client.eval(s.source, 1, route, this.prefix, ...args);
    }
  }

  /**
   * WAIT for the replicas. A create they did not all acknowledge is failed at once (nothing has
   * been sent for it yet) and the call rejects, so the service is never asked to create what a
   * failover could forget; its postings are reversed in that same move, so its balances are
   * back where they were. A later move is kept: it records what the service already did, and a
   * failover that loses it only makes the reconciler read the resource again.
   */
  async #awaitReplicas(
    client: RedisClientLike,
    s: Script,
    reply: unknown,
    args: readonly string[],
  ): Promise<void> {
    const acked = Number(await client.call('WAIT', this.#replicas, this.#replicaTimeoutMs));
    if (acked >= this.#replicas) return;
    const message = `a ledger write reached ${acked} of ${this.#replicas} replicas within ${this.#replicaTimeoutMs} ms`;
    if (s !== SCRIPTS.create || !Array.isArray(reply)) {
      this.#logger.warn(`${message}; a failover may undo it until the next check`);
      return;
    }
    const id = args[0] as string;
    // The journal's own rule for the move: the amount goes back where a failed create puts it.
    const created = toIntent(reply);
    const now = this.#clock.now();
    await this.transition(id, created.status, 'failed', {
      note: 'not replicated: nothing was sent to the service',
      now,
      postings: postingsFor(created, afterWrite(created, 'failed', {}, now)),
    }).catch(() => null);
    throw new LedgerNotDurableError(`${message}: intent ${id} was not sent to the service`);
  }

  /**
   * Once per instance: refuses data laid out by a newer library and a Redis that forgets on
   * restart; migrates data laid out by an older one.
   */
  #checkLayout(): Promise<void> {
    this.#opened ??= (async () => {
      const client = await this.#client;
      await this.#checkDurability(client);
      let stored = Number(
        await client.eval(VERSION, 1, `${this.prefix}version`, this.prefix, String(LAYOUT_VERSION)),
      );
      if (stored > LAYOUT_VERSION) {
        throw new IncompatibleLedgerError(
          `ledger keys under '${this.prefix}' have layout version ${String(stored)}; this library reads up to ${LAYOUT_VERSION}`,
        );
      }
      const pattern = this.prefix.replace(/[*?[\]\\]/g, '\\$&');
      if (stored === 1) {
        stored = Number(
          await client.eval(MIGRATE_1_TO_2, 1, `${this.prefix}version`, this.prefix, pattern, '2'),
        );
      }
      if (stored === 2) {
        await this.#openJournal(client, pattern);
        stored = 3;
      }
      if (stored === 3) {
        await this.#persistEvents(client, pattern);
        stored = 4;
      }
      if (stored === 4) {
        await this.#indexOpen(client, pattern);
        stored = 5;
      }
      if (stored === 5) {
        await this.#convertJournal(client, pattern);
        stored = 6;
      }
      // Layout 7 adds the operator log's keys, empty: nothing to move.
      if (stored === 6) {
        await client.eval(MIGRATED, 1, `${this.prefix}version`, this.prefix, '6', '7');
        stored = 7;
      }
      // Layout 8 knows the status `held` (payout approvals) and its two sets, which start
      // empty: no intent of an older layout is held. The version keeps older libraries out.
      if (stored === 7) {
        await client.eval(MIGRATED, 1, `${this.prefix}version`, this.prefix, '7', '8');
        stored = 8;
      }
      // Layout 9 knows the status `queued` (the payout queue): no key of its own, and no intent
      // of an older layout is queued. The version keeps older libraries out.
      if (stored === 8) {
        await client.eval(MIGRATED, 1, `${this.prefix}version`, this.prefix, '8', '9');
        stored = 9;
      }
      // Layout 10 keeps seats (`seats:<group>`, a hash of holders per group), which start
      // empty: a group of an older layout keeps none. The version keeps older libraries out.
      if (stored === 9) {
        await client.eval(MIGRATED, 1, `${this.prefix}version`, this.prefix, '9', '10');
      }
    })().catch((err: unknown) => {
      // A connection failure is retried on the next call; a refusal is not.
      if (!(err instanceof IncompatibleLedgerError) && !(err instanceof LedgerNotDurableError)) {
        this.#opened = undefined;
      }
      throw err;
    });
    return this.#opened;
  }

  /** The keys matching `match`, a SCAN page (about 1,000) at a time: what every migration walks. */
  async *#scan(client: RedisClientLike, match: string): AsyncGenerator<string[]> {
    let cursor = '0';
    do {
      const [next, keys] = (await client.call('SCAN', cursor, 'MATCH', match, 'COUNT', 1000)) as [
        string,
        string[],
      ];
      cursor = next;
      yield keys;
    } while (cursor !== '0');
  }

  /**
   * Layout 2 -> 3: every intent gets its opening entries (`openingPostings`) and their
   * balances, one intent per script, read in SCAN pages. Two processes may migrate at once: an
   * opening already written is not written again, and once either has written the new version
   * (after its last intent) the other stops, since every intent that existed then has its
   * opening and no process writes postings before its own migration ended. An intent whose
   * opening cannot be journaled (an amount beyond 64 bits, a balance that would overflow) is
   * left out with a warning: refusing to open would stop the game for a record of the past.
   */
  async #openJournal(client: RedisClientLike, pattern: string): Promise<void> {
    const at = String(this.#clock.now());
    for await (const keys of this.#scan(client, `${pattern}intent:*`)) {
      const outcomes = await Promise.all(keys.map((key) => this.#openIntent(client, key, at)));
      if (outcomes.includes('DONE')) return;
    }
    await client.eval(MIGRATED, 1, `${this.prefix}version`, this.prefix, '2', '3');
  }

  /**
   * Layout 3 -> 4: every event id kept so far loses its TTL (layout 3 forgot them after a week),
   * a SCAN page at a time. Two processes may do it at once: PERSIST twice is harmless.
   */
  async #persistEvents(client: RedisClientLike, pattern: string): Promise<void> {
    for await (const keys of this.#scan(client, `${pattern}event:*`)) {
      if (keys.length > 0) await this.#evaluate(client, SCRIPTS.persistEvents, keys);
    }
    await client.eval(MIGRATED, 1, `${this.prefix}version`, this.prefix, '3', '4');
  }

  /**
   * Layout 4 -> 5: every open intent (matches aside) joins the `open` index that the game's cap
   * counts, a SCAN page at a time. Two processes may do it at once: a member added twice is one
   * member, and each page reads its intents' status in the script that adds them.
   */
  async #indexOpen(client: RedisClientLike, pattern: string): Promise<void> {
    for await (const keys of this.#scan(client, `${pattern}intent:*`)) {
      if (keys.length > 0) await this.#evaluate(client, SCRIPTS.indexOpen, keys);
    }
    await client.eval(MIGRATED, 1, `${this.prefix}version`, this.prefix, '4', '5');
  }

  /**
   * Layout 5 -> 6: each intent's entries move from their own hashes and sorted sets into the
   * shared journal hashes, its player's and match's sets of seqs and its own entries list
   * (CONVERT), one intent per script, found by a SCAN of layout 5's per-intent sets. Two
   * processes may do it at once: an intent's entries move once, and once either has set the
   * new version (after its last intent) the other stops, as in `openJournal`.
   */
  async #convertJournal(client: RedisClientLike, pattern: string): Promise<void> {
    const from = `${this.prefix}journal:intent:`;
    for await (const keys of this.#scan(client, `${pattern}journal:intent:*`)) {
      const outcomes = await Promise.all(
        keys.map(async (key) =>
          String(await this.#evaluate(client, SCRIPTS.convert, ['5', key.slice(from.length)])),
        ),
      );
      if (outcomes.includes('DONE')) return;
    }
    await client.eval(MIGRATED_5_TO_6, 1, `${this.prefix}version`, this.prefix);
  }

  /** Writes one intent's opening entries; resolves with what OPENING answered. */
  async #openIntent(client: RedisClientLike, key: string, at: string): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      const hash = await client.hgetall(key);
      if (hash.id === undefined) return 'GONE';
      let block: string[];
      try {
        const postings = parsePostings(openingPostings(recordToIntent(hash)));
        if (postings.length === 0) return 'OK';
        block = postingArgs(postings);
      } catch (err) {
        this.#logger.warn(
          `RedisLedger: intent ${hash.id} has no opening entry in the journal: ${(err as Error).message}`,
        );
        return 'SKIPPED';
      }
      const outcome = String(
        await this.#evaluate(client, SCRIPTS.opening, [
          '2',
          hash.id,
          hash.meta ?? '',
          hash.history ?? '',
          at,
          ...block,
        ]),
      );
      if (outcome === 'STALE' && attempt < OPENING_ATTEMPTS) continue;
      if (outcome === 'STALE' || outcome === 'OVERFLOW') {
        this.#logger.warn(
          `RedisLedger: intent ${hash.id} has no opening entry in the journal: ${
            outcome === 'STALE' ? 'it kept changing during the migration' : overflow().message
          }`,
        );
      }
      return outcome;
    }
  }

  async #checkDurability(client: RedisClientLike): Promise<void> {
    if (this.#durability === 'none') return;
    const info = await client.info('persistence');
    if (!/^aof_enabled:1\s*$/m.test(info)) {
      throw new LedgerNotDurableError(
        "RedisLedger refuses a Redis with AOF off: a restart would forget every intent (and the money the service moved for it). Set `appendonly yes` and `appendfsync always` in redis.conf (or CONFIG SET appendonly yes), or pass { durability: 'none' } for tests and benchmarks",
      );
    }
    let fsync: string | undefined;
    try {
      const reply = (await client.call('CONFIG', 'GET', 'appendfsync')) as string[];
      fsync = reply[1];
    } catch {
      // Managed Redis often disables CONFIG: say what could not be checked, once.
    }
    if (fsync !== 'always') {
      this.#logger.warn(
        fsync === undefined
          ? 'RedisLedger could not read appendfsync (CONFIG is disabled): make sure it is `always`, or a crash of the machine may lose the last writes'
          : `RedisLedger runs on a Redis with appendfsync ${fsync}: a crash of the machine may lose up to a second of intents; \`appendfsync always\` keeps every acknowledged write`,
      );
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new LedgerClosedError();
  }
}

function isClient(connection: RedisConnection | undefined): connection is RedisClientLike {
  return (
    typeof connection === 'object' &&
    connection !== null &&
    typeof (connection as { evalsha?: unknown }).evalsha === 'function'
  );
}

/** [number of sets, field, value, ..., fields to clear...] as the WRITE script reads them. */
function patchArgs(patch: IntentPatch, terminal: boolean): string[] {
  const sets: string[] = [];
  const clears = new Set<string>();
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) clears.add(field);
    else sets.push(field, field === 'meta' ? JSON.stringify(value) : String(value));
  }
  if (terminal) for (const field of SCHEDULE_FIELDS) clears.add(field);
  return [String(sets.length / 2), ...sets, ...clears];
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = MAX_POSTING_AMOUNT;

/**
 * A write's postings as the scripts read them (see redis-scripts.ts): the count and, per
 * posting, its tag and the JSON text of its fields (the entry the script stores is that text
 * with the seq, time and intent put before it); then every balance it changes (an account's,
 * per unit, and its class's), each once with its net change: the key and field, the bound the
 * balance must not pass now for the result to fit a signed 64-bit integer (the highest it may
 * be for a change up, the lowest for one down: the other side cannot be passed), and the
 * HINCRBY steps joined by ',' (one, unless the net change itself is beyond 64 bits). A change
 * that nets zero is still a step: the account moved, and answers a row.
 */
function postingArgs(postings: readonly Posting[]): string[] {
  const args = [String(postings.length)];
  const changes = new Map<string, { key: string; field: string; delta: bigint }>();
  const move = (key: string, field: string, delta: bigint): void => {
    // Neither part holds a newline (keys are accounts, fields units or 'class|unit').
    const at = `${key}\n${field}`;
    const change = changes.get(at);
    if (change) change.delta += delta;
    else changes.set(at, { key, field, delta });
  };
  for (const p of postings) {
    args.push(p.tag, postingText(p));
    const amount = BigInt(p.amount);
    move(`balance:${p.debit}`, p.unit, -amount);
    move(`balance:${p.credit}`, p.unit, amount);
    move('balance-by-class', `${accountClass(p.debit)}|${p.unit}`, -amount);
    move('balance-by-class', `${accountClass(p.credit)}|${p.unit}`, amount);
  }
  args.push(String(changes.size));
  for (const { key, field, delta } of changes.values()) {
    const steps: string[] = [];
    let rest = delta;
    do {
      // BigInt has no Math.min or Math.max.
      let step = rest;
      if (step > INT64_MAX) step = INT64_MAX;
      if (step < -INT64_MAX) step = -INT64_MAX;
      steps.push(String(step));
      rest -= step;
    } while (rest !== 0n);
    const bound = delta < 0n ? INT64_MIN - delta : INT64_MAX - delta;
    args.push(key, field, String(bound), steps.join(','));
  }
  return args;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A posting's fields as JSON text without the brackets. JSON.stringify writes a lone surrogate
 * as an escape that Lua's cjson refuses to decode (and reads would filter with it): such a
 * string is stored as Redis stored it before, each lone surrogate as U+FFFD.
 */
function postingText(p: Posting): string {
  const fields = [p.tag, p.debit, p.credit, p.amount, p.unit, p.why];
  let text = JSON.stringify(fields);
  if (text.includes('\\u')) {
    text = JSON.stringify(fields.map((f) => f.replace(LONE_SURROGATE, '\uFFFD')));
  }
  return text.slice(1, -1);
}

function overflow(): InvalidIntentError {
  return new InvalidIntentError(
    'invalid postings: a balance would pass the range of a signed 64-bit integer',
  );
}

/** What a WRITE answers, as `transition` and `update` resolve. */
function written(reply: unknown): Intent | null {
  if (reply === 'OVERFLOW') throw overflow();
  // 'JOURNALED': a posting of this write is already in the journal, so nothing was written.
  if (!Array.isArray(reply)) return null;
  return toIntent(reply);
}

function byAccountAndUnit(a: AccountBalance, b: AccountBalance): number {
  if (a.account !== b.account) return a.account < b.account ? -1 : 1;
  return a.unit < b.unit ? -1 : a.unit > b.unit ? 1 : 0;
}

/** An entry as the scripts store it (see redis-scripts.ts). */
type StoredEntry = [
  seq: number,
  at: number,
  intentId: string,
  playerId: string,
  matchId: string | null,
  tag: string,
  debit: string,
  credit: string,
  amount: string,
  unit: string,
  why: string,
];

function toEntry(text: string): JournalEntry {
  const stored = JSON.parse(text) as StoredEntry;
  const [seq, at, intentId, playerId, matchId, tag, debit, credit, amount, unit, why] = stored;
  const id = `${intentId}:${tag}`;
  return { id, seq, intentId, playerId, matchId, tag, debit, credit, amount, unit, why, at };
}

function toIntent(reply: unknown): Intent {
  const flat = reply as string[];
  const record: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) record[flat[i] as string] = flat[i + 1] as string;
  return recordToIntent(record);
}

function recordToIntent(h: Record<string, string>): Intent {
  const text = (field: string): string | null => h[field] ?? null;
  const num = (field: string): number | null => (h[field] === undefined ? null : Number(h[field]));
  return {
    id: h.id as string,
    kind: h.kind as Intent['kind'],
    status: h.status as IntentStatus,
    roomId: text('roomId'),
    playerId: h.playerId as string,
    amount: h.amount as string,
    unit: h.unit as string,
    description: h.description as string,
    remoteId: text('remoteId'),
    code: text('code'),
    uri: text('uri'),
    callbackToken: text('callbackToken'),
    idempotencyKey: text('idempotencyKey'),
    openKey: text('openKey'),
    groupId: text('groupId'),
    expiresAt: num('expiresAt'),
    createdAt: Number(h.createdAt),
    updatedAt: Number(h.updatedAt),
    nextCheckAt: num('nextCheckAt'),
    checks: Number(h.checks),
    leaseOwner: text('leaseOwner'),
    leaseUntil: num('leaseUntil'),
    error: text('error'),
    meta: JSON.parse(h.meta as string) as Record<string, unknown>,
    history: JSON.parse(h.history as string) as IntentHistoryEntry[],
  };
}

/** Opens a connection with ioredis, loaded here and not imported: only clusters install it. */
async function openClient(
  connection: number | string | RedisOptions | undefined,
): Promise<RedisClientLike> {
  const { Redis: RedisClass } = await import('ioredis');
  const client =
    connection === undefined
      ? new RedisClass()
      : typeof connection === 'number'
        ? new RedisClass(connection)
        : typeof connection === 'string'
          ? new RedisClass(connection)
          : new RedisClass(connection as RedisOptions);
  // Without a listener ioredis prints every reconnect attempt; calls still reject on failure.
  client.on('error', () => {});
  return client as unknown as RedisClientLike;
}
