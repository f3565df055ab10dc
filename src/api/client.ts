/**
 * `PaymentsApi`: the typed client for the whole payments service, one namespace per resource.
 *
 *   const api = new PaymentsApi({ apiKey: process.env.LIGHTNING_API_KEY });
 *   const request = await api.withdrawalRequests.create({ amount: 50_000n, description: 'Prize' });
 *   showQr(request.invoice.request);
 *
 * Every call validates its arguments before sending (InvalidArgumentError), validates the
 * answer (UnexpectedResponseError), and retries only what is safe to retry (retry-policy.ts).
 * Every method is `async`: a bad argument is a rejected promise, like any other failure, so
 * `.catch()` sees it; no method throws synchronously.
 *
 * Each method is two steps: its namespace parses the game's input, then the send step
 * (service-calls.ts) sends it. The server makes its own calls through the send steps alone
 * (`paymentsService`), since what it sends was parsed where it entered.
 */
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { type Clock, systemClock } from '../clock.js';
import { parseInput } from '../parse.js';
import { LnAddressCalls } from './namespaces/ln-address.js';
import { PaymentCalls } from './namespaces/payments.js';
import { RampCalls, WidgetSessionCalls } from './namespaces/sessions.js';
import { StaticChargeCalls } from './namespaces/static-charges.js';
import { UtilityCalls } from './namespaces/utility.js';
import type { WalletCalls } from './namespaces/wallet.js';
import { WidgetUserCalls } from './namespaces/widget-users.js';
import { WithdrawalRequestCalls } from './namespaces/withdrawal-requests.js';
import type { OutboundGate } from './outbound.js';
import {
  DEFAULT_BASE_URL,
  DEFAULT_PATHS,
  type PathName,
  type PathTable,
  resolvePaths,
} from './paths.js';
import { type BackoffOptions, DEFAULT_BACKOFF } from './retry-policy.js';
import { ServiceCalls } from './service-calls.js';
import { Transport } from './transport.js';

export interface PaymentsApiOptions {
  /** The project's API key, sent as the `apikey` header. Server-side only. */
  apiKey: string;
  /**
   * Other secrets to cut out of every error, should the service or a proxy echo them back
   * (the key always is). `createLightning` passes the webhook secret.
   */
  redact?: string[];
  /** Default `https://api.zbdpay.com`. May carry a path prefix. */
  baseUrl?: string;
  /** Longest wait for the answer's headers, and then between body chunks. Default 10,000 ms. */
  timeoutMs?: number;
  /** Longest wait for a connection. Default the smaller of timeoutMs and 5,000 ms. */
  connectTimeoutMs?: number;
  /** Retries after the first attempt, where the policy allows them. Default 2. */
  maxRetries?: number;
  /** Backoff between retries: full jitter from `baseDelayMs`, capped; `Retry-After` honoured. */
  retry?: Partial<BackoffOptions>;
  /** Replace any path of the table in paths.ts. */
  paths?: Partial<PathTable>;
  /** Your own undici dispatcher (Agent, Pool, MockAgent); the client then does not close it. */
  dispatcher?: Dispatcher;
  /**
   * The clock the waits between retries run on, and `Retry-After` dates are read against.
   * Default the system clock; a `ManualClock` lets a test move time instead of waiting. The
   * per-attempt `timeoutMs` stays on real time: it bounds a real socket.
   */
  clock?: Clock;
}

const pathOverride = z.string().startsWith('/', 'must start with "/"');

/**
 * The client's tuning (timeouts, retries, path overrides): what a game may set here and, the
 * same schema, under `createLightning`'s `api` option.
 */
export const apiTuningSchema = z.strictObject({
  timeoutMs: z.number().int().positive().max(600_000).optional(),
  connectTimeoutMs: z.number().int().positive().max(600_000).optional(),
  maxRetries: z.number().int().min(0).max(10).optional(),
  retry: z
    .strictObject({
      baseDelayMs: z.number().int().min(0).optional(),
      maxDelayMs: z.number().int().min(0).optional(),
      maxRetryAfterMs: z.number().int().min(0).optional(),
    })
    .optional(),
  paths: z
    .partialRecord(z.enum(Object.keys(DEFAULT_PATHS) as [PathName, ...PathName[]]), pathOverride)
    .optional(),
});

