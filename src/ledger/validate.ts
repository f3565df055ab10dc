/**
 * Every input the core takes, parsed before a driver touches storage (amounts stay decimal
 * strings: msats exceed 2^53). Postings in their common shape pass plain checks, a strict subset
 * of their schema: a move carries them, and zod's parse of them costs the move most.
 */
import { z } from 'zod';
import { idInput } from '../id-input.js';
import { IllegalTransitionError, InvalidIntentError } from './errors.js';
import {
  canMove,
  INTENT_KINDS,
  INTENT_STATUSES,
  type IntentPatch,
  type IntentStatus,
  isTerminal,
  type NewIntent,
  SCHEDULE_FIELDS,
  WINDOW_KINDS,
  type WindowOver,
} from './intent.js';
import {
  ACCOUNT_CLASSES,
  type AccountsQuery,
  accountClass,
  HOUSE_CLASSES,
  isAccount,
  isAccountName,
  isAccountsCursor,
  type JournalQuery,
  POSTING_TAG_PATTERN,
  type Posting,
} from './journal.js';
import {
  INTENT_ACTIONS,
  type NewOperatorAction,
  OPERATOR_ACTIONS,
  type OperatorLogQuery,
} from './operator-log.js';
import type { CreateGuards, RateLimit, TransitionOptions } from './store.js';

/** A non-negative integer in decimal, without leading zeros. */
export const AMOUNT_PATTERN = /^(0|[1-9][0-9]*)$/;
/** base64url of at least 128 bits: anything shorter is guessable enough to forge a callback. */
export const CALLBACK_TOKEN_PATTERN = /^[A-Za-z0-9_-]{22,}$/;

const epochMs = z.int().nonnegative();
const nonEmpty = z.string().min(1);
const meta = z.record(z.string(), z.unknown());
// Sums are kept exact as integers up to 2^53 msats in every store.
const msat = z.int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const window = z.strictObject({ limitMsat: msat, windowMs: z.int().positive() });

const newIntentSchema = z.strictObject({
  id: nonEmpty.optional(),
  kind: z.enum(INTENT_KINDS),
  roomId: idInput.nullable(),
  playerId: idInput,
  amount: z.string().regex(AMOUNT_PATTERN, 'must be a non-negative integer as a decimal string'),
  unit: nonEmpty,
  description: z.string(),
  callbackToken: z
    .string()
    .regex(CALLBACK_TOKEN_PATTERN, 'must be base64url of at least 128 bits')
    .nullable()
    .optional(),
  idempotencyKey: nonEmpty.nullable().optional(),
  openKey: z.string().min(1).max(200).nullable().optional(),
  groupId: z.string().min(1).max(200).nullable().optional(),
  expiresAt: epochMs.nullable().optional(),
  nextCheckAt: epochMs.nullable().optional(),
  movesMoney: z.boolean().optional(),
  meta: meta.optional(),
});

const guardsSchema = z.strictObject({
  maxOpenPerPlayer: z.int().positive().optional(),
  maxOpenPerGame: z.int().positive().optional(),
  budgets: z
    .array(
      z
        .strictObject({
          scope: z.enum(['player', 'room', 'game']),
          ...window.shape,
          over: z.enum(Object.keys(WINDOW_KINDS) as [WindowOver, ...WindowOver[]]).optional(),
        })
        // A tab's windows are a player's: the layouts index those alone.
        .refine((b) => (b.over ?? 'payouts') === 'payouts' || b.scope === 'player', {
          message: "a window over a tab's credits or withdrawals is a player's",
        }),
    )
    .optional(),
  queue: z.boolean().optional(),
  seat: z
    .strictObject({ seats: z.int().positive().optional(), replaces: nonEmpty.optional() })
    .optional(),
  hold: z.strictObject({ aboveMsat: msat.optional(), perPlayer: window.optional() }).optional(),
  funds: z.strictObject({ account: nonEmpty }).optional(),
  settled: z.boolean().optional(),
});

