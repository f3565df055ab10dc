/**
 * An entry fee: a single-use static charge (min = max = the fee, one slot). The service gives
 * static charges no expiry of their own, so the fee's deadline is ours: when it passes, the
 * reconciler closes the charge and reads it once more before calling the fee expired.
 */
import { parseInput } from '../../api/inputs.js';
import type { Intent } from '../../ledger/intent.js';
import type { LightningCore } from '../core.js';
import { newCallbackToken } from '../tokens.js';
import { type EntryFeeInput, entryFeeInput } from './inputs.js';
import { recordCreateFailure } from './outcome.js';

export async function startEntryFee(core: LightningCore, input: EntryFeeInput): Promise<Intent> {
  const args = parseInput(entryFeeInput, input);
  const token = newCallbackToken();
  const now = core.now();
  const intent = await core.ledger.create(
    {
      kind: 'entryFee',
      roomId: args.roomId,
      playerId: args.playerId,
      amount: args.amountMsat,
      unit: 'msats',
      description: args.description,
      callbackToken: token,
      expiresAt: now + args.expiresIn * 1000,
      meta: { slotsBaseline: 0 },
    },
    now,
  );
  let created: Awaited<ReturnType<typeof core.api.staticCharges.create>>;
  try {
    created = await core.api.staticCharges.create({
      minAmount: args.amountMsat,
      maxAmount: args.amountMsat,
      description: args.description,
      allowedSlots: 1,
      internalId: args.playerId,
      callbackUrl: core.callbackUrl(token),
      ...(args.successMessage === undefined ? {} : { successMessage: args.successMessage }),
    });
  } catch (err) {
    await recordCreateFailure(core, intent, err, null);
    throw err;
  }
  const moved = await core.apply(
    intent,
    'pending',
    {
      remoteId: created.id,
      code: created.invoice.request,
      uri: created.invoice.uri ?? `lightning:${created.invoice.request}`,
      meta: { slotsBaseline: created.slots },
      nextCheckAt: core.reconciler.nextCheckAt(intent, core.now()),
    },
    `static charge ${created.status}`,
  );
  return moved ?? ((await core.ledger.get(intent.id)) as Intent);
}
