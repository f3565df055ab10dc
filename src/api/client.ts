/**
 * `PaymentsApi`: the typed client for the whole payments service, one namespace per resource.
 *
 *   const api = new PaymentsApi({ apiKey: process.env.LIGHTNING_API_KEY });
 *   const request = await api.withdrawalRequests.create({ amount: 50_000n, description: 'Prize' });
 *   showQr(request.invoice.request);
 *
 * Every call validates its arguments before sending (InvalidArgumentError), validates the
 * answer (UnexpectedResponseError), and retries only what is safe to retry (retry-policy.ts).
 * Every method is `async`: a bad argument is a rejected promise, never a synchronous throw.
 */
import { isIP } from 'node:net';
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { type Clock, systemClock } from '../clock.js';
import { parseInput } from '../parse.js';
import type { OutboundGate } from '../port/gate.js';
import { type DepleteResult, type SendArgs, ServiceCalls } from './calls.js';
import {
  type CallLimits,
  callLimits,
  type DepleteInput,
  depleteInput,
  disclosureTypeIds,
  type LnAddressPaymentInput,
  lnAddress,
  lnAddressPaymentInput,
  type PaymentInput,
  paymentInput,
  type RampSessionInput,
  rampSessionInput,
  type StaticChargeInput,
  type StaticChargeUpdateInput,
  staticChargeInput,
  staticChargeUpdateInput,
  updateEmailInput,
  type WidgetSessionInput,
  type WidgetUserInput,
  type WithdrawalRequestInput,
  widgetSessionInput,
  widgetUserInput,
  withdrawalRequestInput,
} from './inputs.js';
import {
  DEFAULT_BASE_URL,
  DEFAULT_PATHS,
  type OperationName,
  type PathName,
} from './operations.js';
import { type BackoffOptions, DEFAULT_BACKOFF } from './retry-policy.js';
import { Transport } from './transport.js';

const ipInput = z.string().refine((ip) => isIP(ip) !== 0, 'must be an IPv4 or IPv6 address');
const limit = z.number().int().positive().max(600_000);
const delay = z.number().int().min(0).optional();
const TIMEOUT_MS = 10_000;
const CONNECT_TIMEOUT_MS = 5_000;
const MAX_RETRIES = 2;
const shown = (n: number) => `\`${n}\``;

/**
 * The client's tuning (timeouts, retries, path overrides): what a game may set here and, the
 * same schema, under `createLightning`'s `api` option.
 */
export const apiTuningSchema = z.strictObject({
  timeoutMs: limit.optional().meta({
    description: "longest wait for the answer's headers, and then between body chunks",
    defaultText: shown(TIMEOUT_MS),
  }),
  connectTimeoutMs: limit.optional().meta({
    description: 'longest wait for a connection',
    defaultText: `the smaller of \`timeoutMs\` and ${shown(CONNECT_TIMEOUT_MS)}`,
  }),
  maxRetries: z
    .number()
    .int()
    .min(0)
    .max(10)
    .optional()
    .meta({
      description: 'retries after the first attempt, where the retry policy allows them',
      defaultText: shown(MAX_RETRIES),
    }),
  retry: z
    .strictObject({
      baseDelayMs: delay.meta({
        description: 'backoff between retries: full jitter from this, doubled each retry',
        defaultText: shown(DEFAULT_BACKOFF.baseDelayMs),
      }),
      maxDelayMs: delay.meta({
        description: 'the longest backoff',
        defaultText: shown(DEFAULT_BACKOFF.maxDelayMs),
      }),
      maxRetryAfterMs: delay.meta({
        description: 'the longest `Retry-After` waited; a longer one is not retried',
        defaultText: shown(DEFAULT_BACKOFF.maxRetryAfterMs),
      }),
    })
    .optional()
    .meta({ description: 'backoff between retries', defaultText: 'each below' }),
  paths: z
    .partialRecord(
      z.enum(Object.keys(DEFAULT_PATHS) as [PathName, ...PathName[]]),
      z.string().startsWith('/', 'must start with "/"'),
    )
    .optional()
    .meta({
      description: 'replace any path of the table in `src/api/operations.ts`, by its name',
      defaultText: "the service's paths",
    }),
});

