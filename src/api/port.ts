/**
 * The payments port (port/port.ts) for this service: each of the game's words is one call of
 * the send steps (calls.ts), its answer, already validated there, mapped to the port's
 * types here, and its errors told apart by `failureOf`. A claim code is a withdrawal request,
 * a pay code a single-use static charge (min = max, one slot), a spend a keyed deplete.
 */
import type {
  AddressPayment,
  ClaimCode,
  ClaimState,
  FailureMeaning,
  PayCode,
  PaymentState,
  PaymentsPort,
} from '../port/port.js';
import type { Payment, StaticCharge, WithdrawalRequest } from './answers.js';
import type { ServiceCalls } from './calls.js';
import {
  AmbiguousResultError,
  AuthenticationError,
  ConnectionError,
  InsufficientPointsError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServiceError,
  TimeoutError,
  UnexpectedResponseError,
} from './errors.js';

/** Statuses of a static charge that accept no more payments. */
const CLOSED_CHARGE = new Set(['inactive', 'disabled', 'expired']);

const CLAIM_STATES: Readonly<Record<string, ClaimState>> = {
  completed: 'claimed',
  expired: 'expired',
  error: 'failed',
};
const PAYMENT_STATES: Readonly<Record<string, PaymentState>> = {
  completed: 'paid',
  failed: 'failed',
};

/** Each error class's meaning, the most specific first (InsufficientPoints is an InvalidRequest). */
const MEANINGS: readonly [abstract new (...args: never[]) => Error, FailureMeaning][] = [
  [AmbiguousResultError, 'ambiguous'],
  [UnexpectedResponseError, 'garbled'],
  [InsufficientPointsError, 'insufficientPoints'],
  [InvalidRequestError, 'refused'],
  [NotFoundError, 'refused'],
  [AuthenticationError, 'denied'],
  [PermissionError, 'denied'],
  [RateLimitError, 'rateLimited'],
  [TimeoutError, 'unanswered'],
  [ServiceError, 'unanswered'],
  [ConnectionError, 'unreached'],
];

function claimCode(request: WithdrawalRequest): ClaimCode {
  // The invoice's own expiry wins over the request's when the service says one.
  const said = Date.parse(request.invoice.expiresAt ?? request.expiresAt ?? '');
  return {
    id: request.id,
    code: request.invoice.request,
    uri: request.invoice.uri ?? null,
    expiresAt: Number.isNaN(said) ? null : said,
    callbackUrl: request.callbackUrl ?? null,
    state: CLAIM_STATES[request.status] ?? 'open',
    said: `withdrawal request ${request.status}`,
  };
}

function payCode(charge: StaticCharge): PayCode {
  return {
    id: charge.id,
    code: charge.invoice.request,
    uri: charge.invoice.uri ?? null,
    callbackUrl: charge.callbackUrl ?? null,
    payments: charge.slots,
    closed: CLOSED_CHARGE.has(charge.status),
    madeAt: charge.createdAt ?? null,
    said: `static charge ${charge.status}`,
  };
}

function addressPayment(payment: Payment): AddressPayment {
  return {
    id: payment.id,
    callbackUrl: payment.callbackUrl ?? null,
    state: PAYMENT_STATES[payment.status] ?? 'sent',
    said: `payment ${payment.status}`,
  };
}

export class ServicePort implements PaymentsPort {
  readonly #calls: ServiceCalls;

  constructor(calls: ServiceCalls) {
    this.#calls = calls;
  }

