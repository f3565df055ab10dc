/**
 * A reward: a withdrawal request for one player, recorded in the ledger before the service
 * is called, with a callback URL that carries the intent's secret token.
 */
import { parseInput } from '../../api/inputs.js';
import { BudgetExceededError } from '../../errors.js';
import type { Intent } from '../../ledger/intent.js';
import type { Engine } from '../engine.js';
import { newCallbackToken } from '../tokens.js';
import { type OnBehalf, recordThenSend } from './create.js';
import { type RewardInput, rewardInput } from './inputs.js';

export async function startReward(
  engine: Engine,
  input: RewardInput,
  behalf: OnBehalf = {},
): Promise<Intent> {
  const args = parseInput(rewardInput, input);
  const max = engine.settings.budgets.maxRewardMsat;
  // A payout of a match's pot was paid in by its players: budgets guard the game's own money.
  if (max !== undefined && behalf.guards === undefined && BigInt(args.amountMsat) > BigInt(max)) {
    throw new BudgetExceededError('reward', String(max), '0', null);
  }
  await engine.breaker.admit(BigInt(args.amountMsat));
  const token = newCallbackToken();
  return recordThenSend(
    engine,
    {
      kind: 'reward',
      roomId: args.roomId,
      playerId: args.playerId,
      amount: args.amountMsat,
      unit: 'msats',
      description: args.description,
      callbackToken: token,
      expiresAt: engine.now() + args.expiresIn * 1000,
      ...(behalf.id === undefined ? {} : { id: behalf.id }),
      ...(behalf.groupId === undefined ? {} : { groupId: behalf.groupId }),
      ...(behalf.meta === undefined ? {} : { meta: behalf.meta }),
    },
    () =>
      engine.api.withdrawalRequests.create({
        amount: args.amountMsat,
        description: args.description,
        internalId: args.playerId,
        callbackUrl: engine.callbackUrl(token),
        expiresIn: args.expiresIn,
      }),
    (created, intent) => {
      // The service's own expiry wins over ours when it says one.
      const said = Date.parse(created.invoice.expiresAt ?? created.expiresAt ?? '');
      const expiresAt = Number.isNaN(said) ? intent.expiresAt : said;
      return {
        patch: {
          remoteId: created.id,
          code: created.invoice.request,
          uri: created.invoice.uri ?? `lightning:${created.invoice.request}`,
          expiresAt,
          nextCheckAt: engine.nextCheckAt({ ...intent, expiresAt }),
        },
        note: `withdrawal request ${created.status}`,
      };
    },
    behalf.guards === undefined ? {} : { guards: behalf.guards },
  );
}