const optionsSchema = apiTuningSchema.extend({
  /** The project's API key, sent as the `apikey` header. Server-side only. */
  apiKey: z
    .string({ error: 'is required' })
    .min(1, 'is required')
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
  /**
   * Other secrets to cut out of every error, should the service or a proxy echo them back
   * (the key always is). `createLightning` passes the webhook secret.
   */
  redact: z.array(z.string()).optional(),
  /** Default `https://api.zbdpay.com`. May carry a path prefix. */
  baseUrl: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .default(DEFAULT_BASE_URL),
  /** Your own undici dispatcher (Agent, Pool, MockAgent); the client then does not close it. */
  dispatcher: z
    .custom<Dispatcher>((value) => typeof value === 'object' && value !== null)
    .optional(),
  /**
   * The clock the waits between retries run on, and `Retry-After` dates are read against.
   * Default the system clock; a `ManualClock` lets a test move time instead of waiting. The
   * per-attempt `timeoutMs` stays on real time: it bounds a real socket.
   */
  clock: z
    .custom<Clock>(
      (value) => typeof (value as { now?: unknown } | null)?.now === 'function',
      'must be a Clock (an object with now())',
    )
    .default(systemClock),
});

export type PaymentsApiOptions = z.input<typeof optionsSchema>;

/** Readers of a client's private send step and transport, for `paymentsService` alone. */
let callsOf: (api: PaymentsApi) => ServiceCalls;
let transportOf: (api: PaymentsApi) => Transport;

