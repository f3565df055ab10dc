/**
 * The operator's audit log: one line per action an operator took on the game's money, appended
 * and never changed or removed: who, when, what, on which intent or player, before, after, why.
 */

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
export const INTENT_ACTIONS: readonly OperatorActionName[] = [
  'resolve',
  'reissue',
  'approve',
  'reject',
];

/** A line as a caller hands it to `LedgerStore.recordOperatorAction`. */
export interface NewOperatorAction {
  /** The operator's name (1 to 255 characters). */
  by: string;
  action: OperatorActionName;
  /** The intent and the player it acted on, or null. */
  intentId: string | null;
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
  /** The cursor for paging (`after`): appends are made one at a time. */
  seq: number;
  /** epoch ms of the append. */
  at: number;
}

/** Which lines `LedgerStore.operatorLog` lists; every filter given must hold. */
export interface OperatorLogQuery {
  /** epoch ms: lines appended at or after it. */
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
