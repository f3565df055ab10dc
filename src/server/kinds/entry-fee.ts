/**
 * The entry-fee kind: a pay code for exactly the fee. A pay code has no expiry of its own, so
 * the deadline is ours: past it the code is closed and read once more before the fee expires.
 * Money paid after the deadline is still money in (the journal's `late` step), to give back.
 */
import { createHash } from 'node:crypto';
import { type Intent, isTerminal } from '../../ledger/intent.js';
import { accounts, type Position } from '../../ledger/journal.js';
import type { PaymentsPort } from '../../port/port.js';
import type { Engine } from '../engine.js';
import { msatFields, type OnBehalf, recordThenSend, refuseBlocked } from '../operations/create.js';
import type { ParsedEntryFee } from '../operations/inputs.js';
import { newCallbackToken } from '../tokens.js';
import { type KindHost, type KindRules, notProvenBy, type Observation } from './kind.js';

export const entryFee: KindRules = {
  kind: 'entryFee',
  reads: 'resource',
  lostAnswer: 'deadline',
  showsCode: true,
  room: 'entryFees',
  movesMoney: true,
  counts: 'moneyIn',
  position(intent) {
    const paidTo = intent.groupId !== null ? accounts.escrow(intent.groupId) : accounts.fees;
    const at = (account: string, why: string, tag?: string): Position => ({
      account,
      source: accounts.wallet,
      amount: intent.amount,
      unit: intent.unit,
      why,
      ...(tag === undefined ? {} : { tag }),
    });
    if (intent.status === 'completed') return at(paidTo, 'paid');
    if (intent.status === 'expired' && intent.meta.latePaymentReported === true) {
      return at(paidTo, 'paid after its deadline', 'late');
    }
    return at(accounts.wallet, isTerminal(intent.status) ? intent.status : 'not paid yet');
  },
  // A fee paid into an open match makes it due: its check counts the roster, in any process.
  groupDue: { on: ['completed'], while: 'creating' },
  // A fee is the player's money coming in: never issued again by us.
  mayReissue: () => false,
  async observe(port: PaymentsPort, intent, remoteId, now, proof): Promise<Observation | null> {
    const charge = await port.readPayCode(remoteId);
    if (notProvenBy(proof, charge.callbackUrl)) return null;
    const baseline = Number(intent.meta.slotsBaseline ?? 0);
    const patch = { remoteId, code: charge.code, uri: charge.uri };
    const paid = (payments: number): Observation => ({
      to: 'completed',
      patch,
      note: `paid (${payments} payments)`,
    });
    if (charge.payments > baseline) return paid(charge.payments);
    if (charge.closed) return { to: 'expired', patch, note: charge.said };
    if (intent.expiresAt !== null && now >= intent.expiresAt) {
      // Our deadline passed: the closed code's count shows a payment just before, none after.
      const closed = await port.closePayCode(charge, now);
      if (closed.payments > baseline) return paid(closed.payments);
      return { to: 'expired', patch, note: 'fee deadline passed; code closed' };
    }
    return { to: null, patch, note: `${charge.said}, ${charge.payments} payments` };
  },
  afterEnd: detectLatePayment,
};

/** An expired fee whose code was paid anyway (proven ours): marked once, for the engine to tell. */
async function detectLatePayment(
  host: KindHost,
  intent: Intent,
  hint?: string,
): Promise<Intent | null> {
  const remoteId = intent.remoteId ?? hint;
  if (intent.status !== 'expired' || remoteId === undefined) return null;
  if (intent.meta.latePaymentReported === true) return null;
  try {
    const charge = await host.port.readPayCode(remoteId);
    if (intent.remoteId === null) {
      const proof = intent.callbackToken === null ? '' : host.callbackUrl(intent.callbackToken);
      if (notProvenBy(proof, charge.callbackUrl)) return null;
    }
    const baseline = Number(intent.meta.slotsBaseline ?? 0);
    if (charge.payments <= baseline) return null;
    const marked = await host.update(intent, {
      ...(intent.remoteId === null ? { remoteId } : {}),
      meta: { ...intent.meta, latePaymentReported: true },
    });
    if (!marked) return null;
    const refund = intent.groupId === null ? 'refund it' : 'its match refunds it';
    host.logger.warn(`entry fee ${intent.id} was paid after it expired: ${refund}`);
    return marked;
  } catch (err) {
    host.logger.warn(`late-payment check of ${intent.id} failed: ${(err as Error).message}`);
    return null;
  }
}

/** Starts an entry fee from arguments parsed where the call entered (`entryFeeInput`). */
export async function startEntryFee(
  engine: Engine,
  args: ParsedEntryFee,
  behalf: OnBehalf = {},
): Promise<Intent> {
  // A match's `enter` checked it already, before reading the match.
  if (behalf.groupId === undefined) await refuseBlocked(engine, args.playerId);
  const token = newCallbackToken();
  return recordThenSend(
    engine,
    {
      ...msatFields(args, behalf),
      kind: 'entryFee',
      description: args.description,
      callbackToken: token,
      expiresAt: engine.now() + args.expiresIn * 1000,
      openKey: openKeyOf(args.roomId, args.playerId, args.key),
      meta: { ...behalf.meta, slotsBaseline: 0 },
    },
    () =>
      engine.port.makePayCode({
        amountMsat: args.amountMsat,
        description: args.description,
        playerId: args.playerId,
        callbackUrl: engine.callbackUrl(token),
        successMessage: args.successMessage,
      }),
    (created, intent) => ({
      patch: {
        remoteId: created.id,
        code: created.code,
        uri: created.uri ?? `lightning:${created.code}`,
        meta: { ...intent.meta, slotsBaseline: created.payments },
        nextCheckAt: engine.nextCheckAt(intent),
      },
      note: created.said,
    }),
    behalf.guards === undefined ? {} : { guards: behalf.guards },
  );
}

/** One open fee per player per room (and per key, when the game names one). */
function openKeyOf(roomId: string | null, playerId: string, key: string | undefined): string {
  const seat = JSON.stringify(['entryFee', roomId, playerId, key ?? null]);
  return `fee:${createHash('sha256').update(seat).digest('base64url')}`;
}
