/**
 * The withdrawal kind: a player's tab, or part of it, out as one claim code only that player
 * sees. A payout like a reward (the same code, re-reads and lost-answer rule, budgets and
 * approvals hold; not `budgets.maxRewardMsat`: it gathers many credits, each under
 * `tabs.maxCreditMsat`), paid from the tab: recorded only if the tab holds it
 * (CreateGuards.funds) and the player's day allows it (`tabs.withdrawPerDayMsat`), both in the
 * ledger's atomic step; what ends unclaimed goes back to the tab.
 */
import { DAY_MS } from '../../clock.js';
import { WithdrawalTooSmallError } from '../../errors.js';
import type { Intent } from '../../ledger/intent.js';
import { accounts } from '../../ledger/journal.js';
import type { Engine } from '../engine.js';
import { recordThenSend, refuseBlocked } from '../operations/create.js';
import type { ParsedWithdrawal } from '../operations/inputs.js';
import { newCallbackToken } from '../tokens.js';
import type { KindRules } from './kind.js';
import { payoutPosition } from './payout-position.js';
import { reward, rewardAnswer, rewardCall } from './reward.js';

/** A reward in every rule but its source: paid from the tab, and what ends unclaimed goes back. */
export const withdrawal: KindRules = {
  ...reward,
  kind: 'withdrawal',
  position: (intent) =>
    payoutPosition(
      intent,
      { account: accounts.claimable(intent.playerId), why: 'code shown' },
      'claimed',
      accounts.tab(intent.playerId),
    ),
};

/** The msats in a player's tab now, as the journal holds them (a decimal string). */
export async function tabBalance(engine: Engine, playerId: string): Promise<string> {
  const rows = await engine.ledger.balances([accounts.tab(playerId)]);
  return rows.find((r) => r.unit === 'msats')?.balance ?? '0';
}

/**
 * Turns `amountMsat` of the player's tab (default: all of it, as read now) into one claim
 * code; refused under the minimum, past the balance or past the player's day.
 */
export async function startWithdrawal(engine: Engine, args: ParsedWithdrawal): Promise<Intent> {
  const { playerId } = args;
  await refuseBlocked(engine, playerId);
  // The whole tab as read: a draw racing it is refused by the funds guard, never overdrawn.
  const amount = args.amountMsat ?? (await tabBalance(engine, playerId));
  const { minWithdrawalMsat, withdrawPerDayMsat } = engine.settings.tabs;
  if (BigInt(amount) < BigInt(minWithdrawalMsat)) {
    throw new WithdrawalTooSmallError(playerId, amount, String(minWithdrawalMsat));
  }
  await engine.breaker.admit(BigInt(amount));
  const payout = engine.guards('withdrawal');
  const day = { scope: 'player', limitMsat: withdrawPerDayMsat, windowMs: DAY_MS } as const;
  const guards = {
    ...payout,
    budgets: [...(payout.budgets ?? []), { ...day, over: 'withdrawals' as const }],
    funds: { account: accounts.tab(playerId) },
  };
  return recordThenSend(
    engine,
    {
      kind: 'withdrawal',
      roomId: args.roomId,
      playerId,
      amount,
      unit: 'msats',
      description: args.description,
      callbackToken: newCallbackToken(),
      expiresAt: engine.now() + args.expiresIn * 1000,
    },
    rewardCall(engine, args.expiresIn),
    rewardAnswer(engine),
    { guards },
  );
}
