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

/** A create as the guards' rules read it, parsed (core.ts CreateCall). */
export interface Guarded {
  input: NewIntent;
  now: number;
  /** The count guards and the seat (parseCreate's `checks`). */
  guards: CreateGuards;
  /** The budget windows that apply to this intent (budgetsFor). */
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

/** The window sums a create reads, in order: each budget's, then the hold's player window. */
export function windowsOf({ now, budgets, hold }: Guarded): WindowRead[] {
  const reads = budgets.map((b) => ({ scope: b.scope, since: now - b.windowMs }));
  if (!hold.now && hold.window !== null) {
    reads.push({ scope: 'player', since: now - hold.window.windowMs });
  }
  return reads;
}

/** Whether a window holding `reserved` takes `amount` past `limitMsat`. */
function past(reserved: bigint | string, amount: string, limitMsat: number): boolean {
  return BigInt(reserved) + BigInt(amount) > BigInt(limitMsat);
}

/**
 * A create's guards decided on what its driver read in the create's atomic step: the player's
 * open intents (`playerOpen`, read when maxOpenPerPlayer is set) and the sums of windowsOf, in
 * its order. Throws the refusal (the player's limit, then each budget), else answers the status
 * the create records: `held` when the hold takes the payout (its amount alone, or its player's
 * window), else `queued` for the queue, else `creating`.
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
  if (hold.now) return 'held';
  const window = hold.window;
  if (window !== null && past(sums[budgets.length] ?? 0n, input.amount, window.limitMsat)) {
    return 'held';
  }
  return hold.queue ? 'queued' : 'creating';
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
