/**
 * `createLightning` options. The zod schema below is their one definition: the type users
 * write (`LightningOptions`) is inferred from it, and every default is applied here, in
 * `resolveOptions`, once, so a mistake is a clear error before the first player joins.
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
  /**
   * A `creating` intent older than this lost its process mid-call (or its answer is very late):
   * it becomes `unknown` and the `unknown` event fires. A create answer that arrives later still
   * wins over `unknown`. Default 30,000 ms.
   */
  creatingGraceMs: ms.default(30_000),
  /**
   * A reward or entry fee whose create answer was lost never gave its code to anyone, so nobody
   * can claim or pay it: this long after its deadline (a margin for clock skew with the
   * service), it ends `expired`. Default 60,000 ms.
   */
  expiryMarginMs: ms.default(60_000),
});

const auditSchema = z.strictObject({
  /** Run the live audit with the reconciler. Default true. */
  enabled: z.boolean().default(true),
  /** How often the reconciler audits the journal and the wallet. Default 60,000 ms. */
  intervalMs: ms.default(60_000),
  /**
   * How long after its last journal entry an ended match is checked (its last payouts and
   * refunds are being made until then), and how far past its deadline an unknown is overdue.
   * Default 30,000 ms.
   */
  settleMs: ms.default(30_000),
  /** How far back the first audit of a process reads the journal. Default one day. */
  lookbackMs: ms.default(86_400_000),
  /**
   * How long the wallet may stay off what the journal says before it is a finding: money can
   * move at the service before its callback or re-read reaches the journal. Default 600,000 ms.
   */
  walletSettleMs: z.number().int().min(0).default(600_000),
  /** What the wallet may differ by anyway: it is read in whole sats. Default 10,000 msats. */
  walletToleranceMsat: z.number().int().min(0).default(10_000),
  /** The service's fees, in basis points of what left the wallet. Default 100 (1 %). */
  feeToleranceBps: z.number().int().min(0).max(10_000).default(100),
});

const breakerSchema = z.strictObject({
  /**
   * Ambiguous or 5xx answers to payout creates within `windowMs` that pause payouts, once they
   * come from `players` different players; also 5xx answers to reads of the service, from
   * anyone. Entry fees and spends never count, nor does a 429. 0 never pauses. Default 5.
   */
  failures: z.number().int().min(0).default(5),
  /** The window those failures are counted in. Default 60,000 ms. */
  windowMs: ms.default(60_000),
  /**
   * How many different players (and, for payments to Lightning addresses, different address
   * domains) the failing payouts must come from before they pause everyone's: one player (or
   * one address server) cannot pause the game. 1 counts any. Default 3.
   */
  players: z.number().int().min(1).max(1000).default(3),
  /**
   * Failed payments (ambiguous or 5xx, or a check of the address that did not answer) to one
   * Lightning address within `windowMs` after which nothing more is sent to it until the window
   * has passed: a match pays its player by claim code, `payAddress` rejects with
   * LnAddressRefusedError (`failing`). 0 never holds an address. Default 1.
   */
  recipientFailures: z.number().int().min(0).default(1),
  /**
   * How long the check of a Lightning address before each payment to it may take (one attempt,
   * `GET /v0/ln-address/validate/{address}`). Default 3,000 ms.
   */
  validateTimeoutMs: ms.max(600_000).default(3_000),
  /** Pause payouts rather than let the wallet fall below this many msats. Default: no floor. */
  walletFloorMsat: z.number().int().min(0).optional(),
  /** How long a wallet balance read is trusted (payouts since are subtracted). Default 30,000 ms. */
  walletCheckMs: ms.default(30_000),
});

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
  /**
   * Alert when the service has answered nothing but 5xx for this long (any other answer ends
   * the run). Default 60,000 ms.
   */
  serviceFailingMs: ms.default(60_000),
});