const patchSchema = z.strictObject({
  remoteId: nonEmpty.nullable().optional(),
  code: nonEmpty.nullable().optional(),
  uri: nonEmpty.nullable().optional(),
  expiresAt: epochMs.nullable().optional(),
  nextCheckAt: epochMs.nullable().optional(),
  checks: z.int().nonnegative().optional(),
  leaseOwner: nonEmpty.nullable().optional(),
  leaseUntil: epochMs.nullable().optional(),
  error: z.string().nullable().optional(),
  meta: meta.optional(),
});

const dueAlsoSchema = z.strictObject({
  id: nonEmpty,
  status: z.enum(INTENT_STATUSES),
  at: epochMs,
});

/** InvalidIntentError naming the first bad field. */
function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const at = issue && issue.path.length > 0 ? issue.path.join('.') : what;
  throw new InvalidIntentError(`invalid ${what}: ${at} ${issue?.message ?? 'is invalid'}`, {
    cause: parsed.error,
  });
}

function parsePatch(value: IntentPatch): IntentPatch {
  const parsed = parse(patchSchema, value, 'patch');
  if (parsed.meta !== undefined) assertJson(parsed.meta);
  return parsed;
}

export function parseEpochMs(value: number, what: string): number {
  return Number.isSafeInteger(value) && value >= 0 ? value : parse(epochMs, value, what);
}

/** A create's arguments, checked in order: the intent, its time, the guards. */
export function parseCreate(
  intent: NewIntent,
  now: number,
  guards: CreateGuards,
): { input: NewIntent; checks: CreateGuards } {
  const input = parse(newIntentSchema, intent, 'intent') as NewIntent;
  if (input.meta !== undefined) assertJson(input.meta);
  parseEpochMs(now, 'now');
  const checks = parse(guardsSchema, guards, 'guards') as CreateGuards;
  if (checks.seat !== undefined && (input.groupId ?? null) === null) {
    throw new InvalidIntentError('guards.seat: a seat is in a group, and the intent has none');
  }
  if (checks.settled && (checks.hold || checks.queue || checks.seat)) {
    throw new InvalidIntentError(
      'guards.settled: a settled record is never held, queued or seated',
    );
  }
  return { input, checks };
}

/** What a create's `funds` guard checks: the account, the unit, what its postings draw. */
export interface FundsCheck {
  account: string;
  unit: string;
  drawn: bigint;
}

/**
 * A `funds` guard against its create's postings: a player's account (the game's own are sharded
 * on PostgreSQL: no one row to read), debited by them, in one unit.
 */
export function parseFunds(guards: CreateGuards, postings: readonly Posting[]): FundsCheck | null {
  const account = guards.funds?.account;
  if (account === undefined) return null;
  const refuse = (problem: string) => {
    throw new InvalidIntentError(`invalid guards: funds.account ${problem}`);
  };
  const shared = HOUSE_CLASSES.includes(accountClass(account));
  if (!isAccount(account) || !account.includes(':') || shared) {
    refuse("must be a player's account, `class:owner`");
  }
  const draws = postings.filter((p) => p.debit === account);
  const units = new Set(draws.map((p) => p.unit));
  if (units.size !== 1) refuse('must be debited by the postings, in one unit');
  const drawn = draws.reduce((sum, p) => sum + BigInt(p.amount), 0n);
  const back = postings.filter((p) => p.credit === account);
  if (back.length > 0) refuse('must not be credited by the same postings');
  return { account, unit: draws[0]?.unit ?? 'msats', drawn };
}

/** A move as MoveCall carries it: a move allowed, a patch that schedules no ended intent. */
export function parseMove(
  id: string,
  from: IntentStatus | readonly IntentStatus[],
  to: IntentStatus,
  options: TransitionOptions,
  fallbackNow: () => number,
) {
  const sources = assertMove(from, to);
  const now = parseEpochMs(options.now ?? fallbackNow(), 'now');
  const patch = parsePatch(options.patch ?? {});
  assertSchedulable(to, patch);
  const dueAlso =
    options.dueAlso === undefined ? null : parse(dueAlsoSchema, options.dueAlso, 'dueAlso');
  const { note = null, postings, read } = options;
  return { id, sources, to, now, patch, note, postings: parsePostings(postings), dueAlso, read };
}

