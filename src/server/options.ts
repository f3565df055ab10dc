/**
 * `createLightning` options: the zod schema is their one definition (the types are inferred) and
 * every default is applied here, once, so a mistake fails before the first player joins.
 */
import { randomBytes } from 'node:crypto';
import type { MeterProvider } from '@opentelemetry/api';
import { z } from 'zod';
import { apiTuningSchema } from '../api/client.js';
import { type Clock, systemClock } from '../clock.js';
import { isLoopbackHost, remoteHostProblem } from '../emulator/bind.js';
import { ConfigurationError } from '../errors.js';
import type { LedgerStore } from '../ledger/store.js';
import { parseInput } from '../parse.js';
import { isAddressOrSubnet, PRIVATE_NETWORKS } from './client-address.js';
import { consoleLogger, type LightningLogger } from './logger.js';

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const ms = z.number().int().positive();
const isObject = (v: unknown) => typeof v === 'object' && v !== null;
/** IP addresses or CIDR subnets, 100 at most. */
const addresses = z
  .array(z.string().refine(isAddressOrSubnet, 'must be an IP address or a CIDR subnet'))
  .max(100);

const reconcilerSchema = z.strictObject({
  /** Run the reconciler at all. Default true. */
  enabled: z.boolean().default(true),
  /** How often it looks for due intents. Default 1,000 ms. */
  intervalMs: ms.default(1_000),
  /** How long an intent waits for its callback before the first re-read. Default 15,000 ms. */
  firstCheckMs: ms.default(15_000),
  /** The longest wait between two re-reads of one intent. Default 300,000 ms. */
  maxBackoffMs: ms.default(300_000),
  /** Global cap on re-reads per second, to stay far from the service's rate limits. Default 20. */
  checksPerSecond: z.number().positive().default(20),
  /** How long one process holds an intent it is checking. Default 30,000 ms. */
  leaseMs: ms.default(30_000),
  /** A `creating` intent older than this lost its process: now `unknown`. Default 30,000 ms. */
  creatingGraceMs: ms.default(30_000),
  /** A code nobody saw (answer lost) ends `expired` this long after its deadline. Default 60 s. */
  expiryMarginMs: ms.default(60_000),
});
export type ReconcilerSettings = z.output<typeof reconcilerSchema>;

const auditSchema = z.strictObject({
  /** Run the live audit with the reconciler. Default true. */
  enabled: z.boolean().default(true),
  /** How often the reconciler audits the journal and the wallet. Default 60,000 ms. */
  intervalMs: ms.default(60_000),
  /** How long an ended match settles before its audit; an unknown's overdue margin. Default 30 s. */
  settleMs: ms.default(30_000),
  /** How far back the first audit of a process reads the journal. Default one day. */
  lookbackMs: ms.default(86_400_000),
  /** How long the wallet may differ from the journal before it is a finding. Default 600,000 ms. */
  walletSettleMs: z.number().int().min(0).default(600_000),
  /** What the wallet may differ by anyway: it is read in whole sats. Default 10,000 msats. */
  walletToleranceMsat: z.number().int().min(0).default(10_000),
  /** The service's fees, in basis points of what left the wallet. Default 100 (1 %). */
  feeToleranceBps: z.number().int().min(0).max(10_000).default(100),
});

const breakerSchema = z.strictObject({
  /** Ambiguous/5xx payout creates or 5xx reads in `windowMs` that pause payouts; 0 never. Default 5. */
  failures: z.number().int().min(0).default(5),
  /** The window those failures are counted in. Default 60,000 ms. */
  windowMs: ms.default(60_000),
  /** Different players (and address domains) those must come from: one cannot pause. Default 3. */
  players: z.number().int().min(1).max(1000).default(3),
  /** Failed payments to one address in `windowMs` that refuse it for the window; 0 never. Default 1. */
  recipientFailures: z.number().int().min(0).default(1),
  /** How long the check of a Lightning address before each payment may take. Default 3,000 ms. */
  validateTimeoutMs: ms.max(600_000).default(3_000),
  /** Pause payouts rather than let the wallet fall below this many msats. Default: no floor. */
  walletFloorMsat: z.number().int().min(0).optional(),
  /** How long a wallet read is trusted (payouts since are subtracted). Default 30,000 ms. */
  walletCheckMs: ms.default(30_000),
});
export type BreakerSettings = z.output<typeof breakerSchema>;

