/**
 * The checks the core runs before any driver touches storage, for every job (intents, postings,
 * pages, the operator log, the rate): inputs parsed by zod at this edge (amounts stay decimal
 * strings: msats exceed 2^53), a status move checked against TRANSITIONS.
 * A move's patch and postings in their common shapes pass a few plain checks instead (each a
 * strict subset of its schema), because a move is the hot path and zod's parse costs it most.
 */
import { z } from 'zod';
import { idInput } from '../ids.js';
import { IllegalTransitionError, InvalidIntentError } from './errors.js';
import {
  canMove,
  INTENT_KINDS,
  INTENT_STATUSES,
  type IntentPatch,
  type IntentStatus,
  isPayout,
  isTerminal,
  type NewIntent,
} from './intent.js';
import {
  isAccount,
  isAccountName,
  type JournalQuery,
  POSTING_TAG_PATTERN,
  type Posting,
} from './journal.js';
import {
  INTENT_ACTIONS,
  type NewOperatorAction,
  OPERATOR_ACTIONS,
  type OperatorLogFilter,
  type OperatorLogQuery,
} from './operator-log.js';
import type { BudgetWindow, CreateGuards, DueAlso, RateLimit, TransitionOptions } from './store.js';

/** The fields that schedule an intent: cleared by a terminal move, never set on an ended one. */
export const SCHEDULE_FIELDS: ReadonlySet<keyof IntentPatch> = new Set([
  'nextCheckAt',
  'leaseOwner',
  'leaseUntil',
]);

/** A non-negative integer in decimal, without leading zeros: compared and summed as text or bigint. */
export const AMOUNT_PATTERN = /^(0|[1-9][0-9]*)$/;
/** base64url of at least 128 bits: anything shorter is guessable enough to forge a callback. */
export const CALLBACK_TOKEN_PATTERN = /^[A-Za-z0-9_-]{22,}$/;

const epochMs = z.int().nonnegative();
const nonEmpty = z.string().min(1);
const meta = z.record(z.string(), z.unknown());

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
  meta: meta.optional(),
});

const guardsSchema = z.strictObject({
  maxOpenPerPlayer: z.int().positive().optional(),
  maxOpenPerGame: z.int().positive().optional(),
  budgets: z
    .array(
      z.strictObject({
        scope: z.enum(['player', 'room', 'game']),
        // Sums are kept exact as integers up to 2^53 msats (90,000 BTC) in every store.
        limitMsat: z.int().nonnegative().max(Number.MAX_SAFE_INTEGER),
        windowMs: z.int().positive(),
      }),
    )
    .optional(),
  queue: z.boolean().optional(),
  seat: z
    .strictObject({ seats: z.int().positive().optional(), replaces: nonEmpty.optional() })
    .optional(),
  hold: z
    .strictObject({
      aboveMsat: z.int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
      perPlayer: z
        .strictObject({
          limitMsat: z.int().nonnegative().max(Number.MAX_SAFE_INTEGER),
          windowMs: z.int().positive(),
        })
        .optional(),
    })
    .optional(),
});

/** A patch as every store accepts it (exported as the reference plainPatch is tested against). */
export const patchSchema = z.strictObject({
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

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new InvalidIntentError(`invalid ${what}: ${z.prettifyError(result.error)}`, {
      cause: result.error,
    });
  }
  return result.data;
}

export function parsePatch(value: IntentPatch): IntentPatch {
  const plain = plainPatch(value);
  if (plain !== null) return plain;
  const parsed = parse(patchSchema, value, 'patch');
  if (parsed.meta !== undefined) assertJson(parsed.meta);
  return parsed;
}

export function parseEpochMs(value: number, what: string): number {
  return isEpochMs(value) ? value : parse(epochMs, value, what);
}

