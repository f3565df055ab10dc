/**
 * The journal: every msat (and point) the game moves, as balanced double-entry postings between
 * named accounts (the chart: docs/OPERATING.md), written by each store in the same atomic step
 * as the intent write that causes them. Given where an intent's money sits in each state (its
 * kind's rule), `postingsFor` says which postings a write makes. A posting moves `amount` from
 * `debit` to `credit`; a balance is credits minus debits, so all balances of a unit sum to zero.
 */
import { isId } from '../ids.js';
import type { Intent, IntentStatus, NewIntent } from './intent.js';

/** One move of money, as a caller hands it to a store with the write that causes it. */
export interface Posting {
  /** The step within its intent (`[a-z0-9-]{1,40}`): the entry's id is `<intent id>:<tag>`. */
  tag: string;
  /** The accounts the money leaves and reaches (`class` or `class:owner`). */
  debit: string;
  credit: string;
  /** A positive integer as a decimal string (msats, or points in minor units). */
  amount: string;
  /** 'msats', or a point currency code. */
  unit: string;
  /** Why it moved, for people (never a secret). */
  why: string;
}

/** A posting as the journal keeps it. */
export interface JournalEntry extends Posting {
  /** `<intentId>:<tag>`. */
  id: string;
  /**
   * The cursor for paging (`after`). On PostgreSQL, pages list entries in the order their
   * transactions took ids: seq may step back within a page (never within one intent's entries).
   */
  seq: number;
  intentId: string;
  /** The intent's player (a match's own entries: `match:<id>`). */
  playerId: string;
  /** The intent's group: the match it belongs to, or null. */
  matchId: string | null;
  /** epoch ms of the write. */
  at: number;
}

/** Which entries `LedgerStore.journal` lists; every filter given must hold. */
export interface JournalQuery {
  playerId?: string;
  matchId?: string;
  intentId?: string;
  /** Entries written at or after this time (epoch ms). */
  since?: number;
  /** The `next` of an earlier page (an entry's `seq`): the entries listed after it. */
  after?: string;
  /** 1 to 1000; default 100. */
  limit?: number;
}

export interface JournalPage {
  /** Oldest first (see `JournalEntry.seq`). */
  entries: JournalEntry[];
  /** Pass as `after` for the next page; null when this page is the last. */
  next: string | null;
}

/** Which accounts `LedgerStore.accounts` lists: one class's holding msats, richest first. */
export interface AccountsQuery {
  /** A class of ACCOUNT_CLASSES but `house` (whose accounts are kept in shards). */
  class: string;
  /** The `next` of an earlier page. */
  after?: string;
  /** 1 to 1000; default 100. */
  limit?: number;
}

export interface AccountPage {
  /** Largest balance first, then by name; accounts at zero are left out. */
  accounts: AccountBalance[];
  /** Pass as `after` for the next page; null when this page is the last. */
  next: string | null;
}

/** An account's balance: its credits minus its debits, as a signed decimal string. */
export interface AccountBalance {
  account: string;
  unit: string;
  balance: string;
}

export const ACCOUNT_CLASSES = [
  'wallet',
  'inflight',
  'claimable',
  'owed',
  'escrow',
  'house',
  'points',
  'tab',
] as const;

const CLASSES: ReadonlySet<string> = new Set(ACCOUNT_CLASSES);

/** The game's own classes, named by nearly every posting: sharded on PostgreSQL, never drawn on. */
export const HOUSE_CLASSES: readonly string[] = ['wallet', 'inflight', 'house'];

/** A name a read may ask for: `class` or `class:owner`, an owner of 1 to 255 characters. */
export function isAccountName(account: string): boolean {
  const colon = account.indexOf(':');
  if (colon === -1) return CLASSES.has(account);
  const owner = account.length - colon - 1;
  return CLASSES.has(account.slice(0, colon)) && owner >= 1 && owner <= 255;
}

/** `class` or `class:owner`: a class from ACCOUNT_CLASSES, an owner that is an id (src/ids.ts). */
export function isAccount(account: string): boolean {
  const colon = account.indexOf(':');
  if (colon === -1) return CLASSES.has(account);
  return CLASSES.has(account.slice(0, colon)) && isId(account.slice(colon + 1));
}
/** The `next` of an accounts page: `<balance>:<account>`, a balance in 64 bits, an account name. */
export function isAccountsCursor(after: string): boolean {
  const colon = after.indexOf(':');
  const balance = after.slice(0, colon);
  if (colon === -1 || !/^-?(0|[1-9][0-9]{0,18})$/.test(balance)) return false;
  const n = BigInt(balance);
  return n >= -(2n ** 63n) && n < 2n ** 63n && isAccountName(after.slice(colon + 1));
}

