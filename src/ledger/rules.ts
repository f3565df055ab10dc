/**
 * The rules a driver applies inside its own atomic step, written once: what a create's guards
 * refuse, whether the hold takes a payout, the status a create records, and the operator log's
 * compare-and-sets. A driver reads the numbers (counts and window sums, under its locks) and
 * asks these; pure functions, so that SQLite's worker thread runs the same ones.
 */
import { BudgetExceededError, LimitExceededError } from '../errors.js';
import type { IntentKind, IntentStatus, NewIntent } from './intent.js';
import type { BudgetWindow, CreateGuards } from './store.js';
import type { HoldCheck } from './validate.js';

/** What an operator line changes with it, as a compare-and-set (no change: no line). */
export type LineChange =
  | { kind: 'block' | 'unblock'; playerId: string }
  | { kind: 'pause' | 'resume' };

/** A budget window's start: payouts created after it count. */
export function windowStart(now: number, window: { windowMs: number }): number {
  return now - window.windowMs;
}

/** Whether a window holding `reserved` takes `amount` past `limitMsat`. */
function past(reserved: bigint | string, amount: string, limitMsat: number): boolean {
  return BigInt(reserved) + BigInt(amount) > BigInt(limitMsat);
}

/**
 * The guards read before the insert, in one order for every store: the player's open count
 * (`playerOpen`, read when maxOpenPerPlayer is set) and each budget's window sum (`budgets[i]`,
 * in the order of `budgets`). Throws the refusal; answers nothing.
 */
export function refuseCreate(
  input: NewIntent,
  guards: CreateGuards,
  budgets: readonly BudgetWindow[],
  playerOpen: number | undefined,
  sums: readonly (bigint | string)[],
): void {
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
}

/**
 * The game's cap: `open` is the game's open intents (matches aside) before this create, read
 * in its atomic step. A match is refused at the cap too, though it does not count.
 */
export function refuseGameCap(input: NewIntent, max: number | undefined, open: number): void {
  if (max !== undefined && open >= max) {
    throw new LimitExceededError('maxOpenPerGame', max, input.playerId);
  }
}

/** Whether a create counts in the game's open count (a match moves no money by itself). */
export function countsOpen(kind: IntentKind): boolean {
  return kind !== 'match';
}

/**
 * The status a create records: `held` when the hold takes the payout (its amount alone, or its
 * player's window, `windowSum`, read in the create's step), else `queued` for the queue, else
 * `creating`.
 */
export function firstStatus(
  input: NewIntent,
  hold: HoldCheck,
  windowSum: bigint | string | undefined,
): Extract<IntentStatus, 'creating' | 'held' | 'queued'> {
  if (hold.now) return 'held';
  if (hold.window !== null && past(windowSum ?? 0n, input.amount, hold.window.limitMsat)) {
    return 'held';
  }
  return hold.queue ? 'queued' : 'creating';
}

/** Whether a create needs the player's window read for the hold. */
export function needsHoldWindow(hold: HoldCheck): boolean {
  return !hold.now && hold.window !== null;
}