const alertsSchema = z.strictObject({
  /** Alert when cover (wallet - owed - escrow - in flight) falls below this. Default: off. */
  coverBelowMsat: z
    .number()
    .int()
    .min(-Number.MAX_SAFE_INTEGER)
    .max(Number.MAX_SAFE_INTEGER)
    .optional(),
  /** Alert when an intent has been `unknown` for longer than this. Default: off. */
  unknownAfterMs: ms.optional(),
  /** Check this often as well as after each audit run. Default: only after audit runs. */
  intervalMs: ms.optional(),
  /** Alert when the service has answered nothing but 5xx for this long. Default 60,000 ms. */
  serviceFailingMs: ms.default(60_000),
});
export type AlertSettings = z.output<typeof alertsSchema>;

const limitsSchema = z.strictObject({
  /** Open intents one player may hold at once, across processes. Default 20. */
  maxOpenPerPlayer: z.number().int().positive().default(20),
  /** Open intents the whole game may hold (matches' own records aside). Default 10,000. */
  maxOpenPerGame: z.number().int().positive().default(10_000),
});

/** Budgets are summed exactly up to 2^53 msats (90,000 BTC) in every store. */
const capMsat = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const budgetWindow = z.strictObject({
  /** The most the payouts created in the window (unless expired or failed) may add up to. */
  msat: capMsat,
  /** The rolling window, in ms (e.g. 3,600,000 for an hour). */
  windowMs: ms,
});

const budgetsSchema = z.strictObject({
  /** The largest single payout (a reward or a payment to a Lightning address), in msats. */
  maxRewardMsat: capMsat.optional(),
  /** Payouts (rewards and payments to Lightning addresses) to one player over a rolling window. */
  perPlayer: budgetWindow.optional(),
  /** Payouts in one room over a rolling window. */
  perRoom: budgetWindow.optional(),
  /** Every payout of the game over a rolling window. */
  game: budgetWindow.optional(),
});

/** Payouts held until an operator approves or rejects them; never a refund (a player's own fee). */
const approvalsSchema = z.strictObject({
  /** A payout of more than this many msats is held. */
  aboveMsat: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  /** A payout taking its player's last 24 hours past this is held too (in the atomic create). */
  perPlayerPerDayMsat: capMsat.optional(),
});

/**
 * Players' tabs (docs/MATCHES.md): the earning rules, each refusal a typed error, nothing recorded.
 * The defaults follow ZBD's Earn SDK at about $100,000 a bitcoin (1 sat ≈ $0.001): $0.10 per
 * reward trigger, a $0.01 minimum withdrawal, a few dollars a day.
 */
const tabsSchema = z.strictObject({
  /** The largest single credit (CreditTooLargeError). Default 100,000 msats (100 sats). */
  maxCreditMsat: capMsat.default(100_000),
  /** What one player's credits may add up to over the last hour (EarningCapError). Default 1,000,000. */
  earnPerHourMsat: capMsat.default(1_000_000),
  /** What one player's credits may add up to over the last day (EarningCapError). Default 5,000,000. */
  earnPerDayMsat: capMsat.default(5_000_000),
  /** The smallest withdrawal (WithdrawalTooSmallError). Default 10,000 msats, the service's own minimum. */
  minWithdrawalMsat: capMsat.default(10_000),
  /** What one player may withdraw over the last day (WithdrawalCapError). Default 5,000,000. */
  withdrawPerDayMsat: capMsat.default(5_000_000),
});

/** The service publishes one price, a bitcoin in US dollars: another currency is refused. */
const fiatSchema = z.strictObject({
  /** 'USD': the currency `state.lightning.price` is in. */
  currency: z.string().refine((c) => c === 'USD', {
    error: (issue) =>
      `must be 'USD': the service publishes the price of a bitcoin in US dollars only (GET /v0/btcusd), not in ${JSON.stringify(issue.input)}`,
  }),
  /** How often the price is read again, in ms. Default 60,000. */
  refreshMs: ms.default(60_000),
});

