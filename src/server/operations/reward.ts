/**
 * A reward: a withdrawal request for one player, recorded in the ledger before the service
 * is called, with a callback URL that carries the intent's secret token.
 */
import { parseInput } from '../../api/inputs.js';
import type { Intent } from '../../ledger/intent.js';
import type { LightningCore } from '../core.js';
import { newCallbackToken } from '../tokens.js';
import { type RewardInput, rewardInput } from './inputs.js';
import { recordCreateFailure } from './outcome.js';

export async function startReward(core: LightningCore, input: RewardInput): Promise<Intent> {
  const args = parseInput(rewardInput, input);
  const token = newCallbackToken();
  const now = core.now();
  const intent = await core.ledger.create(
    {
      kind: 'reward',
      roomId: args.roomId,
      playerId: args.playerId,
      amount: args.amountMsat,
      unit: 'msats',
      description: args.description,
      callbackToken: token,
      expiresAt: now + args.expiresIn * 1000,
    },
    now,
  );
  let created: Awaited<ReturnType<typeof core.api.withdrawalRequests.create>>;
  try {
    created = await core.api.withdrawalRequests.create({
      amount: args.amountMsat,
      description: args.description,
      internalId: args.playerId,
      callbackUrl: core.callbackUrl(token),
      expiresIn: args.expiresIn,
    });
  } catch (err) {
    await recordCreateFailure(core, intent, err, null);
    throw err;
  }
  const expiresAt = Date.parse(created.invoice.expiresAt ?? created.expiresAt ?? '');
  const pending = {
    ...intent,
    expiresAt: Number.isNaN(expiresAt) ? intent.expiresAt : expiresAt,
  };
  const moved = await core.apply(
    intent,
    'pending',
    {
      remoteId: created.id,
      code: created.invoice.request,
      uri: created.invoice.uri ?? `lightning:${created.invoice.request}`,
      expiresAt: pending.expiresAt,
      nextCheckAt: core.reconciler.nextCheckAt(pending, core.now()),
    },
    `withdrawal request ${created.status}`,
  );
  // Only a callback racing the create answer could have moved it already; read what won.
  return moved ?? ((await core.ledger.get(intent.id)) as Intent);
}
