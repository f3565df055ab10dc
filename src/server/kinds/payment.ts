/**
 * A payment straight to a player's Lightning address (the port's `payAddress`), recorded in
 * the ledger before the provider is called, with a callback URL that carries the intent's
 * secret token. It counts against the payout budgets and the breaker like a reward. The
 * address is checked first (`checkAddress`, one short attempt): one the provider cannot pay,
 * or whose check does not answer, or to which payments just failed, is refused with
 * LnAddressRefusedError before anything is recorded or sent.
 *
 * The send has no idempotency key, so it is sent once and never again: an answer that may hide
 * a success leaves the intent `unknown` (outcome.ts). Unlike a reward's, the money of a lost
 * payment may have left without any code to show for it, so nothing expires it by itself: a
 * callback proven by its callback URL settles it, or an operator does (`lightning.operator.resolve`).
 *
 *   a re-read: paid -> completed, failed -> failed, sent -> still open
 */
import { LnAddressRefusedError } from '../../errors.js';
import { IntentLostError } from '../../ledger/errors.js';
import type { Intent } from '../../ledger/intent.js';
import { accounts } from '../../ledger/journal.js';
import type { AddressPayment, PaymentsPort } from '../../port/port.js';
import { refuseBlocked } from '../blocked.js';
import type { Engine } from '../engine.js';
import { type OnBehalf, recordThenSend, sendRecorded } from '../operations/create.js';
import type { ParsedAddressPayment } from '../operations/inputs.js';
import type { Ticket } from '../outbound.js';
import { newCallbackToken } from '../tokens.js';
import { isPayment } from './guards.js';
import { type KindRules, notProvenBy, type Observation, recorded } from './kind.js';
import { mayReissue, payoutPosition } from './payout-position.js';

export const payment: KindRules = {
  kind: 'payment',
  reads: 'resource',
  lostAnswer: 'proof',
  showsCode: false,
  room: 'payments',
  movesMoney: true,
  counts: 'moneyOut',
  mayReissue,
  position: (intent) =>
    payoutPosition(intent, { account: accounts.inflight, why: 'payment sent' }, 'paid'),
  address: (intent) => (isPayment(intent) ? (intent.meta.lnAddress ?? null) : null),
  async observe(port: PaymentsPort, _intent, remoteId, _now, proof): Promise<Observation | null> {
    const sent = await port.readAddressPayment(remoteId);
    if (notProvenBy(proof, sent.callbackUrl)) return null;
    const seen = { patch: { remoteId }, note: sent.said };
    if (sent.state === 'paid') return { ...seen, to: 'completed' };
    if (sent.state === 'failed') return { ...seen, to: 'failed' };
    return { ...seen, to: null };
  },
};

/** Starts a payment from arguments parsed where the call entered (`addressPaymentInput`). */
export async function startAddressPayment(
  engine: Engine,
  args: ParsedAddressPayment,
  behalf: OnBehalf = {},
): Promise<Intent> {
  // A blocked player gets nothing new from the game; a match's payout or refund is the pot's
  // debt to them, paid whoever they are.
  if (behalf.guards === undefined) await refuseBlocked(engine, args.playerId);
  // A payout of a match's pot was paid in by its players: budgets guard the game's own money.
  engine.capPayout(args.amountMsat, behalf.guards === undefined);
  engine.breaker.refuseIfPaused();
  await checkAddress(engine, args.lnAddress);
  await engine.breaker.admit(BigInt(args.amountMsat));
  const token = newCallbackToken();
  const answered: Answered = { state: null, said: '' };
  const sent = await recordThenSend(
    engine,
    {
      kind: 'payment',
      roomId: args.roomId,
      playerId: args.playerId,
      amount: args.amountMsat,
      unit: 'msats',
      description: args.comment ?? `payment to ${args.lnAddress}`,
      callbackToken: token,
      meta: {
        ...behalf.meta,
        lnAddress: args.lnAddress,
        ...(args.comment === undefined ? {} : { comment: args.comment }),
      },
      ...(behalf.id === undefined ? {} : { id: behalf.id }),
      ...(behalf.groupId === undefined ? {} : { groupId: behalf.groupId }),
    },
    paymentCall(engine),
    paymentAnswer(engine, answered),
    behalf.guards === undefined ? {} : { guards: behalf.guards },
  );
  return endAsAnswered(engine, sent, answered);
}