/** Who the client is, by address (see `clientAddress` below and server/client-address.ts). */
const clientAddressSchema = z
  .strictObject({
    /** Proxies of the game's own appending to X-Forwarded-For (0: the socket's peer). Default 0. */
    proxies: z.number().int().min(0).max(10).default(0),
    /** A header the game's proxy sets to the client's address, read instead of X-Forwarded-For. */
    header: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, 'must be a header name')
      .transform((h) => h.toLowerCase())
      .refine((h) => h !== 'x-forwarded-for', 'leave it out to read X-Forwarded-For')
      .optional(),
    /** Where the game's proxies connect from; a request from elsewhere has no address. */
    proxyAddresses: addresses.default([...PRIVATE_NETWORKS]),
  })
  .refine((c) => c.header === undefined || c.proxies > 0, {
    message: 'header needs proxies of 1 or more: a client sets any header it likes',
    path: ['header'],
  });

export const lightningOptionsSchema = z.strictObject({
  /** The service's API key. Absent: an embedded emulator is started (not in production). */
  apiKey: z.string().min(1, 'must not be empty').optional(),
  /** The service's base URL. Default the production URL (the emulator's with no key). */
  baseUrl: httpUrl.optional(),
  /** The origin the service calls back: required (https) with a real key. */
  publicUrl: httpUrl.optional(),
  /** Where the callback and webhook routes live. Default `/lightning`. */
  prefix: z
    .string()
    .regex(/^\/[A-Za-z0-9/_-]*[A-Za-z0-9_-]$/, 'must look like /lightning')
    .default('/lightning'),
  /** A LedgerStore or a SQLite path. Default `lightning-ledger.sqlite` (emulator: `:memory:`). */
  ledger: z.union([z.string().min(1), z.custom<LedgerStore>(isObject)]).optional(),
  /** Shared secret of the widget and ramp webhooks (HMAC-SHA256 of the raw body). */
  webhookSecret: z.string().min(16, 'must be at least 16 characters').optional(),
  /** API client settings: timeouts, retries, path overrides (see `PaymentsApiOptions`). */
  api: apiTuningSchema.default({}),
  /** One outbound rate for every process sharing the ledger (server/outbound.ts). Default none. */
  rateLimit: z
    .strictObject({
      perSecond: z.number().positive().max(100_000),
      burst: z.number().min(1).max(1_000_000).optional(),
    })
    .transform((r) => ({ perSecond: r.perSecond, burst: r.burst ?? Math.max(1, r.perSecond) }))
    .optional(),
  /** Polling of overdue intents, which recovers lost callbacks. */
  reconciler: reconcilerSchema.prefault({}),
  /** The payout circuit breaker (see server/breaker.ts). */
  breaker: breakerSchema.prefault({}),
  /** The live audit of the journal and the wallet (see server/audit.ts). */
  audit: auditSchema.prefault({}),
  /** Limits on open intents, enforced in the ledger so that they hold across processes. */
  limits: limitsSchema.prefault({}),
  /** Payout budgets, checked and reserved in the ledger with each payout. Default none. */
  budgets: budgetsSchema.prefault({}),
  /** Players' tabs: the earning rules (see tabsSchema), with safe defaults. */
  tabs: tabsSchema.prefault({}),
  /** Payout approvals (see approvalsSchema): off unless set. */
  approvals: approvalsSchema.optional(),
  /** The payout queue (server/queue.ts) for settles with many winners; needs the reconciler. */
  payoutQueue: z
    .strictObject({
      /** A settle naming at least this many winners queues its payouts. Default 10. */
      fromWinners: z.number().int().min(1).default(10),
    })
    .prefault({}),
  /** The embedded emulator (no apiKey); a non-loopback host needs `allowRemote`. */
  emulator: z
    .strictObject({
      port: z.number().int().min(0).max(65535).default(0),
      host: z.string().min(1).default('127.0.0.1'),
      allowRemote: z.boolean().default(false),
    })
    .superRefine((e, ctx) => {
      if (!e.allowRemote && !isLoopbackHost(e.host)) {
        ctx.addIssue({
          code: 'custom',
          path: ['host'],
          message: remoteHostProblem(e.host, 'Set emulator.allowRemote: true'),
        });
      }
    })
    .prefault({}),
  /** Who the client is, by address (server/client-address.ts). Default: no proxy. */
  clientAddress: clientAddressSchema.prefault({}),
  /** Fiat prices, synced to every room in `state.lightning.price`. Default off. */
  fiat: fiatSchema.optional(),
  /** An OpenTelemetry `MeterProvider` for the metrics. Default the global one. */
  meterProvider: z
    .custom<MeterProvider>(
      (v) => isObject(v) && typeof (v as MeterProvider).getMeter === 'function',
      'must be an OpenTelemetry MeterProvider',
    )
    .optional(),
  /** Alerts (server/alerts.ts), each raised and cleared once. Off unless set. */
  alerts: alertsSchema.optional(),
  /** Accept callbacks only from the service's published addresses and `also`. Default off. */
  callbackSources: z
    .strictObject({
      /** How often the service's list is read again. Default 3,600,000 ms. */
      refreshMs: ms.default(3_600_000),
      /** More addresses or subnets to accept (`10.0.0.0/8`). */
      also: addresses.default([]),
    })
    .optional(),
  /** Start this long after the first mount even without `ready()`. Default 5,000 ms. */
  startWithoutReadyMs: ms.max(600_000).default(5_000),
  /** Largest callback or webhook body accepted. Default 64 KiB. */
  maxBodyBytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024),
  /** Default `console` with a `[lightning]` prefix. */
  logger: z
    .custom<LightningLogger>(
      (v) => isObject(v) && typeof (v as LightningLogger).warn === 'function',
    )
    .default(consoleLogger),
  /** The time source of the server, its ledger writes and its schedule. */
  clock: z
    .custom<Clock>((v) => isObject(v) && typeof (v as Clock).now === 'function')
    .default(systemClock),
});