/** What `epochMs` accepts. */
function isEpochMs(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** A plain object (what zod's strict objects read their keys from, with nothing inherited). */
function isPlain(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A patch without meta, each field of its type, as patchSchema answers (undefined keys too); else null. */
function plainPatch(value: unknown): IntentPatch | null {
  if (!isPlain(value)) return null;
  const out: Record<string, unknown> = {};
  for (const key in value) {
    const v = value[key];
    if (v !== undefined && v !== null) {
      switch (key) {
        case 'remoteId':
        case 'code':
        case 'uri':
        case 'leaseOwner':
          if (typeof v !== 'string' || v.length === 0) return null;
          break;
        case 'expiresAt':
        case 'nextCheckAt':
        case 'leaseUntil':
        case 'checks':
          if (!isEpochMs(v)) return null;
          break;
        case 'error':
          if (typeof v !== 'string') return null;
          break;
        default:
          return null;
      }
    } else if (v === null && (key === 'checks' || !PATCH_KEYS.has(key))) {
      return null;
    } else if (v === undefined && !PATCH_KEYS.has(key)) {
      return null;
    }
    out[key] = v;
  }
  return out as IntentPatch;
}

/** The keys plainPatch takes (all of patchSchema's but meta). */
const PATCH_KEYS: ReadonlySet<string> = new Set(
  Object.keys(patchSchema.shape).filter((key) => key !== 'meta'),
);

const statusSchema = z.enum(INTENT_STATUSES);

/** The budget windows a new intent is checked against: payouts only, a room's only with a room. */
function budgetsFor(intent: NewIntent, guards: CreateGuards): BudgetWindow[] {
  if (!isPayout(intent.kind)) return [];
  return (guards.budgets ?? []).filter((b) => b.scope !== 'room' || intent.roomId !== null);
}

/**
 * How the approvals' hold applies to a new payout: `now` when its amount alone is above the
 * line; `window`, the player's window the store sums in the create's atomic step, or null;
 * `queue`, recorded `queued` unless the hold takes it.
 */
export interface HoldCheck {
  now: boolean;
  window: { limitMsat: number; windowMs: number } | null;
  queue: boolean;
}

function holdOf(intent: NewIntent, guards: CreateGuards): HoldCheck {
  const hold = guards.hold;
  if (!isPayout(intent.kind)) return { now: false, window: null, queue: false };
  const queue = guards.queue === true;
  if (hold === undefined) return { now: false, window: null, queue };
  const above = hold.aboveMsat !== undefined && BigInt(intent.amount) > BigInt(hold.aboveMsat);
  return { now: above, window: hold.perPlayer ?? null, queue };
}

/** A create's arguments, checked in order (intent, now, guards), with its budgets and hold. */
export function parseCreate(
  intent: NewIntent,
  now: number,
  guards: CreateGuards,
): { input: NewIntent; checks: CreateGuards; budgets: BudgetWindow[]; hold: HoldCheck } {
  const input = parse(newIntentSchema, intent, 'intent') as NewIntent;
  if (input.meta !== undefined) assertJson(input.meta);
  parseEpochMs(now, 'now');
  const checks = parse(guardsSchema, guards, 'guards') as CreateGuards;
  if (checks.seat !== undefined && (input.groupId ?? null) === null) {
    throw new InvalidIntentError('guards.seat: a seat is in a group, and the intent has none');
  }
  return {
    input,
    checks,
    budgets: budgetsFor(input, checks),
    hold: holdOf(input, checks),
  };
}

/** A move's arguments: the move (assertMove), its time, a patch that schedules no ended intent. */
export function parseMove(
  from: IntentStatus | readonly IntentStatus[],
  to: IntentStatus,
  options: TransitionOptions,
  fallbackNow: () => number,
): { sources: IntentStatus[]; now: number; patch: IntentPatch; dueAlso: DueAlso | null } {
  const sources = assertMove(from, to);
  const now = parseEpochMs(options.now ?? fallbackNow(), 'now');
  const patch = parsePatch(options.patch ?? {});
  assertSchedulable(to, patch);
  const dueAlso =
    options.dueAlso === undefined ? null : parse(dueAlsoSchema, options.dueAlso, 'dueAlso');
  return { sources, now, patch, dueAlso };
}

const dueAlsoSchema = z.strictObject({
  id: nonEmpty,
  status: z.enum(INTENT_STATUSES),
  at: epochMs,
});

/** An update's arguments; answers the parsed patch. */
export function parseUpdate(status: IntentStatus, patch: IntentPatch, now: number): IntentPatch {
  parse(statusSchema, status, 'status');
  parseEpochMs(now, 'now');
  const input = parsePatch(patch);
  assertSchedulable(status, input);
  return input;
}

export function parseLimit(limit: number): void {
  parse(z.int().nonnegative(), limit, 'limit');
}

export function parseClaim(limit: number, owner: string, leaseMs: number, queued?: number): void {
  parse(z.int().nonnegative(), limit, 'limit');
  parse(z.int().nonnegative().optional(), queued, 'queued share');
  parse(nonEmpty, owner, 'lease owner');
  parse(z.int().positive(), leaseMs, 'lease duration');
}

/** `from` as a list; refused whole if any source may not move to `to` (a caller's bug). */
export function assertMove(
  from: IntentStatus | readonly IntentStatus[],
  to: IntentStatus,
): IntentStatus[] {
  const sources = typeof from === 'string' ? [from] : [...from];
  if (
    !isStatus(to) ||
    sources.length === 0 ||
    !sources.every((s) => isStatus(s) && canMove(s, to))
  ) {
    throw new IllegalTransitionError(sources, to);
  }
  return sources.length === 1 ? sources : [...new Set(sources)];
}

function isStatus(value: unknown): value is IntentStatus {
  return INTENT_STATUSES.includes(value as IntentStatus);
}

/** A terminal intent is never checked or leased again, so a patch may not schedule one. */
export function assertSchedulable(status: IntentStatus, patch: IntentPatch): void {
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
export const MAX_POSTING_AMOUNT = 2n ** 63n - 1n;
/** A posting's amount: a positive integer in decimal, of at most 19 digits. */
const POSTING_AMOUNT = /^[1-9][0-9]{0,18}$/;
/** The most postings one write may carry. */
const MAX_POSTINGS = 16;

const postingSchema = z.strictObject({
  tag: z.string().regex(POSTING_TAG_PATTERN, 'must be 1 to 40 of a-z, 0-9 and -'),
  debit: z.string().refine(isAccount, 'must be an account (class or class:owner)'),
  credit: z.string().refine(isAccount, 'must be an account (class or class:owner)'),
  amount: z
    .string()
    // abort: zod runs later checks after a failed one, and BigInt('1.5') throws a SyntaxError.
    .regex(POSTING_AMOUNT, {
      error: 'must be a positive integer as a decimal string',
      abort: true,
    })
    .refine((a) => BigInt(a) <= MAX_POSTING_AMOUNT, 'must fit a signed 64-bit integer'),
  unit: z.string().min(1).max(32),
  why: z.string().max(500),
});

/** Built once: a schema built per call would cost every write its construction. */
export const postingsSchema = z.array(postingSchema).max(MAX_POSTINGS);

/** A write's postings, before anything is written: well formed, two accounts, no tag twice. */
export function parsePostings(postings: readonly Posting[] | undefined): Posting[] {
  if (postings === undefined) return [];
  const parsed = plainPostings(postings) ?? parse(postingsSchema, postings, 'postings');
  const tags = new Set<string>();
  for (const posting of parsed) {
    if (posting.debit === posting.credit) {
      throw new InvalidIntentError(
        `invalid postings: ${posting.tag} debits and credits one account`,
      );
    }
    if (tags.has(posting.tag)) {
      throw new InvalidIntentError(`invalid postings: the tag ${posting.tag} is given twice`);
    }
    tags.add(posting.tag);
  }
  return parsed;
}

/** Postings of exactly the six fields, each well formed, as postingsSchema answers; else null. */
function plainPostings(value: unknown): Posting[] | null {
  if (!Array.isArray(value) || value.length > MAX_POSTINGS) return null;
  const out: Posting[] = [];
  for (const posting of value) {
    if (!isPlain(posting)) return null;
    let keys = 0;
    for (const _ in posting) keys++;
    const { tag, debit, credit, amount, unit, why } = posting;
    if (
      keys !== 6 ||
      typeof tag !== 'string' ||
      !POSTING_TAG_PATTERN.test(tag) ||
      typeof debit !== 'string' ||
      !isAccount(debit) ||
      typeof credit !== 'string' ||
      !isAccount(credit) ||
      typeof amount !== 'string' ||
      !POSTING_AMOUNT.test(amount) ||
      BigInt(amount) > MAX_POSTING_AMOUNT ||
      typeof unit !== 'string' ||
      unit.length < 1 ||
      unit.length > 32 ||
      typeof why !== 'string' ||
      why.length > 500
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

/** A journal query as parseJournalQuery leaves it. */
export type JournalFilter = Omit<JournalQuery, 'after' | 'limit'> & {
  after: number;
  limit: number;
};

/** A journal query; `limit` defaults to 100, `after` becomes a seq. */
export function parseJournalQuery(query: JournalQuery | undefined): JournalFilter {
  const parsed = parse(journalQuerySchema, query ?? {}, 'journal query');
  return { ...parsed, after: Number(parsed.after ?? 0), limit: parsed.limit ?? 100 };
}

const accountsSchema = z.array(z.string().refine(isAccountName)).max(1000);

/** Account names for `balances`: at most 1,000, each an account. */
export function parseAccounts(accounts: readonly string[] | undefined): string[] | undefined {
  if (accounts === undefined) return undefined;
  return parse(accountsSchema, accounts, 'accounts');
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

function refused(what: string, error: z.ZodError): InvalidIntentError {
  const issue = error.issues[0];
  const at = issue && issue.path.length > 0 ? issue.path.join('.') : what;
  return new InvalidIntentError(`invalid ${what}: ${at} ${issue?.message ?? 'is invalid'}`);
}

/** Checks a line before a store appends it: InvalidIntentError naming the first bad field. */
export function parseOperatorAction(line: NewOperatorAction): NewOperatorAction {
  const parsed = lineSchema.safeParse(line);
  if (!parsed.success) throw refused('operator action', parsed.error);
  const { action, intentId, playerId } = parsed.data;
  if ((action === 'block' || action === 'unblock') && playerId === null) {
    throw new InvalidIntentError(`invalid operator action: ${action} must name a playerId`);
  }
  if (INTENT_ACTIONS.includes(action) && intentId === null) {
    throw new InvalidIntentError(`invalid operator action: ${action} must name an intentId`);
  }
  return parsed.data;
}

/** Checks a line for `recordBlock`: a block or an unblock, of a player. */
export function parseBlock(line: NewOperatorAction): NewOperatorAction {
  const parsed = parseOperatorAction(line);
  if (parsed.action !== 'block' && parsed.action !== 'unblock') {
    throw new InvalidIntentError(
      `invalid operator action: recordBlock takes a block or an unblock, not ${parsed.action}`,
    );
  }
  return parsed;
}

/** Checks a line for `recordPause`: a pause or a resume of the game's payouts, naming no player. */
export function parsePause(line: NewOperatorAction): NewOperatorAction {
  const parsed = parseOperatorAction(line);
  if (parsed.action !== 'pause' && parsed.action !== 'resume') {
    throw new InvalidIntentError(
      `invalid operator action: recordPause takes a pause or a resume, not ${parsed.action}`,
    );
  }
  if (parsed.playerId !== null || parsed.intentId !== null) {
    throw new InvalidIntentError(
      `invalid operator action: a ${parsed.action} of the game's payouts names no player or intent`,
    );
  }
  return parsed;
}

/** Checks a query: `after` becomes a seq, `limit` defaults to 100. */
export function parseOperatorLogQuery(query: OperatorLogQuery | undefined): OperatorLogFilter {
  const parsed = querySchema.safeParse(query ?? {});
  if (!parsed.success) throw refused('operator log query', parsed.error);
  const { after, limit, ...filters } = parsed.data;
  return { ...filters, after: Number(after ?? 0), limit: limit ?? 100 };
}

/** A player id for `isBlocked`: 1 to 255 characters. */
export function parsePlayerId(playerId: string): string {
  const parsed = name.safeParse(playerId);
  if (!parsed.success) throw refused('player id', parsed.error);
  return parsed.data;
}

/** A time as the stores keep them: whole epoch ms, not negative. */
export function parseRateTime(value: number, what: 'now' | 'until'): number {
  if (!(Number.isSafeInteger(value) && value >= 0)) {
    throw new InvalidIntentError(`${what} must be a non-negative whole number of epoch ms`);
  }
  return value;
}

/** How long a hold until `until` lasts from `now` (both checked): 0 for one already over. */
export function holdFor(until: number, now: number): number {
  return Math.max(0, parseRateTime(until, 'until') - parseRateTime(now, 'now'));
}

export function parseTake(limit: RateLimit, now: number, keep: number): RateLimit {
  parseRateTime(now, 'now');
  const { perSecond, burst } = (limit ?? {}) as Partial<RateLimit>;
  if (
    !(typeof perSecond === 'number' && Number.isFinite(perSecond) && perSecond > 0) ||
    !(typeof burst === 'number' && Number.isFinite(burst) && burst >= 1)
  ) {
    throw new InvalidIntentError('limit must be { perSecond > 0, burst >= 1 }, finite numbers');
  }
  if (!(Number.isSafeInteger(keep) && keep >= 0 && keep + 1 <= burst)) {
    throw new InvalidIntentError('keep must be a whole number from 0 to burst - 1');
  }
  return { perSecond, burst };
}
