/**
 * The ledger's core, written once for every store: the closed check, the clock, the parse of
 * every input and the decisions a call makes before it reaches storage. A store is this class
 * over a driver (`LedgerDriver`) of atomic primitives on parsed inputs; what a driver decides
 * inside its own atomic step it asks rules.ts.
 */
import { v7 as uuidv7 } from 'uuid';
import type { Clock } from '../clock.js';
import { DuplicateIntentError, LedgerClosedError } from './errors.js';
import type { Intent, IntentPatch, IntentStatus, NewIntent } from './intent.js';
import type {
  AccountBalance,
  AccountPage,
  AccountsQuery,
  JournalEntry,
  JournalPage,
  JournalQuery,
  Posting,
} from './journal.js';
import type {
  NewOperatorAction,
  OperatorAction,
  OperatorLogPage,
  OperatorLogQuery,
} from './operator-log.js';
import { type Guarded, guarded, type LineChange } from './rules.js';
import type { CreateGuards, LedgerStore, RateLimit, TransitionOptions } from './store.js';
import {
  type AccountsFilter,
  type FundsCheck,
  holdFor,
  type JournalFilter,
  type OperatorLogFilter,
  parseAccounts,
  parseAccountsQuery,
  parseClaim,
  parseCreate,
  parseEpochMs,
  parseEventId,
  parseFunds,
  parseJournalQuery,
  parseLimit,
  parseMove,
  parseOperatorAction,
  parseOperatorLogQuery,
  parsePlayerId,
  parsePostings,
  parseSwitch,
  parseTake,
  parseUpdate,
} from './validate.js';

/** An answer now (SQLite inline) or later (a thread, a network). */
type Maybe<T> = T | Promise<T>;

/** A create as the core hands it over: parsed, with its id and the guards that apply. */
export interface CreateCall extends Guarded {
  input: NewIntent & { id: string };
  postings: Posting[];
  /** CreateGuards.funds, checked against the postings: after them, the account's balance. */
  funds: FundsCheck | null;
}

/** A move as the core hands it over: `sources` deduplicated and allowed, the rest parsed. */
export type MoveCall = ReturnType<typeof parseMove>;

/** A claim of due intents, parsed; `queued` null: queued payouts count against `limit`. */
export type ClaimCall = ReturnType<typeof parseClaim>;

export interface LedgerDriver {
  open(): Maybe<void>;
  close(): Maybe<void>;
  // Intents and their journal: create if the guards allow, move or update by compare-and-set;
  // the keyed reads take their inputs as they are.
  create(call: CreateCall): Maybe<Intent>;
  /** The id of the open intent that holds `openKey`, or null. */
  openKeyHolder(openKey: string): Maybe<string | null>;
  move(call: MoveCall): Maybe<Intent | null>;
  update(
    id: string,
    status: IntentStatus,
    patch: IntentPatch,
    now: number,
    postings: Posting[],
  ): Maybe<Intent | null>;
  get(id: string): Maybe<Intent | null>;
  byCallbackToken(token: string): Maybe<Intent | null>;
  byRemoteId(kind: Intent['kind'], remoteId: string): Maybe<Intent | null>;
  openByRoom(roomId: string): Maybe<Intent[]>;
  openByPlayer(playerId: string): Maybe<Intent[]>;
  byGroup(groupId: string): Maybe<Intent[]>;
  seatHolder(groupId: string, playerId: string): Maybe<Intent | null>;
  openCount(): Maybe<number>;
  /** In status `status`, oldest first; `limit` is at least 1. */
  inStatus(status: 'unknown' | 'held', limit: number): Maybe<Intent[]>;
  /** Up to `limit + 1` entries, oldest first: the one more says another page follows. */
  journal(query: JournalFilter): Maybe<JournalEntry[]>;
  /** Every class's total per unit that ever moved. */
  classBalances(): Maybe<AccountBalance[]>;
  /** The balance rows of the named accounts that ever moved, by unit. */
  accountBalances(accounts: readonly string[]): Maybe<AccountBalance[]>;
  /** Up to `limit + 1` of a class's accounts holding msats, richest first, past `after`. */
  classAccounts(filter: AccountsFilter): Maybe<AccountBalance[]>;
  // Leases and the queue.
  claimDue(claim: ClaimCall): Maybe<Intent[]>;
  release(id: string, owner: string): Maybe<void>;
  advanceChecks(at: number): Maybe<number>;
  // The operator log: a line appended, alone or with its compare-and-set.
  appendLine(
    line: NewOperatorAction,
    now: number,
    change: LineChange | null,
  ): Maybe<OperatorAction | null>;
  isBlocked(playerId: string): Maybe<boolean>;
  payoutPause(): Maybe<OperatorAction | null>;
  /** Up to `limit + 1` lines, by seq: the one more says another page follows. */
  operatorLog(query: OperatorLogFilter): Maybe<OperatorAction[]>;
  // The outbound rate bucket, and once-markers.
  takeToken(limit: RateLimit, now: number, keep: number): Maybe<number>;
  /** Hold every call for `forMs` from `now`, i.e. until `until`. */
  holdCalls(until: number, now: number, forMs: number): Maybe<void>;
  recordEvent(eventId: string, now: number): Maybe<boolean>;
}

