/**
 * Spending a player's points: a deplete whose UUID idempotency key is stored in the intent
 * before the first attempt, so every retry (the client's, the reconciler's after a restart)
 * carries the same key and the service debits once.
 */
import { v4 as uuidv4 } from 'uuid';
import { AmbiguousResultError, InsufficientPointsError } from '../../api/errors.js';
import { parseInput } from '../../api/inputs.js';
import type { Intent } from '../../ledger/intent.js';
import type { LightningCore } from '../core.js';
import { type SpendInput, spendInput } from './inputs.js';
import { recordCreateFailure } from './outcome.js';

/** After a lost answer, the reconciler re-sends the same deplete this soon. */
const RESEND_AFTER_MS = 2_000;

export async function startSpend(core: LightningCore, input: SpendInput): Promise<Intent> {
  const args = parseInput(spendInput, input);
  const key = uuidv4();
  let intent = await core.ledger.create(
    {
      kind: 'spend',
      roomId: args.roomId,
      playerId: args.playerId,
      amount: String(args.amount),
      unit: args.currency,
      description: args.description,
      idempotencyKey: key,
      meta: { userId: args.userId },
    },
    core.now(),
  );
  let transfer: Awaited<ReturnType<typeof core.api.widgetUsers.deplete>>;
  try {
    transfer = await core.api.widgetUsers.deplete({
      user_id: args.userId,
      amount: args.amount,
      currency: args.currency,
      idempotency_key: key,
    });
  } catch (err) {
    const resend = err instanceof AmbiguousResultError && err.retryable ? RESEND_AFTER_MS : null;
    if (err instanceof InsufficientPointsError) {
      await core.apply(intent, 'failed', { error: 'insufficient point balance' }, 'TX3017');
    } else {
      await recordCreateFailure(core, intent, err, resend);
    }
    throw err;
  }
  const pending = await core.apply(
    intent,
    'pending',
    { remoteId: transfer.transfer_id, nextCheckAt: core.now() + RESEND_AFTER_MS },
    `transfer ${transfer.status}`,
  );
  if (!pending) return (await core.ledger.get(intent.id)) as Intent;
  intent = pending;
  if (transfer.status !== 'COMPLETED') return intent;
  const done = await core.apply(intent, 'completed', { nextCheckAt: null }, 'transfer COMPLETED');
  return done ?? ((await core.ledger.get(intent.id)) as Intent);
}