export class PaymentsApi {
  /** The project's wallet. */
  readonly wallet = {
    /** The wallet; `balance` is in satoshis. Also the cheapest way to test a key. */
    get: () => this.#send('wallet.get', {}),
  };
  /** Outgoing payments; `send` is never re-sent once it may have reached the service. */
  readonly payments = {
    send: async (input: PaymentInput) =>
      this.#send('payments.send', { body: parseInput(paymentInput, input) }),
    get: (id: string) => this.#send('payments.get', { id }),
  };
  /** Payments to Lightning addresses (`name@domain`), and their validation. */
  readonly lnAddress = {
    /** Pays `amount` msats to `lnAddress`. Answers the payment, usually `processing`. */
    sendPayment: async (input: LnAddressPaymentInput) =>
      this.#send('lnAddress.sendPayment', { body: parseInput(lnAddressPaymentInput, input) }),
    /**
     * Whether the service can pay `address`. It asks the address's own server, which may hang:
     * `limits` bounds this call (`{ timeoutMs: 3_000, maxRetries: 0 }`) alone.
     */
    validate: async (address: string, limits?: CallLimits) =>
      this.#send('lnAddress.validate', {
        id: parseInput(lnAddress, address, 'address'),
        limits: parseInput(callLimits, limits, 'limits'),
      }),
  };
  /** Codes a player claims with a wallet; `invoice.request` is a bearer secret. */
  readonly withdrawalRequests = {
    /** Creates a request in status `pending`. Never re-sent once it may have been processed. */
    create: async (input: WithdrawalRequestInput) =>
      this.#send('withdrawalRequests.create', { body: parseInput(withdrawalRequestInput, input) }),
    get: (id: string) => this.#send('withdrawalRequests.get', { id }),
  };
  /** Reusable LNURL-pay codes with an amount range and an optional slot cap. */
  readonly staticCharges = {
    create: async (input: StaticChargeInput) =>
      this.#send('staticCharges.create', { body: parseInput(staticChargeInput, input) }),
    get: (id: string) => this.#send('staticCharges.get', { id }),
    /** Changes the given fields; the code (QR) stays the same. */
    update: async (id: string, input: StaticChargeUpdateInput) =>
      this.#send('staticCharges.update', { id, body: parseInput(staticChargeUpdateInput, input) }),
  };
  readonly widgetUsers = {
    /** Creates the user, or returns the existing one with this reference_id/email. */
    create: async (input: WidgetUserInput) =>
      this.#send('widgetUsers.create', { body: parseInput(widgetUserInput, input) }),
    /**
     * Debits points, retried always with the same `idempotency_key`, so the service applies it
     * once. Throws InsufficientPointsError (TX3017) when the balance is short.
     */
    deplete: async (input: DepleteInput): Promise<DepleteResult> => {
      const body = parseInput(depleteInput, input);
      const transfer = await this.#send('widgetUsers.deplete', { body });
      return { ...transfer, idempotencyKey: body.idempotency_key };
    },
    /** Changes the user's email (the only updatable field). */
    update: async (userId: string, input: { email: string }) =>
      this.#send('widgetUsers.update', { userId, body: parseInput(updateEmailInput, input) }),
    /** Records acceptance of each disclosure type (2 terms, 3 privacy, 6 EFT), server-side. */
    acceptDisclosures: async (userId: string, typeIds: readonly number[]) =>
      this.#send('widgetUsers.acceptDisclosures', {
        userId,
        body: { acceptedDisclosureTypeIds: parseInput(disclosureTypeIds, typeIds, 'typeIds') },
      }),
  };
  readonly widgetSessions = {
    /** A session token and the widget URL to embed; valid until `expires_at`. */
    create: async (input: WidgetSessionInput) =>
      this.#send('widgetSessions.create', { body: parseInput(widgetSessionInput, input) }),
  };
  readonly ramp = {
    /** A purchase session (15 minutes); results arrive as webhooks at `webhook_url`. */
    createSession: async (input: RampSessionInput) =>
      this.#send('ramp.createSession', { body: parseInput(rampSessionInput, input) }),
  };
  readonly utility = {
    /** The addresses the service sends callbacks from. */
    prodIps: () => this.#send('utility.prodIps', {}),
    /** Whether the service serves the region of `ip` (a player's address). */
    isSupportedRegion: async (ip: string) =>
      this.#send('utility.isSupportedRegion', { id: parseInput(ipInput, ip, 'ip') }),
    /** The price of one bitcoin in US dollars, and when the service took it. */
    btcUsd: () => this.#send('utility.btcUsd', {}),
  };
  /** The base URL the client talks to (never the key). */
  readonly baseUrl: string;

  readonly #transport: Transport;
  readonly #calls: ServiceCalls;

  static {
    callsOf = (api) => api.#calls;
    transportOf = (api) => api.#transport;
  }

  constructor(options: PaymentsApiOptions) {
    const o = parseInput(optionsSchema, options, 'options');
    const timeoutMs = o.timeoutMs ?? TIMEOUT_MS;
    const retry = Object.entries(o.retry ?? {}).filter(([, value]) => value !== undefined);
    this.baseUrl = o.baseUrl;
    this.#transport = new Transport({
      apiKey: o.apiKey,
      redact: o.redact,
      baseUrl: o.baseUrl,
      timeoutMs,
      connectTimeoutMs: o.connectTimeoutMs ?? Math.min(timeoutMs, CONNECT_TIMEOUT_MS),
      maxRetries: o.maxRetries ?? MAX_RETRIES,
      backoff: { ...DEFAULT_BACKOFF, ...(Object.fromEntries(retry) as Partial<BackoffOptions>) },
      clock: o.clock,
      dispatcher: o.dispatcher,
    });
    this.#calls = new ServiceCalls(this.#transport, { ...DEFAULT_PATHS, ...o.paths });
  }

  #send<N extends OperationName>(name: N, args: SendArgs<N>) {
    return this.#calls.send(name, args);
  }

  /** Closes the connection pool the client opened (not a dispatcher you passed in). */
  close(): Promise<void> {
    return this.#transport.close();
  }

  /** Keeps the key out of console.log and util.inspect. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `PaymentsApi { baseUrl: '${this.baseUrl}' }`;
  }

  toJSON(): { baseUrl: string } {
    return { baseUrl: this.baseUrl };
  }
}

/**
 * A client and its send steps over one transport (one pool, one retry policy): the game gets
 * `api`, the engine `calls`. Closing `api` closes both; with a `gate`, every attempt waits on it.
 */
export function paymentsService(
  options: PaymentsApiOptions,
  gate?: OutboundGate,
): {
  api: PaymentsApi;
  calls: ServiceCalls;
} {
  const api = new PaymentsApi(options);
  if (gate !== undefined) transportOf(api).limitBy(gate);
  return { api, calls: callsOf(api) };
}