  makeClaimCode: PaymentsPort['makeClaimCode'] = async (order) => {
    const body = {
      amount: order.amountMsat,
      description: order.description,
      internalId: order.playerId,
      callbackUrl: order.callbackUrl,
      expiresIn: order.expiresIn,
    };
    return claimCode(await this.#calls.send('withdrawalRequests.create', { body }));
  };

  readClaimCode: PaymentsPort['readClaimCode'] = async (id) =>
    claimCode(await this.#calls.send('withdrawalRequests.get', { id }));

  makePayCode: PaymentsPort['makePayCode'] = async (order) => {
    const body = {
      minAmount: order.amountMsat,
      maxAmount: order.amountMsat,
      description: order.description,
      allowedSlots: 1,
      internalId: order.playerId,
      callbackUrl: order.callbackUrl,
      successMessage: order.successMessage,
    };
    return payCode(await this.#calls.send('staticCharges.create', { body }));
  };

  readPayCode: PaymentsPort['readPayCode'] = async (id) =>
    payCode(await this.#calls.send('staticCharges.get', { id }));

  closePayCode: PaymentsPort['closePayCode'] = async (code, now) => {
    // A static charge has no close: its expiry is set to its own creation time, in the past
    // on the service's clock whatever the skew between our clocks.
    const body = { expiresAt: code.madeAt ?? new Date(now - 60_000).toISOString() };
    return payCode(await this.#calls.send('staticCharges.update', { id: code.id, body }));
  };

  payAddress: PaymentsPort['payAddress'] = async (order) => {
    const body = {
      lnAddress: order.lnAddress,
      amount: order.amountMsat,
      internalId: order.playerId,
      callbackUrl: order.callbackUrl,
      comment: order.comment,
    };
    return addressPayment(await this.#calls.send('lnAddress.sendPayment', { body }));
  };

  readAddressPayment: PaymentsPort['readAddressPayment'] = async (id) =>
    addressPayment(await this.#calls.send('payments.get', { id }));

  checkAddress: PaymentsPort['checkAddress'] = async (lnAddress, timeoutMs) => {
    const limits = { timeoutMs, maxRetries: 0 };
    return (await this.#calls.send('lnAddress.validate', { id: lnAddress, limits })).valid;
  };

  spendPoints: PaymentsPort['spendPoints'] = async (order) => {
    const body = {
      user_id: order.userId,
      amount: order.amount,
      currency: order.currency,
      idempotency_key: order.key,
    };
    const transfer = await this.#calls.send('widgetUsers.deplete', { body });
    const { transfer_id: id, status } = transfer;
    return { id, done: status === 'COMPLETED', said: `transfer ${status}` };
  };

  readWallet: PaymentsPort['readWallet'] = async () => {
    const wallet = await this.#calls.send('wallet.get', {});
    // The service states the balance in satoshis.
    return BigInt(Math.floor(Number(wallet.balance) * 1000));
  };

  callbackSources: PaymentsPort['callbackSources'] = async () =>
    (await this.#calls.send('utility.prodIps', {})).ips;

  regionOf: PaymentsPort['regionOf'] = (ip) =>
    this.#calls.send('utility.isSupportedRegion', { id: ip });

  btcUsd: PaymentsPort['btcUsd'] = () => this.#calls.send('utility.btcUsd', {});

  makeWidgetUser: PaymentsPort['makeWidgetUser'] = (order) => {
    // The service answers the user it has for this reference_id: a second create is the first.
    const body = { reference_id: order.playerId, email: order.email };
    return this.#calls.send('widgetUsers.create', { body });
  };

  openWidget: PaymentsPort['openWidget'] = async (order) => {
    const body = {
      email: order.email,
      reference_id: order.playerId,
      webhook_url: order.webhookUrl,
      metadata: order.metadata,
    };
    const session = await this.#calls.send('widgetSessions.create', { body });
    return { url: session.widget_url, expiresAt: session.expires_at, token: session.session_token };
  };

  openPurchase: PaymentsPort['openPurchase'] = async (order) => {
    const body = {
      email: order.email,
      webhook_url: order.webhookUrl,
      reference_id: order.playerId,
      metadata: order.metadata,
      destination: order.destination || undefined,
      quote_currency: order.quoteCurrency || undefined,
      base_currency: order.baseCurrency || undefined,
    };
    const session = await this.#calls.send('ramp.createSession', { body });
    const { session_token: token, expires_at, widget_url } = session;
    return { token, expiresAt: expires_at ?? null, url: widget_url ?? null };
  };

  acceptDisclosures: PaymentsPort['acceptDisclosures'] = (userId, typeIds) => {
    const body = { acceptedDisclosureTypeIds: typeIds };
    return this.#calls.send('widgetUsers.acceptDisclosures', { userId, body });
  };

  updateEmail: PaymentsPort['updateEmail'] = (userId, email) =>
    this.#calls.send('widgetUsers.update', { userId, body: { email } });

  failureOf: PaymentsPort['failureOf'] = (err) => {
    const status = (err as { status?: unknown } | null)?.status;
    const found = MEANINGS.find(([klass]) => err instanceof klass);
    return {
      meaning: found?.[1] ?? 'other',
      serverError: typeof status === 'number' && status >= 500,
      slowDown: status === 429 || err instanceof RateLimitError,
    };
  };
}
