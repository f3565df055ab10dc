/**
 * The decisions of a create, written once: which budgets and hold apply, what its guards refuse,
 * the status it records. A driver reads the numbers (counts, window sums) under its own locks and
 * asks these; pure functions, so that SQLite's worker thread runs the same ones.
 */
import { BudgetExceededError, LimitExceededError } from '../errors.js';
import { type IntentStatus, isPayout, type NewIntent } from './intent.js';
import type { BudgetWindow, CreateGuards } from './store.js';

/**
 * How the approvals' hold applies to a new payout: `now` when its amount alone is above the
 * line; `window`, the player's window to sum in the create's atomic step; `queue`, recorded
 * `queued` unless the hold takes it.
 */
export interface HoldCheck {
  now: boolean;
  window: { limitMsat: number; windowMs: number } | null;
  queue: boolean;
}

/** A create as the rules read it, parsed (core.ts CreateCall). */
export interface Guarded {
  input: NewIntent;
  now: number;
  /** The count guards and the seat. */
  guards: CreateGuards;
  /** The budget windows that apply to this intent. */
  budgets: readonly BudgetWindow[];
  hold: HoldCheck;
}

/** What an operator line changes with it, as a compare-and-set (no change: no line). */
export type LineChange =
  | { kind: 'block' | 'unblock'; playerId: string }
  | { kind: 'pause' | 'resume' };

/** A sum a create reads in its atomic step: payouts of a scope created after `since`. */
export interface WindowRead {
  scope: BudgetWindow['scope'];
  since: number;
}

/** The budgets and the hold a parsed create is held to: payouts only, a room's with a room. */
export function guarded(input: NewIntent, now: number, guards: CreateGuards): Guarded {
  if (!isPayout(input.kind)) {
    return { input, now, guards, budgets: [], hold: { now: false, window: null, queue: false } };
  }
  const budgets = (guards.budgets ?? []).filter((b) => b.scope !== 'room' || input.roomId !== null);
  const { hold, queue = false } = guards;
  const above = hold?.aboveMsat !== undefined && BigInt(input.amount) > BigInt(hold.aboveMsat);
  return {
    input,
    now,
    guards,
    budgets,
    hold: { now: above, window: hold?.perPlayer ?? null, queue },
  };
}

/** The window sums a create reads, in order: each budget's, then the hold's player window. */
export function windowsOf({ now, budgets, hold }: Guarded): WindowRead[] {
  const reads = budgets.map((b) => ({ scope: b.scope, since: now - b.windowMs }));
  if (!hold.now && hold.window !== null) {
    reads.push({ scope: 'player', since: now - hold.window.windowMs });
  }
  return reads;
}

function past(reserved: bigint | string, amount: string, limitMsat: number): boolean {
  return BigInt(reserved) + BigInt(amount) > BigInt(limitMsat);
}

/**
 * A create's guards, decided on what its driver read in the create's atomic step: the player's
 * open intents (read when maxOpenPerPlayer is set) and the sums of windowsOf, in its order.
 * Throws the refusal, else answers the status to record: `held` when the hold takes the payout,
 * else `queued` for the queue, else `creating`.
 */
export function admit(
  { input, guards, budgets, hold }: Guarded,
  playerOpen: number | undefined,
  sums: readonly (bigint | string)[],
): Extract<IntentStatus, 'creating' | 'held' | 'queued'> {
  const max = guards.maxOpenPerPlayer;
  if (max !== undefined && Number(playerOpen) >= max) {
    throw new LimitExceededError('maxOpenPerPlayer', max, input.playerId);
  }
  for (const [i, b] of budgets.entries()) {
    const reserved = sums[i] ?? 0n;
    if (past(reserved, input.amount, b.limitMsat)) {
      throw new BudgetExceededError(b.scope, String(b.limitMsat), String(reserved), b.windowMs);
    }
  }
  const window = hold.window;
  if (hold.now || (window && past(sums[budgets.length] ?? 0n, input.amount, window.limitMsat))) {
    return 'held';
  }
  return hold.queue ? 'queued' : 'creating';
}

/**
 * The game's cap on `open`, its open count before this create, read in its atomic step. A
 * record that moves no money is refused at the cap too, though it does not count.
 */
export function refuseGameCap(input: NewIntent, max: number | undefined, open: number): void {
  if (max !== undefined && open >= max) {
    throw new LimitExceededError('maxOpenPerGame', max, input.playerId);
  }
}

/**
 * Whether an intent counts in the game's open count and the start-up sweep: its kind's module
 * says, as `movesMoney` (a group's own record moves none: its members do).
 */
export function countsOpen(input: NewIntent): boolean {
  return input.movesMoney !== false;
}