export class LedgerCore implements LedgerStore {
  #closed = false;

  constructor(
    private readonly driver: LedgerDriver,
    private readonly clock: Clock,
  ) {}

  async open(): Promise<void> {
    return this.#driver().open();
  }

  async create(
    intent: NewIntent,
    now: number = this.clock.now(),
    guards: CreateGuards = {},
    postings?: readonly Posting[],
  ): Promise<Intent> {
    this.#assertOpen();
    const { input, checks } = parseCreate(intent, now, guards);
    const withId = { ...input, id: input.id ?? uuidv7() };
    const parsed = parsePostings(postings);
    const call = {
      ...guarded(withId, now, checks),
      input: withId,
      postings: parsed,
      funds: parseFunds(checks, parsed),
    };
    // No await on the way: an inline driver's answer is handed back as it is.
    try {
      const made = this.driver.create(call);
      return made instanceof Promise ? made.catch((err) => this.#refused(err, input)) : made;
    } catch (err) {
      return this.#refused(err, input);
    }
  }

  /** A create's refusal; a key an open intent holds names that intent. */
  async #refused(err: unknown, input: NewIntent): Promise<never> {
    if (err instanceof DuplicateIntentError && err.field === 'openKey' && input.openKey) {
      const existingId = await this.driver.openKeyHolder(input.openKey);
      throw new DuplicateIntentError('openKey', { cause: err, existingId });
    }
    throw err;
  }

  async transition(
    id: string,
    from: IntentStatus | readonly IntentStatus[],
    to: IntentStatus,
    options: TransitionOptions = {},
  ): Promise<Intent | null> {
    this.#assertOpen();
    return this.driver.move(parseMove(id, from, to, options, () => this.clock.now()));
  }

  async update(
    id: string,
    status: IntentStatus,
    patch: IntentPatch,
    now: number = this.clock.now(),
    postings?: readonly Posting[],
  ): Promise<Intent | null> {
    this.#assertOpen();
    const input = parseUpdate(status, patch, now);
    return this.driver.update(id, status, input, now, parsePostings(postings));
  }

  async get(id: string): Promise<Intent | null> {
    return this.#driver().get(id);
  }

  async byCallbackToken(token: string): Promise<Intent | null> {
    return this.#driver().byCallbackToken(token);
  }

  async byRemoteId(kind: Intent['kind'], remoteId: string): Promise<Intent | null> {
    return this.#driver().byRemoteId(kind, remoteId);
  }

  async openByRoom(roomId: string): Promise<Intent[]> {
    return this.#driver().openByRoom(roomId);
  }

  async openByPlayer(playerId: string): Promise<Intent[]> {
    return this.#driver().openByPlayer(playerId);
  }

  async byGroup(groupId: string): Promise<Intent[]> {
    return this.#driver().byGroup(groupId);
  }

  async seatHolder(groupId: string, playerId: string): Promise<Intent | null> {
    return this.#driver().seatHolder(groupId, playerId);
  }

  async unknowns(limit = 100): Promise<Intent[]> {
    return this.#inStatus('unknown', limit);
  }

  async held(limit = 100): Promise<Intent[]> {
    return this.#inStatus('held', limit);
  }

