/**
 * An entry fee: a single-use static charge (min = max = the fee, one slot). The service gives
 * static charges no expiry of their own, so the fee's deadline is ours: when it passes, the
 * reconciler closes the charge and reads it once more before calling the fee expired.
 */
import { createHash } from 'node:crypto';
import { parseInput } from '../../api/inputs.js';
import type { Intent } from '../../ledger/intent.js';
import type { Engine } from '../engine.js';
import { newCallbackToken } from '../tokens.js';
import { type OnBehalf, recordThenSend } from './create.js';
import { type EntryFeeInput, entryFeeInput } from './inputs.js';

export async function startEntryFee(
  engine: Engine,
  input: EntryFeeInput,
  behalf: OnBehalf = {},
): Promise<Intent> {
  const args = parseInput(entryFeeInput, input);
  const token = newCallbackToken();
  return recordThenSend(
    engine,
    {
      kind: 'entryFee',
      roomId: args.roomId,
      playerId: args.playerId,
      amount: args.amountMsat,
      unit: 'msats',
      description: args.description,
      callbackToken: token,
      expiresAt: engine.now() + args.expiresIn * 1000,
      openKey: openKeyOf(args.roomId, args.playerId, args.key),
      meta: { ...behalf.meta, slotsBaseline: 0 },
      ...(behalf.groupId === undefined ? {} : { groupId: behalf.groupId }),
    },
    () =>
      engine.api.staticCharges.create({
        minAmount: args.amountMsat,
        maxAmount: args.amountMsat,
        description: args.description,
        allowedSlots: 1,
        internalId: args.playerId,
        callbackUrl: engine.callbackUrl(token),
        ...(args.successMessage === undefined ? {} : { successMessage: args.successMessage }),
      }),
    (created, intent) => ({
      patch: {
        remoteId: created.id,
        code: created.invoice.request,
        uri: created.invoice.uri ?? `lightning:${created.invoice.request}`,
        meta: { ...intent.meta, slotsBaseline: created.slots },
        nextCheckAt: engine.nextCheckAt(intent),
      },
      note: `static charge ${created.status}`,
    }),
  );
}

/** One open fee per player per room (and per key, when the game names one). */
function openKeyOf(roomId: string | null, playerId: string, key: string | undefined): string {
  const seat = JSON.stringify(['entryFee', roomId, playerId, key ?? null]);
  return `fee:${createHash('sha256').update(seat).digest('base64url')}`;
}