/** What `createLightning` accepts, and its parts. */
export type LightningOptions = z.input<typeof lightningOptionsSchema>;
export type ReconcilerOptions = z.input<typeof reconcilerSchema>;
export type AuditOptions = z.input<typeof auditSchema>;
export type AlertsOptions = z.input<typeof alertsSchema>;
export type BreakerOptions = z.input<typeof breakerSchema>;
export type LimitsOptions = z.input<typeof limitsSchema>;
export type BudgetsOptions = z.input<typeof budgetsSchema>;
export type TabsOptions = z.input<typeof tabsSchema>;
export type ClientAddressOptions = z.input<typeof clientAddressSchema>;
export type FiatOptions = z.input<typeof fiatSchema>;

/** Every option with its default applied; `publicUrl` known, without a trailing slash. */
export type Settings = z.output<typeof lightningOptionsSchema> & { publicUrl: string };

export function resolveOptions(
  options: LightningOptions,
  env: NodeJS.ProcessEnv = process.env,
): Settings {
  const o = parseInput(
    lightningOptionsSchema,
    withoutBlanks(options),
    'options',
    ConfigurationError,
  );
  if (o.apiKey === undefined) {
    if (env.NODE_ENV === 'production') {
      throw new ConfigurationError(
        'options.apiKey',
        'is required when NODE_ENV=production (the embedded emulator moves no real money)',
      );
    }
    // A random secret so that the emulator's webhooks are signed as in production.
    return {
      ...o,
      webhookSecret: o.webhookSecret ?? randomBytes(32).toString('base64url'),
      publicUrl: trimSlash(o.publicUrl ?? 'http://127.0.0.1:2567'),
    };
  }
  if (o.publicUrl === undefined) {
    throw new ConfigurationError(
      'options.publicUrl',
      'is required with a real API key: the origin the service can reach for callbacks',
    );
  }
  // A service on this machine (an emulator in another process) may call plain-http callbacks.
  const localService = o.baseUrl !== undefined && isLoopbackHost(new URL(o.baseUrl).hostname);
  if (!o.publicUrl.startsWith('https://') && !localService) {
    throw new ConfigurationError(
      'options.publicUrl',
      'must be https with a real API key (the service only calls HTTPS callback URLs)',
    );
  }
  return { ...o, publicUrl: trimSlash(o.publicUrl) };
}

/** `LIGHTNING_API_KEY=` and `PUBLIC_URL=` left empty in a copied `.env` mean "not set". */
function withoutBlanks(options: LightningOptions | undefined): unknown {
  if (typeof options !== 'object' || options === null) return options ?? {};
  const o = { ...options };
  if (typeof o.apiKey === 'string' && o.apiKey.trim() === '') delete o.apiKey;
  if (typeof o.publicUrl === 'string' && o.publicUrl.trim() === '') delete o.publicUrl;
  return o;
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');
