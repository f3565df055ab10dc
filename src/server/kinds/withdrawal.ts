/**
 * The withdrawal kind: a player's tab, or part of it, out as one claim code only that player
 * sees. A payout like a reward (the same code, re-reads and lost-answer rule, budgets and
 * approvals hold), paid from the tab: recorded only if the tab holds it (CreateGuards.funds,
 * in the ledger's atomic step), and what ends unclaimed goes back to the tab.
 */
import type { Intent } from '../../ledger/intent.js';
import { accounts } from '../../ledger/journal.js';
import type { Engine } from '../engine.js';
import { recordThenSend, refuseBlocked } from '../operations/create.js';
import type { ParsedWithdrawal } from '../operations/inputs.js';
import { newCallbackToken } from '../tokens.js';
import type { KindRules } from './kind.js';
import { mayReissue, payoutPosition } from './payout-position.js';
import { reward, rewardAnswer, rewardCall } from './reward.js';

export const withdrawal: KindRules = {
  kind: 'withdrawal',
  reads: 'resource',
  lostAnswer: 'deadline',
  showsCode: true,
  room: 'rewards',
  movesMoney: true,
  counts: 'moneyOut',
  mayReissue,
  position: (intent) =>
    payoutPosition(
      intent,
      { account: accounts.claimable(intent.playerId), why: 'code shown' },
      'claimed',
      accounts.tab(intent.playerId),
    ),
  observe: reward.observe,
};

/** Turns `amountMsat` of the player's tab into one claim code; refused past the balance. */
export async function startWithdrawal(engine: Engine, args: ParsedWithdrawal): Promise<Intent> {
  await refuseBlocked(engine, args.playerId);
  await engine.breaker.admit(BigInt(args.amountMsat));
  const guards = {
    ...engine.guards('withdrawal'),
    funds: { account: accounts.tab(args.playerId) },
  };
  return recordThenSend(
    engine,
    {
      kind: 'withdrawal',
      roomId: args.roomId,
      playerId: args.playerId,
      amount: args.amountMsat,
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
