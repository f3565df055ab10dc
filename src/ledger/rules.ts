/**
 * The decisions of a create, written once: which budgets and hold apply, what its guards refuse,
 * the status it records. A driver reads the numbers (counts, window sums) under its own locks and
 * asks these; pure functions, so that SQLite's worker thread runs the same ones.
 */
import {
  BudgetExceededError,
  EarningCapError,
  InsufficientFundsError,
  LimitExceededError,
  WithdrawalCapError,
} from '../errors.js';
import {
  type IntentStatus,
  isPayout,
  type NewIntent,
  WINDOW_KINDS,
  type WindowOver,
} from './intent.js';
import type { BudgetWindow, CreateGuards } from './store.js';
import type { FundsCheck } from './validate.js';

/** A create as the rules read it, parsed (core.ts CreateCall). */
export interface Guarded {
  input: NewIntent;
  now: number;
  guards: CreateGuards;
  /** The budget windows that apply to this intent. */
  budgets: readonly BudgetWindow[];
  /** The hold: now (its amount alone is above the line), or a player's window to sum. */
  hold: { now: boolean; window: { limitMsat: number; windowMs: number } | null; queue: boolean };
  /** The sums to read in the create's atomic step, in order: each budget's, then the hold's. */
  windows: WindowRead[];
  /** Whether it counts in the game's open count and the start-up sweep (its kind's movesMoney). */
  counts: boolean;
}

/** What an operator line changes with it, as a compare-and-set (no change: no line). */
export interface LineChange {
  /** The statement of that name (sql/<store>/), on these values. */
  kind: 'block' | 'unblock' | 'pause' | 'resume';
  values: (string | number | null)[];
}

/** Creates of a window's kinds (`over`) in a scope, created after `since`. */
export interface WindowRead {
  scope: BudgetWindow['scope'];
  since: number;
  over: WindowOver;
}

/** The budgets (those over its kind) and the hold (payouts only) a parsed create is held to. */
export function guarded(input: NewIntent, now: number, guards: CreateGuards): Guarded {
  const counts = input.movesMoney !== false;
  const budgets = (guards.budgets ?? []).filter(
    (b) =>
      WINDOW_KINDS[b.over ?? 'payouts'].includes(input.kind) &&
      (b.scope !== 'room' || input.roomId !== null),
  );
  const windows: WindowRead[] = budgets.map((b) => ({
    scope: b.scope,
    since: now - b.windowMs,
    over: b.over ?? 'payouts',
  }));
  if (!isPayout(input.kind)) {
    const hold = { now: false, window: null, queue: false };
    return { input, now, guards, budgets, hold, windows, counts };
  }
  const { hold, queue = false } = guards;
  const above = hold?.aboveMsat !== undefined && BigInt(input.amount) > BigInt(hold.aboveMsat);
  const window = hold?.perPlayer ?? null;
  if (!above && window !== null) {
    windows.push({ scope: 'player', since: now - window.windowMs, over: 'payouts' });
  }
  return { input, now, guards, budgets, hold: { now: above, window, queue }, windows, counts };
}

/** The refusal of a window's cap, in the words of what it counts. */
function refusal(b: BudgetWindow, playerId: string, reserved: bigint | string): Error {
  const [limit, held] = [String(b.limitMsat), String(reserved)];
  if (b.over === 'credits') return new EarningCapError(playerId, limit, held, b.windowMs);
  if (b.over === 'withdrawals') return new WithdrawalCapError(playerId, limit, held, b.windowMs);
  return new BudgetExceededError(b.scope, limit, held, b.windowMs);
}

function past(reserved: bigint | string, amount: string, limitMsat: number): boolean {
  return BigInt(reserved) + BigInt(amount) > BigInt(limitMsat);
}

/**
 * A create's guards on what its driver read in its atomic step: the player's open intents (when
 * maxOpenPerPlayer is set) and the sums of `windows`. Throws the refusal, else the status.
 */
export function admit(
  { input, guards, budgets, hold }: Guarded,
  playerOpen: number | undefined,
  sums: readonly (bigint | string)[],
): Extract<IntentStatus, 'creating' | 'held' | 'queued' | 'completed'> {
  const max = guards.maxOpenPerPlayer;
  if (max !== undefined && Number(playerOpen) >= max) {
    throw new LimitExceededError('maxOpenPerPlayer', max, input.playerId);
  }
  for (const [i, b] of budgets.entries()) {
    const reserved = sums[i] ?? 0n;
    if (past(reserved, input.amount, b.limitMsat)) throw refusal(b, input.playerId, reserved);
  }
  if (guards.settled) return 'completed';
  const window = hold.window;
  if (hold.now || (window && past(sums[budgets.length] ?? 0n, input.amount, window.limitMsat))) {
    return 'held';
  }
  return hold.queue ? 'queued' : 'creating';
}

/** The game's cap on its open count before this create (a record that moves none is refused too). */
export function refuseGameCap(input: NewIntent, max: number | undefined, open: number): void {
  if (max !== undefined && open >= max) {
    throw new LimitExceededError('maxOpenPerGame', max, input.playerId);
  }
}

/**
 * A `funds` guard on the balance its driver read after the create's postings, in the same
 * atomic step: below zero refuses the whole create (the driver rolls it back).
 */
export function refuseOverdraw(funds: FundsCheck, after: bigint | string): void {
  const balance = BigInt(after);
  if (balance >= 0n) return;
  const before = String(balance + funds.drawn);
  throw new InsufficientFundsError(funds.account, before, String(funds.drawn), funds.unit);
}