  async #inStatus(status: 'unknown' | 'held', limit: number): Promise<Intent[]> {
    this.#assertOpen();
    parseLimit(limit);
    return limit === 0 ? [] : this.driver.inStatus(status, limit);
  }

  async openCount(): Promise<number> {
    return this.#driver().openCount();
  }

  async journal(query?: JournalQuery): Promise<JournalPage> {
    this.#assertOpen();
    const filter = parseJournalQuery(query);
    const { items, next } = page(await this.driver.journal(filter), filter.limit);
    return { entries: items, next };
  }

  /** Each account named once, in the order named; one that never moved holds '0' msats. */
  async balances(accounts?: readonly string[]): Promise<AccountBalance[]> {
    this.#assertOpen();
    const names = parseAccounts(accounts);
    if (names === undefined) return this.driver.classBalances();
    const unique = [...new Set(names)];
    const found = new Map<string, AccountBalance[]>();
    for (const row of await this.driver.accountBalances(unique)) {
      found.set(row.account, [...(found.get(row.account) ?? []), row]);
    }
    return unique.flatMap(
      (account) => found.get(account) ?? [{ account, unit: 'msats', balance: '0' }],
    );
  }

  async accounts(query: AccountsQuery): Promise<AccountPage> {
    this.#assertOpen();
    const filter = parseAccountsQuery(query);
    const rows = await this.driver.classAccounts(filter);
    const accounts = rows.slice(0, filter.limit);
    const last = accounts.at(-1);
    const more = rows.length > filter.limit && last !== undefined;
    return { accounts, next: more ? `${last.balance}:${last.account}` : null };
  }

  async claimDue(
    now: number,
    limit: number,
    owner: string,
    leaseMs: number,
    queued?: number,
  ): Promise<Intent[]> {
    this.#assertOpen();
    const claim = parseClaim(now, limit, owner, leaseMs, queued);
    return limit === 0 && !queued ? [] : this.driver.claimDue(claim);
  }

  async release(id: string, owner: string): Promise<void> {
    return this.#driver().release(id, owner);
  }

  async advanceChecks(at: number): Promise<number> {
    return this.#driver().advanceChecks(parseEpochMs(at, 'at'));
  }

  async recordEvent(eventId: string, now: number = this.clock.now()): Promise<boolean> {
    this.#assertOpen();
    return this.driver.recordEvent(parseEventId(eventId), parseEpochMs(now, 'now'));
  }

  async recordOperatorAction(
    line: NewOperatorAction,
    now: number = this.clock.now(),
  ): Promise<OperatorAction> {
    this.#assertOpen();
    const parsed = parseOperatorAction(line);
    return this.driver.appendLine(parsed, parseEpochMs(now, 'now'), null) as Maybe<OperatorAction>;
  }

  async recordBlock(
    line: NewOperatorAction,
    now: number = this.clock.now(),
  ): Promise<OperatorAction | null> {
    return this.#switch(line, now, 'recordBlock');
  }

  async isBlocked(playerId: string): Promise<boolean> {
    return this.#driver().isBlocked(parsePlayerId(playerId));
  }

  async recordPause(
    line: NewOperatorAction,
    now: number = this.clock.now(),
  ): Promise<OperatorAction | null> {
    return this.#switch(line, now, 'recordPause');
  }

  /** A block, unblock, pause or resume: its line, after the statement of its name. */
  async #switch(line: NewOperatorAction, at: number, call: 'recordBlock' | 'recordPause') {
    this.#assertOpen();
    const parsed = parseSwitch(line, call);
    const now = parseEpochMs(at, 'now');
    const { action: kind, playerId } = parsed;
    const values = kind === 'block' ? [playerId, now] : kind === 'unblock' ? [playerId] : [];
    return this.driver.appendLine(parsed, now, { kind, values });
  }

  async payoutPause(): Promise<OperatorAction | null> {
    return this.#driver().payoutPause();
  }

  async operatorLog(query?: OperatorLogQuery): Promise<OperatorLogPage> {
    this.#assertOpen();
    const filter = parseOperatorLogQuery(query);
    const { items, next } = page(await this.driver.operatorLog(filter), filter.limit);
    return { actions: items, next };
  }

  async takeToken(limit: RateLimit, now: number, keep = 0): Promise<number> {
    return this.#driver().takeToken(parseTake(limit, now, keep), now, keep);
  }

  async holdCalls(until: number, now: number = this.clock.now()): Promise<void> {
    this.#assertOpen();
    return this.driver.holdCalls(until, now, holdFor(until, now));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    return this.driver.close();
  }

  #assertOpen(): void {
    if (this.#closed) throw new LedgerClosedError();
  }

  #driver(): LedgerDriver {
    this.#assertOpen();
    return this.driver;
  }
}

/** A page of `limit` from `rows` (read one more): whether another follows, with no second query. */
function page<T extends { seq: number }>(rows: T[], limit: number) {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, next: rows.length > limit && last ? String(last.seq) : null };
}
