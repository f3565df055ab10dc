/**
 * The operator's audit log: one line per action an operator took on the game's money (a
 * resolve, a pause, a reissue, a block), appended by the store and never changed or removed.
 * Each says who, when, what, on which intent or player, the state before and after, and why.
 * Here: its shapes, and the one check every store makes of a line and a query (zod).
 */
import { z } from 'zod';
import { InvalidIntentError } from './errors.js';

/** What an operator may do; each is a method of `Lightning` of the same name. */
export const OPERATOR_ACTIONS = [
  'resolve',
  'pause',
  'resume',
  'reissue',
  'approve',
  'reject',
  'block',
  'unblock',
] as const;
export type OperatorActionName = (typeof OPERATOR_ACTIONS)[number];

/** The actions on one intent: each line of theirs names it. */
const INTENT_ACTIONS: readonly OperatorActionName[] = ['resolve', 'reissue', 'approve', 'reject'];

/** A line as a caller hands it to `LedgerStore.recordOperatorAction`. */
export interface NewOperatorAction {
  /** Who did it: the operator's name, as the caller gives it (1 to 255 characters). */
  by: string;
  action: OperatorActionName;
  /** The intent it acted on (a resolve, a reissue), or null. */
  intentId: string | null;
  /** The player it acted on (a block; a resolve's or reissue's intent's player), or null. */
  playerId: string | null;
  /** The state before: an intent's status, `running`/`paused`, `blocked`/`unblocked`. */
  before: string;
  /** The state after (for a reissue: the new attempt's id). */
  after: string;
  /** Why, in the operator's words ('' when none was asked for: a resume, an unblock). */
  note: string;
}

/** A line as the log keeps it. */
export interface OperatorAction extends NewOperatorAction {
  /** Names the line and is the cursor for paging (`after`): appends are made one at a time. */
  seq: number;
  /** epoch ms of the append. */
  at: number;
}

/** Which lines `LedgerStore.operatorLog` lists; every filter given must hold. */
export interface OperatorLogQuery {
  /** Lines appended at or after this time (epoch ms). */
  since?: number;
  intentId?: string;
  playerId?: string;
  /** The `next` of an earlier page (a line's `seq`): the lines listed after it. */
  after?: string;
  /** 1 to 1000; default 100. */
  limit?: number;
}

export interface OperatorLogPage {
  /** Oldest first, by seq. */
  actions: OperatorAction[];
  /** Pass as `after` for the next page; null when this page is the last. */
  next: string | null;
}

/** A query as every store reads it: `after` a seq (0: from the start), `limit` given. */
export interface OperatorLogFilter {
  since?: number;
  intentId?: string;
  playerId?: string;
  after: number;
  limit: number;
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
  after: z
    .string()
    .regex(/^(0|[1-9][0-9]{0,15})$/, 'must be the next of an earlier page')
    .optional(),
  limit: z.int().min(1).max(1000).optional(),
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

/** A line as a store's row holds it (LINE_COLUMNS; a 64-bit seq may come as text). */
export function lineOf(row: Record<string, unknown>): OperatorAction {
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