export const POSTING_TAG_PATTERN = /^[a-z0-9-]{1,40}$/;

/** The class of an account: the part before its first colon. */
export function accountClass(account: string): string {
  const colon = account.indexOf(':');
  return colon === -1 ? account : account.slice(0, colon);
}

export const accounts = {
  wallet: 'wallet',
  inflight: 'inflight',
  claimable: (playerId: string) => `claimable:${playerId}`,
  owed: (playerId: string) => `owed:${playerId}`,
  escrow: (matchId: string) => `escrow:${matchId}`,
  rewards: 'house:rewards',
  fees: 'house:fees',
  rake: 'house:rake',
  unclaimed: 'house:unclaimed',
  rejected: 'house:rejected',
  points: (playerId: string) => `points:${playerId}`,
  /** A player's tab: credits the game owes them, withdrawn as one claim code (docs/MATCHES.md). */
  tab: (playerId: string) => `tab:${playerId}`,
  housePoints: 'house:points',
} as const;

/** A payout or refund paid from a match's pot (its fixed key names the step it pays). */
export function fromPot(intent: Pick<Intent, 'groupId' | 'meta'>): boolean {
  return intent.groupId !== null && typeof intent.meta.payKey === 'string';
}

/** Where an intent's amount sits, and under which step name it got there. */
export interface Position {
  /** The account holding the amount now, and where it comes from (and returns to if unspent). */
  account: string;
  source: string;
  /** A positive decimal string, or '0'. */
  amount: string;
  unit: string;
  /** Why it is here, for the journal. */
  why: string;
  /** The step's name when an update, not a status move, brought it here (default `moved`). */
  tag?: string;
}

/** Where an intent's money sits in its state: each kind's rule (server/kinds/, `position`). */
type PositionRule = (intent: Intent) => Position;

/**
 * The posting of a write that takes an intent from `before` (null: a create) to `after`: its
 * amount moves from the position before to the position after, tagged by the status reached,
 * or for an update by the position's own `tag` or `moved`. An amount is in one place at a time.
 */
export function postingsFor(
  before: Intent | null,
  after: Intent,
  positionOf: PositionRule,
): Posting[] {
  return postingsBetween(
    before,
    after,
    before === null ? null : positionOf(before),
    positionOf(after),
  );
}

/** `postingsFor` with the positions given: the caller asks its kinds, the journal asks nobody. */
export function postingsBetween(
  before: Intent | null,
  after: Intent,
  was: Position | null,
  to: Position,
): Posting[] {
  const from = was ?? { ...to, account: to.source };
  if (from.account === to.account) return [];
  const amount = to.account === to.source ? from.amount : to.amount;
  if (amount === '0') return [];
  const tag =
    before === null
      ? 'created'
      : before.status !== after.status
        ? after.status
        : (to.tag ?? 'moved');
  return [{ tag, debit: from.account, credit: to.account, amount, unit: to.unit, why: to.why }];
}

/** The intent a move or update will leave, for computing its postings before it is written. */
export function afterWrite(
  intent: Intent,
  to: IntentStatus,
  patch: Partial<Intent>,
  now: number,
): Intent {
  return {
    ...intent,
    ...patch,
    status: to,
    history:
      to === intent.status
        ? intent.history
        : [...intent.history, { at: now, from: intent.status, to }],
  };
}

/** The intent a create will record (status `creating`), for computing its postings first. */
export function draftOf(fields: NewIntent, now: number): Intent {
  return {
    id: fields.id ?? '',
    kind: fields.kind,
    status: 'creating',
    roomId: fields.roomId,
    playerId: fields.playerId,
    amount: fields.amount,
    unit: fields.unit,
    description: fields.description,
    remoteId: null,
    code: null,
    uri: null,
    callbackToken: fields.callbackToken ?? null,
    idempotencyKey: fields.idempotencyKey ?? null,
    openKey: fields.openKey ?? null,
    groupId: fields.groupId ?? null,
    expiresAt: fields.expiresAt ?? null,
    createdAt: now,
    updatedAt: now,
    nextCheckAt: fields.nextCheckAt ?? null,
    checks: 0,
    leaseOwner: null,
    leaseUntil: null,
    error: null,
    meta: fields.meta ?? {},
    history: [],
  };
}