/** An update's arguments; answers the parsed patch. */
export function parseUpdate(status: IntentStatus, patch: IntentPatch, now: number): IntentPatch {
  parse(z.enum(INTENT_STATUSES), status, 'status');
  parseEpochMs(now, 'now');
  const input = parsePatch(patch);
  assertSchedulable(status, input);
  return input;
}

const count = z.int().nonnegative();

export function parseLimit(limit: number): void {
  parse(count, limit, 'limit');
}

export function parseClaim(
  now: number,
  limit: number,
  owner: string,
  leaseMs: number,
  queued?: number,
) {
  parseEpochMs(now, 'now');
  parseLimit(limit);
  parse(count.optional(), queued, 'queued share');
  parse(nonEmpty, owner, 'lease owner');
  parse(z.int().positive(), leaseMs, 'lease duration');
  return { now, limit, owner, leaseMs, queued: queued ?? null };
}

/** `from` as a list; refused whole if any source may not move to `to` (a caller's bug). */
function assertMove(
  from: IntentStatus | readonly IntentStatus[],
  to: IntentStatus,
): IntentStatus[] {
  const sources = typeof from === 'string' ? [from] : [...from];
  const isStatus = (s: unknown) => INTENT_STATUSES.includes(s as IntentStatus);
  if (
    !isStatus(to) ||
    sources.length === 0 ||
    !sources.every((s) => isStatus(s) && canMove(s, to))
  ) {
    throw new IllegalTransitionError(sources, to);
  }
  return sources.length === 1 ? sources : [...new Set(sources)];
}

/** A terminal intent is never checked or leased again, so a patch may not schedule one. */
function assertSchedulable(status: IntentStatus, patch: IntentPatch): void {
  if (!isTerminal(status)) return;
  for (const field of SCHEDULE_FIELDS) {
    if (patch[field] !== undefined && patch[field] !== null) {
      throw new InvalidIntentError(`invalid patch: ${field} cannot be set on a '${status}' intent`);
    }
  }
}

/** A webhook event id as `recordEvent` keeps it: short enough to index, never empty. */
export function parseEventId(eventId: string): string {
  if (typeof eventId !== 'string' || eventId === '' || eventId.length > 512) {
    throw new InvalidIntentError('eventId must be a non-empty string of at most 512 characters');
  }
  return eventId;
}

/** Meta is stored as JSON text; refuse what would not come back as it went in (bigint, cycles). */
function assertJson(value: Record<string, unknown>): void {
  try {
    JSON.stringify(value);
  } catch (err) {
    throw new InvalidIntentError('invalid meta: not serialisable as JSON', { cause: err });
  }
}

/** The largest amount one posting may carry, and any balance may reach: a signed 64-bit integer. */
const MAX_POSTING_AMOUNT = 2n ** 63n - 1n;
const POSTING_AMOUNT = /^[1-9][0-9]{0,18}$/;
const MAX_POSTINGS = 16;

const postingSchema = z.strictObject({
  tag: z.string().regex(POSTING_TAG_PATTERN, 'must be 1 to 40 of a-z, 0-9 and -'),
  debit: z.string().refine(isAccount, 'must be an account (class or class:owner)'),
  credit: z.string().refine(isAccount, 'must be an account (class or class:owner)'),
  amount: z
    .string()
    // abort: zod runs later checks after a failed one, and BigInt('1.5') throws a SyntaxError.
    .regex(POSTING_AMOUNT, { error: 'must be a positive integer as a decimal string', abort: true })
    .refine((a) => BigInt(a) <= MAX_POSTING_AMOUNT, 'must fit a signed 64-bit integer'),
  unit: z.string().min(1).max(32),
  why: z.string().max(500),
});

