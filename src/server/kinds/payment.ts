/**
 * A payment straight to a player's Lightning address, a payout like a reward. The address is
 * checked first: one that cannot be paid, or is failing, is refused before anything is recorded.
 * The send has no idempotency key, so it is sent once: a lost answer leaves it `unknown` until a
 * proven callback or an operator ends it (its money may have left with no code to show for it).
 */
import { LnAddressRefusedError } from '../../errors.js';
import type { Intent } from '../../ledger/intent.js';
import { accounts } from '../../ledger/journal.js';
import type { AddressPayment, PaymentsPort } from '../../port/port.js';
import type { Engine } from '../engine.js';
import {
  msatFields,
  type OnBehalf,
  recordThenSend,
  refuseBlocked,
  sendRecorded,
  settleAsAnswered,
} from '../operations/create.js';
import type { ParsedAddressPayment } from '../operations/inputs.js';
import type { Ticket } from '../outbound.js';
import { newCallbackToken } from '../tokens.js';
import { isPayment } from './guards.js';
import { type KindRules, notProvenBy, type Observation, recorded } from './kind.js';
import { mayReissue, payoutPosition } from './payout-position.js';

/** What a payment's state makes its intent; null: on its way. */
const PAYMENT_ENDS = { sent: null, paid: 'completed', failed: 'failed' } as const;

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
    return { patch: { remoteId }, note: sent.said, to: PAYMENT_ENDS[sent.state] };
  },
};

/** Starts a payment from arguments parsed where the call entered (`addressPaymentInput`). */
export async function startAddressPayment(
  engine: Engine,
  args: ParsedAddressPayment,
  behalf: OnBehalf = {},
): Promise<Intent> {
  // A match's payout or refund is the pot's debt, paid to a blocked player too, and uncapped.
  if (behalf.guards === undefined) await refuseBlocked(engine, args.playerId);
  engine.capPayout(args.amountMsat, behalf.guards === undefined);
  engine.breaker.refuseIfPaused();
  await checkAddress(engine, args.lnAddress);
  await engine.breaker.admit(BigInt(args.amountMsat));
  const token = newCallbackToken();
  const answered: Answered = { state: null, said: '' };
  const sent = await recordThenSend(
    engine,
    {
      ...msatFields(args, behalf),
      kind: 'payment',
      description: args.comment ?? `payment to ${args.lnAddress}`,
      callbackToken: token,
      meta: {
        ...behalf.meta,
        lnAddress: args.lnAddress,
        ...(args.comment === undefined ? {} : { comment: args.comment }),
      },
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
  const answer = paymentAnswer(engine, answered);
  const sent = await sendRecorded(engine, intent, paymentCall(engine), answer, ticket);
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
  const to = answered.state === null ? null : PAYMENT_ENDS[answered.state];
  if (sent.status !== 'pending' || to === null) return sent;
  return settleAsAnswered(engine, sent, to, answered.said);
}

/**
 * Resolves when `lnAddress` may be paid (not failing, and the service says so in one attempt);
 * else LnAddressRefusedError. A refusal not about the address (a bad key, a 429) is thrown as is.
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
