/**
 * Spending a player's points: a deplete whose UUID idempotency key is stored in the intent
 * before the first attempt, so every retry (the client's, the reconciler's after a restart)
 * carries the same key and the service debits once.
 */
import { randomUUID } from 'node:crypto';
import { parseInput } from '../../api/inputs.js';
import { IntentLostError } from '../../ledger/errors.js';
import type { Intent } from '../../ledger/intent.js';
import type { Engine } from '../engine.js';
import { recordThenSend } from './create.js';
import { type SpendInput, spendInput } from './inputs.js';

/** After a lost answer, the reconciler re-sends the same deplete this soon. */
const RESEND_AFTER_MS = 2_000;

export async function startSpend(engine: Engine, input: SpendInput): Promise<Intent> {
  const args = parseInput(spendInput, input);
  const key = randomUUID();
  let transferStatus = '';
  const pending = await recordThenSend(
    engine,
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
    () =>
      engine.api.widgetUsers.deplete({
        user_id: args.userId,
        amount: args.amount,
        currency: args.currency,
        idempotency_key: key,
      }),
    (transfer) => {
      transferStatus = transfer.status;
      return {
        patch: { remoteId: transfer.transfer_id, nextCheckAt: engine.now() + RESEND_AFTER_MS },
        note: `transfer ${transfer.status}`,
      };
    },
    // The same key makes a re-send safe: the reconciler sends it again after a lost answer.
    { retryAfterAmbiguousMs: RESEND_AFTER_MS },
  );
  if (pending.status !== 'pending' || transferStatus !== 'COMPLETED') return pending;
  const done = await engine.apply(
    pending,
    'completed',
    { nextCheckAt: null },
    'transfer COMPLETED',
  );
  if (done) return done;
  const won = await engine.ledger.get(pending.id);
  if (won === null) throw new IntentLostError(pending.id, pending.remoteId);
  return won;
}
