/**
 * The spend kind: a player's points debited by a keyed call whose key is recorded before the
 * first attempt, so every retry debits once; a re-read sends the same call again. Points are
 * journaled in their own currency, never mixed with msats.
 */
import { randomUUID } from 'node:crypto';
import { type Intent, isTerminal } from '../../ledger/intent.js';
import { accounts, type Position } from '../../ledger/journal.js';
import type { PaymentsPort } from '../../port/port.js';
import type { Engine } from '../engine.js';
import { recordThenSend, refuseBlocked, settleAsAnswered } from '../operations/create.js';
import type { ParsedSpend } from '../operations/inputs.js';
import type { KindRules, Observation } from './kind.js';

/** After a lost answer, the reconciler re-sends the same deplete this soon. */
const RESEND_AFTER_MS = 2_000;

export const spend: KindRules = {
  kind: 'spend',
  reads: 'key',
  lostAnswer: 'resend',
  showsCode: false,
  room: 'pointSpends',
  movesMoney: true,
  counts: 'points',
  mayReissue: () => false,
  position(intent) {
    const source = accounts.points(intent.playerId);
    const at = (account: string, why: string): Position => ({
      account,
      source,
      amount: intent.amount,
      unit: intent.unit,
      why,
    });
    if (intent.status === 'completed') return at(accounts.housePoints, 'spent');
    if (!isTerminal(intent.status)) return at(accounts.inflight, intent.status);
    return at(source, intent.status);
  },
  observe: resendSpend,
};

/** A spend whose answer was lost: the same key makes the provider apply it at most once. */
async function resendSpend(port: PaymentsPort, intent: Intent): Promise<Observation> {
  const userId = intent.meta.userId;
  if (typeof userId !== 'string' || intent.idempotencyKey === null) {
    return { to: 'failed', patch: { error: 'spend intent without user or key' }, note: 'invalid' };
  }
  try {
    const spent = await port.spendPoints({
      userId,
      amount: Number(intent.amount),
      currency: intent.unit,
      key: intent.idempotencyKey,
    });
    return { to: spent.done ? 'completed' : null, patch: { remoteId: spent.id }, note: spent.said };
  } catch (err) {
    if (port.failureOf(err).meaning === 'insufficientPoints') {
      return { to: 'failed', patch: { error: 'insufficient point balance' }, note: 'TX3017' };
    }
    throw err;
  }
}

/** Starts a spend from arguments parsed where the call entered (`spendInput`). */
export async function startSpend(engine: Engine, args: ParsedSpend): Promise<Intent> {
  await refuseBlocked(engine, args.playerId);
  const key = randomUUID();
  let done = false;
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
      engine.port.spendPoints({
        userId: args.userId,
        amount: args.amount,
        currency: args.currency,
        key,
      }),
    (spent) => {
      done = spent.done;
      return {
        patch: { remoteId: spent.id, nextCheckAt: engine.now() + RESEND_AFTER_MS },
        note: spent.said,
      };
    },
    // The same key makes a re-send after a lost answer safe.
    { retryAfterAmbiguousMs: RESEND_AFTER_MS },
  );
  if (pending.status !== 'pending' || !done) return pending;
  return settleAsAnswered(engine, pending, 'completed', 'transfer COMPLETED');
}