/** The provider's own answer to a payment's send, once it came. */
interface Answered {
  state: AddressPayment['state'] | null;
  said: string;
}

/** Sends a payment an operator approved (now `creating`): the second half of its start. */
export async function sendApprovedPayment(
  engine: Engine,
  intent: Intent,
  ticket: Ticket | null,
): Promise<Intent> {
  const answered: Answered = { state: null, said: '' };
  const sent = await sendRecorded(
    engine,
    intent,
    paymentCall(engine),
    paymentAnswer(engine, answered),
    {},
    ticket,
  );
  return endAsAnswered(engine, sent, answered);
}

/** The send of a payment, as its record says (the address and comment are in its meta). */
function paymentCall(engine: Engine) {
  return (intent: Intent) => {
    const meta = isPayment(intent) ? intent.meta : {};
    return engine.port.payAddress({
      lnAddress: recorded(intent, 'address', meta.lnAddress),
      amountMsat: intent.amount,
      playerId: intent.playerId,
      callbackUrl: engine.callbackUrl(recorded(intent, 'callback token', intent.callbackToken)),
      ...(meta.comment === undefined ? {} : { comment: meta.comment }),
    });
  };
}

/** What the provider's answer to a payment writes; its state is kept in `answered`. */
function paymentAnswer(engine: Engine, answered: Answered) {
  return (payment: AddressPayment, intent: Intent) => {
    answered.state = payment.state;
    answered.said = payment.said;
    return {
      patch: { remoteId: payment.id, nextCheckAt: engine.nextCheckAt(intent) },
      note: payment.said,
    };
  };
}

/** The provider's own answer (not a callback's body) may already be the outcome. */
async function endAsAnswered(engine: Engine, sent: Intent, answered: Answered): Promise<Intent> {
  const to =
    answered.state === 'paid' ? 'completed' : answered.state === 'failed' ? 'failed' : null;
  if (sent.status !== 'pending' || to === null) return sent;
  const done = await engine.apply(sent, to, { nextCheckAt: null }, answered.said);
  if (done) return done;
  const won = await engine.ledger.get(sent.id);
  if (won === null) throw new IntentLostError(sent.id, sent.remoteId);
  return won;
}

/**
 * Resolves when `lnAddress` may be paid: payments to it did not just fail (the breaker holds
 * it), and the service says it can pay it, within `breaker.validateTimeoutMs` and one attempt.
 * Otherwise rejects with LnAddressRefusedError, nothing recorded or sent. A refusal of the
 * call itself that is not about the address (a bad key, a 429) is thrown as it is.
 */
async function checkAddress(engine: Engine, lnAddress: string): Promise<void> {
  if (engine.breaker.addressFailing(lnAddress)) {
    throw new LnAddressRefusedError(lnAddress, 'failing');
  }
  let valid: boolean;
  try {
    valid = await engine.port.checkAddress(lnAddress, engine.settings.breaker.validateTimeoutMs);
  } catch (err) {
    const { meaning } = engine.port.failureOf(err);
    if (meaning === 'refused') throw new LnAddressRefusedError(lnAddress, 'invalid', err);
    if (meaning === 'denied' || meaning === 'rateLimited') throw err;
    engine.breaker.addressUnchecked(lnAddress, err);
    throw new LnAddressRefusedError(lnAddress, 'unverified', err);
  }
  if (!valid) throw new LnAddressRefusedError(lnAddress, 'invalid');
}