const limitsSchema = z.strictObject({
  /**
   * Open intents (creating, pending, unknown) one player may hold at once, across every process
   * of the game; one more is refused with LimitExceededError, nothing recorded or sent. Default 20.
   */
  maxOpenPerPlayer: z.number().int().positive().default(20),
  /**
   * Open intents the whole game may hold at once, whoever holds them (matches aside: a match's
   * record moves no money, its fees and payouts count), across every process; one more is
   * refused with LimitExceededError (`limit: 'maxOpenPerGame'`), nothing recorded or sent. What
   * bounds a crowd of new players, which per-player limits cannot. Default 10,000.
   */
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

/**
 * Payout approvals: what is recorded `held` (nothing sent) until an operator approves it
 * (`lightning.operator.approve`) or rejects it (`lightning.operator.reject`). Rewards, a match's payouts and
 * payments to Lightning addresses; refunds of a match never (they give a player's own fee back).
 */
const approvalsSchema = z.strictObject({
  /** A payout of more than this many msats is held. */
  aboveMsat: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  /**
   * A payout that would take its player's payouts of the last 24 hours (held ones included,
   * expired and failed ones not) past this many msats is held too. Decided in the ledger's
   * atomic create, so it holds across processes.
   */
  perPlayerPerDayMsat: capMsat.optional(),
});

/**
 * Fiat prices: the service publishes one price, of a bitcoin in US dollars (`GET /v0/btcusd`),
 * so 'USD' is the one currency; any other is refused here rather than shown wrong.
 */
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
    /**
     * How many proxies of the game's own append to X-Forwarded-For before this server (1
     * behind one load balancer). 0: none, the socket's peer. Default 0.
     */
    proxies: z.number().int().min(0).max(10).default(0),
    /**
     * A header the game's proxy sets to the client's address (`x-real-ip`,
     * `cf-connecting-ip`), read instead of X-Forwarded-For; only with `proxies` of 1 or more.
     */
    header: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, 'must be a header name')
      .transform((h) => h.toLowerCase())
      .refine((h) => h !== 'x-forwarded-for', 'leave it out to read X-Forwarded-For')
      .optional(),
    /**
     * Where the game's proxies connect from (addresses or CIDR subnets). Where the socket is
     * known (`lightning.attach(server)`), a request through proxies from anywhere else went
     * around them and has no address. Default: loopback and private networks.
     */
    proxyAddresses: z
      .array(z.string().refine(isAddressOrSubnet, 'must be an IP address or a CIDR subnet'))
      .max(100)
      .default([...PRIVATE_NETWORKS]),
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
  /**
   * The origin the service can reach for callbacks, e.g. `https://game.example.com`.
   * Required (and https) with a real key; with the emulator, default `http://127.0.0.1:2567`.
   */
  publicUrl: httpUrl.optional(),
  /** Where the callback and webhook routes live. Default `/lightning`. */
  prefix: z
    .string()
    .regex(/^\/[A-Za-z0-9/_-]*[A-Za-z0-9_-]$/, 'must look like /lightning')
    .default('/lightning'),
  /**
   * The ledger: a LedgerStore, or a SQLite file path. Default: `lightning-ledger.sqlite` in the
   * working directory with a real key, `:memory:` with the emulator.
   */
  ledger: z.union([z.string().min(1), z.custom<LedgerStore>(isObject)]).optional(),
  /** Shared secret of the widget and ramp webhooks (HMAC-SHA256 of the raw body). */
  webhookSecret: z.string().min(16, 'must be at least 16 characters').optional(),
  /** API client settings: timeouts, retries, path overrides (see `PaymentsApiOptions`). */
  api: apiTuningSchema.default({}),
  /**
   * One outbound rate for the whole game (server/outbound.ts): every call to the service, in
   * every process sharing the ledger (PostgreSQL; SQLite serves one process), waits for a
   * token of one bucket that refills `perSecond` and holds `burst` (default perSecond, at least
   * 1); a player's own action goes first, then payouts, then re-reads; a 429's Retry-After holds
   * every process. Set it a little under the service's limit (docs/DEPLOY.md). Default: none.
   */
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
  /**
   * Limits on open intents, per player and game-wide, enforced in the ledger so that they hold
   * across processes.
   */
  limits: limitsSchema.prefault({}),
  /** Payout budgets, checked and reserved in the ledger with each payout. Default none. */
  budgets: budgetsSchema.prefault({}),
  /** Payout approvals (see approvalsSchema): off unless set. */
  approvals: approvalsSchema.optional(),
  /**
   * The payout queue (server/queue.ts): a match settled with at least `fromWinners` winners
   * records every payout `queued` at once and returns; the reconcilers of the game's processes
   * send them in their turn (at the game's `rateLimit`, or at the reconciler's pace), each
   * exactly once. Only where this process runs its reconciler; `lightning.rewardMany` always
   * queues. Default `{ fromWinners: 10 }`.
   */
  payoutQueue: z
    .strictObject({
      /** A settle naming at least this many winners queues its payouts. Default 10. */
      fromWinners: z.number().int().min(1).default(10),
    })
    .prefault({}),
  /**
   * The embedded emulator (when there is no apiKey). Default port 0 (free), host 127.0.0.1. A
   * host other than loopback (127.0.0.0/8, ::1, `localhost`), such as '0.0.0.0', is refused
   * unless `allowRemote: true` (development only: never on a machine the internet can reach).
   */
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
  /**
   * Who the client is, by address: the callback allowlist (`callbackSources`) and the room
   * plugin's region gate read it the same way (server/client-address.ts). With no proxy in
   * front of the game, the socket's own peer; behind proxies of the game's own, the
   * X-Forwarded-For entry `proxies` places from the right (or the `header` they set), never
   * what the client claims. Default: no proxy.
   */
  clientAddress: clientAddressSchema.prefault({}),
  /**
   * Prices in a fiat currency: `{ currency: 'USD', refreshMs? }` reads the service's price of a
   * bitcoin (`GET /v0/btcusd`) as the server starts and every `refreshMs`, and every room syncs
   * it in `state.lightning.price` (`currency`, `btcPrice`, `at`). Default: off (currency '').
   */
  fiat: fiatSchema.optional(),
  /**
   * Where the metrics go (server/metrics.ts): an OpenTelemetry `MeterProvider`. Default the
   * global one as the server starts, a no-op unless the game installed an SDK.
   */
  meterProvider: z
    .custom<MeterProvider>(
      (v) => isObject(v) && typeof (v as MeterProvider).getMeter === 'function',
      'must be an OpenTelemetry MeterProvider',
    )
    .optional(),
  /**
   * Alerts (server/alerts.ts): cover low, an old unknown, payouts paused, an audit finding, the
   * service failing; each raised once and cleared once (the `alert` event, one log line,
   * `lightning.operator.alerts()`). Off unless set; `{}` turns on the kinds that need no threshold.
   */
  alerts: alertsSchema.optional(),
  /**
   * Accept status callbacks only from the service's published addresses (`GET /v0/prod-ips`,
   * read again every `refreshMs`) and from `also`; others get an empty 403. The sender is the
   * client address of `clientAddress`, so behind proxies the game must be reachable only
   * through them; with no proxy (`clientAddress.proxies` 0) only `lightning.attach(server)`
   * sees the sender: the router does not expose the socket. Default: off.
   */
  callbackSources: z
    .strictObject({
      /** How often the service's list is read again. Default 3,600,000 ms. */
      refreshMs: ms.default(3_600_000),
      /** More addresses or subnets to accept (`10.0.0.0/8`). */
      also: z
        .array(z.string().refine(isAddressOrSubnet, 'must be an IP address or a CIDR subnet'))
        .max(100)
        .default([]),
      /** Moved to `clientAddress.proxies`, which the region gate shares. */
      proxies: z
        .never({ error: 'moved to clientAddress.proxies (shared with the region gate)' })
        .optional(),
    })
    .optional(),
  /**
   * A game that mounts the routes or the room plugin and never calls `lightning.ready()` starts
   * this long after the first of them anyway (with a warning outside production): until then a
   * restarted server would not recover its open payments. 0: wait for the first use. Default
   * 5,000 ms.
   */
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
  /** The time source of the server, its ledger writes and its schedule; tests pass a ManualClock. */
  clock: z
    .custom<Clock>((v) => isObject(v) && typeof (v as Clock).now === 'function')
    .default(systemClock),
});