const optionsSchema = apiTuningSchema.extend({
  apiKey: z
    .string({ error: 'is required' })
    .min(1, 'is required')
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
  redact: z.array(z.string()).optional(),
  baseUrl: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .default(DEFAULT_BASE_URL),
  timeoutMs: z.number().int().positive().max(600_000).default(10_000),
  maxRetries: z.number().int().min(0).max(10).default(2),
  dispatcher: z
    .custom<Dispatcher>((value) => typeof value === 'object' && value !== null)
    .optional(),
  clock: z
    .custom<Clock>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        typeof (value as { now?: unknown }).now === 'function',
      'must be a Clock (an object with now())',
    )
    .default(systemClock),
});

/**
 * Reads a client's send steps. They stay a private field (a game's client offers only calls
 * that parse); the class hands this module the reader in its static block, for
 * `paymentsService` alone.
 */
let callsOf: (api: PaymentsApi) => ServiceCalls;
let transportOf: (api: PaymentsApi) => Transport;

export class PaymentsApi {
  readonly wallet: WalletCalls;
  readonly payments: PaymentCalls;
  /** Payments to Lightning addresses (`name@domain`), and their validation. */
  readonly lnAddress: LnAddressCalls;
  readonly withdrawalRequests: WithdrawalRequestCalls;
  readonly staticCharges: StaticChargeCalls;
  readonly widgetUsers: WidgetUserCalls;
  readonly widgetSessions: WidgetSessionCalls;
  readonly ramp: RampCalls;
  readonly utility: UtilityCalls;
  /** The base URL the client talks to (never the key). */
  readonly baseUrl: string;

  readonly #transport: Transport;
  /** The send steps the namespaces parse for, on the same transport. */
  readonly #calls: ServiceCalls;

  static {
    callsOf = (api) => api.#calls;
    transportOf = (api) => api.#transport;
  }

  constructor(options: PaymentsApiOptions) {
    const o = parseInput(optionsSchema, options, 'options');
    const backoff: BackoffOptions = { ...DEFAULT_BACKOFF };
    for (const [name, value] of Object.entries(o.retry ?? {})) {
      if (value !== undefined) backoff[name as keyof BackoffOptions] = value;
    }
    this.baseUrl = o.baseUrl;
    this.#transport = new Transport({
      apiKey: o.apiKey,
      redact: o.redact,
      baseUrl: o.baseUrl,
      timeoutMs: o.timeoutMs,
      connectTimeoutMs: o.connectTimeoutMs ?? Math.min(o.timeoutMs, 5_000),
      maxRetries: o.maxRetries,
      backoff,
      clock: o.clock,
      dispatcher: o.dispatcher,
    });
    const ctx = { transport: this.#transport, paths: resolvePaths(o.paths) };
    const calls = new ServiceCalls(ctx);
    this.#calls = calls;
    this.wallet = calls.wallet;
    this.payments = new PaymentCalls(calls.payments);
    this.lnAddress = new LnAddressCalls(calls.lnAddress);
    this.withdrawalRequests = new WithdrawalRequestCalls(calls.withdrawalRequests);
    this.staticCharges = new StaticChargeCalls(calls.staticCharges);
    this.widgetUsers = new WidgetUserCalls(calls.widgetUsers);
    this.widgetSessions = new WidgetSessionCalls(calls.widgetSessions);
    this.ramp = new RampCalls(calls.ramp);
    this.utility = new UtilityCalls(calls.utility);
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
 * A client and its send steps over one transport (one pool, one retry policy): the server's
 * runtime makes both, gives the game `api` (which parses what the game hands it) and its
 * engine `calls` (for what it parsed where it entered). Closing `api` closes both. With a
 * `gate` (the game's outbound rate), every attempt of either waits for it.
 */
export function paymentsService(
  options: PaymentsApiOptions,
  gate?: OutboundGate,
): {
  api: PaymentsApi;
  calls: ServiceCalls;
} {
  const api = new PaymentsApi(options);
  // Every attempt of both, the game's calls and the engine's, waits for the game's rate.
  if (gate !== undefined) transportOf(api).limitBy(gate);
  return { api, calls: callsOf(api) };
}