export const postingsSchema = z.array(postingSchema).max(MAX_POSTINGS);

/** A write's postings, before anything is written: well formed, two accounts, no tag twice. */
export function parsePostings(postings: readonly Posting[] | undefined): Posting[] {
  if (postings === undefined) return [];
  const parsed = plainPostings(postings) ?? parse(postingsSchema, postings, 'postings');
  const tags = new Set<string>();
  for (const { tag, debit, credit } of parsed) {
    if (debit === credit) {
      throw new InvalidIntentError(`invalid postings: ${tag} debits and credits one account`);
    }
    if (tags.has(tag))
      throw new InvalidIntentError(`invalid postings: the tag ${tag} is given twice`);
    tags.add(tag);
  }
  return parsed;
}

/** Postings of exactly the six fields, each well formed, as postingsSchema answers; else null. */
function plainPostings(value: unknown): Posting[] | null {
  if (!Array.isArray(value) || value.length > MAX_POSTINGS) return null;
  const out: Posting[] = [];
  for (const posting of value) {
    const proto = typeof posting === 'object' && posting !== null && Object.getPrototypeOf(posting);
    if (proto !== Object.prototype && proto !== null) return null;
    let keys = 0;
    for (const _ in posting) keys++;
    const { tag, debit, credit, amount, unit, why } = posting as Record<string, unknown>;
    if (
      keys !== 6 ||
      !(typeof tag === 'string' && POSTING_TAG_PATTERN.test(tag)) ||
      !(typeof debit === 'string' && isAccount(debit)) ||
      !(typeof credit === 'string' && isAccount(credit)) ||
      !(typeof amount === 'string' && POSTING_AMOUNT.test(amount)) ||
      BigInt(amount) > MAX_POSTING_AMOUNT ||
      !(typeof unit === 'string' && unit.length >= 1 && unit.length <= 32) ||
      !(typeof why === 'string' && why.length <= 500)
    ) {
      return null;
    }
    out.push({ tag, debit, credit, amount, unit, why });
  }
  return out;
}

/** A page's cursor (the `next` of an earlier page) and size. */
const cursor = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,15})$/, 'must be the next of an earlier page')
  .optional();
const pageLimit = z.int().min(1).max(1000).optional();

const journalQuerySchema = z.strictObject({
  playerId: nonEmpty.max(255).optional(),
  matchId: nonEmpty.max(255).optional(),
  intentId: nonEmpty.max(255).optional(),
  since: epochMs.optional(),
  after: cursor,
  limit: pageLimit,
});

/** A page's query as a driver reads it: `after` a seq (0: from the start), `limit` given. */
export type PageFilter<Q> = Omit<Q, 'after' | 'limit'> & { after: number; limit: number };
export type JournalFilter = PageFilter<JournalQuery>;
export type OperatorLogFilter = PageFilter<OperatorLogQuery>;

function parsePage<Q extends { after?: string; limit?: number }>(
  schema: z.ZodType<Q>,
  query: Q | undefined,
  what: string,
): PageFilter<Q> {
  const { after, limit, ...filters } = parse(schema, query ?? {}, what);
  return { ...filters, after: Number(after ?? 0), limit: limit ?? 100 };
}

export function parseJournalQuery(query: JournalQuery | undefined): JournalFilter {
  return parsePage(journalQuerySchema, query, 'journal query');
}

const accountsQuerySchema = z.strictObject({
  class: z
    .enum(ACCOUNT_CLASSES)
    .refine((c) => c !== 'house', 'must not be house (its accounts are kept in shards)'),
  after: z
    .string()
    .max(300)
    .refine(isAccountsCursor, 'must be the next of an earlier page')
    .optional(),
  limit: pageLimit,
});