/** What `createLightning` accepts. */
export type LightningOptions = z.input<typeof lightningOptionsSchema>;
export type ReconcilerOptions = z.input<typeof reconcilerSchema>;
export type ReconcilerSettings = z.output<typeof reconcilerSchema>;
export type AuditOptions = z.input<typeof auditSchema>;
export type AuditSettings = z.output<typeof auditSchema>;
export type AlertsOptions = z.input<typeof alertsSchema>;
export type AlertSettings = z.output<typeof alertsSchema>;
export type BreakerOptions = z.input<typeof breakerSchema>;
export type BreakerSettings = z.output<typeof breakerSchema>;
export type LimitsOptions = z.input<typeof limitsSchema>;
export type BudgetsOptions = z.input<typeof budgetsSchema>;
export type BudgetsSettings = z.output<typeof budgetsSchema>;
export type ApprovalsOptions = z.input<typeof approvalsSchema>;
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
    // The embedded emulator signs its webhooks with the secret it is given: without one of the
    // game's, a random one, so that webhooks work in development exactly as in production.
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
  if (!o.publicUrl.startsWith('https://') && !isLoopback(o.baseUrl)) {
    throw new ConfigurationError(
      'options.publicUrl',
      'must be https with a real API key (the service only calls HTTPS callback URLs)',
    );
  }
  return { ...o, publicUrl: trimSlash(o.publicUrl) };
}

/**
 * `LIGHTNING_API_KEY=` and `PUBLIC_URL=` left empty in a copied `.env` mean "not set": the
 * emulator and its default address, with the same notice as when they are absent.
 */
function withoutBlanks(options: LightningOptions | undefined): unknown {
  if (typeof options !== 'object' || options === null) return options ?? {};
  const o = { ...options };
  if (typeof o.apiKey === 'string' && o.apiKey.trim() === '') delete o.apiKey;
  if (typeof o.publicUrl === 'string' && o.publicUrl.trim() === '') delete o.publicUrl;
  return o;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** A service on this machine (an emulator in another process) may call plain-http callbacks. */
function isLoopback(baseUrl: string | undefined): boolean {
  if (baseUrl === undefined) return false;
  const host = new URL(baseUrl).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