/** An accounts query as parseAccountsQuery leaves it: the cursor split, `limit` given. */
export interface AccountsFilter {
  cls: string;
  after: { balance: bigint; account: string } | null;
  limit: number;
}

export function parseAccountsQuery(query: AccountsQuery): AccountsFilter {
  const q = parse(accountsQuerySchema, query, 'accounts query');
  const colon = q.after?.indexOf(':') ?? -1;
  const after =
    q.after === undefined
      ? null
      : { balance: BigInt(q.after.slice(0, colon)), account: q.after.slice(colon + 1) };
  return { cls: q.class, after, limit: q.limit ?? 100 };
}

const accountsSchema = z.array(z.string().refine(isAccountName)).max(1000);

export function parseAccounts(accounts: readonly string[] | undefined): string[] | undefined {
  return accounts === undefined ? undefined : parse(accountsSchema, accounts, 'accounts');
}

const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((v) => !v.includes('\u0000'), 'must not hold NUL');
const name = text(255).min(1, 'must not be empty');

const lineSchema = z.strictObject({
  by: name.refine((s) => s.trim() !== '', 'must name the operator'),
  action: z.enum(OPERATOR_ACTIONS),
  intentId: name.nullable(),
  playerId: name.nullable(),
  before: name.max(100),
  after: name,
  note: text(1000),
});

const querySchema = z.strictObject({
  since: z.int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  intentId: name.optional(),
  playerId: name.optional(),
  after: cursor,
  limit: pageLimit,
});

export function parseOperatorAction(line: NewOperatorAction): NewOperatorAction {
  const parsed = parse(lineSchema, line, 'operator action');
  const { action, intentId, playerId } = parsed;
  if ((action === 'block' || action === 'unblock') && playerId === null) {
    throw new InvalidIntentError(`invalid operator action: ${action} must name a playerId`);
  }
  if (INTENT_ACTIONS.includes(action) && intentId === null) {
    throw new InvalidIntentError(`invalid operator action: ${action} must name an intentId`);
  }
  return parsed;
}

type Switch = 'block' | 'unblock' | 'pause' | 'resume';

/** A line for `recordBlock` or `recordPause`: one of its two actions (a pause names nobody). */
export function parseSwitch(
  line: NewOperatorAction,
  call: 'recordBlock' | 'recordPause',
): NewOperatorAction & { action: Switch } {
  const parsed = parseOperatorAction(line);
  const { action, playerId, intentId } = parsed;
  const takes: Switch[] = call === 'recordBlock' ? ['block', 'unblock'] : ['pause', 'resume'];
  const refuse = (why: string) => new InvalidIntentError(`invalid operator action: ${why}`);
  if (!takes.includes(action as Switch))
    throw refuse(`${call} takes ${takes.join(' or ')}, not ${action}`);
  if (call === 'recordPause' && (playerId !== null || intentId !== null)) {
    throw refuse(`a ${action} of the game's payouts names no player or intent`);
  }
  return parsed as NewOperatorAction & { action: Switch };
}

export function parseOperatorLogQuery(query: OperatorLogQuery | undefined): OperatorLogFilter {
  return parsePage(querySchema, query, 'operator log query');
}

export function parsePlayerId(playerId: string): string {
  return parse(name, playerId, 'player id');
}

/** How long a hold until `until` lasts from `now` (both checked): 0 for one already over. */
export function holdFor(until: number, now: number): number {
  return Math.max(0, parseEpochMs(until, 'until') - parseEpochMs(now, 'now'));
}

const limitSchema = z.object({ perSecond: z.number().positive(), burst: z.number().min(1) });

export function parseTake(limit: RateLimit, now: number, keep: number): RateLimit {
  parseEpochMs(now, 'now');
  const { perSecond, burst } = parse(limitSchema, limit, 'limit');
  if (!(Number.isSafeInteger(keep) && keep >= 0 && keep + 1 <= burst)) {
    throw new InvalidIntentError('keep must be a whole number from 0 to burst - 1');
  }
  return { perSecond, burst };
}
