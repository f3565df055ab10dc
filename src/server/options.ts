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
const addresses = z
  .array(z.string().refine(isAddressOrSubnet, 'must be an IP address or a CIDR subnet'))
  .max(100);

// Each option's documentation is its zod metadata (`description`; `defaultText` where zod has no
// default to show; `tsType` for a custom type): `npm run docs:options` writes the docs' tables
// from it, and test/docs-options.test.ts fails when a table differs.

const reconcilerSchema = z.strictObject({
  enabled: z.boolean().default(true).meta({
    description:
      'run the reconciler in this process; a process with `false` records queued payouts but sends none itself',
  }),
  intervalMs: ms.default(1_000).meta({ description: 'how often it looks for due intents' }),
  firstCheckMs: ms.default(15_000).meta({
    description: 'how long an intent waits for its callback before the first re-read',
  }),
  maxBackoffMs: ms.default(300_000).meta({
    description: 'the longest wait between two re-reads of one intent',
  }),
  checksPerSecond: z.number().positive().default(20).meta({
    description: "cap on re-reads per second, to stay far from the service's rate limits",
  }),
  leaseMs: ms.default(30_000).meta({
    description: 'how long one process holds an intent it is checking',
  }),
  creatingGraceMs: ms.default(30_000).meta({
    description: 'a `creating` intent older than this lost its process: it becomes `unknown`',
  }),
  expiryMarginMs: ms.default(60_000).meta({
    description: 'a code nobody saw (its answer lost) ends `expired` this long after its deadline',
  }),
});
export type ReconcilerSettings = z.output<typeof reconcilerSchema>;

const auditSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(true)
    .meta({ description: 'run the live audit with the reconciler' }),
  intervalMs: ms.default(60_000).meta({
    description: 'how often the reconciler audits the journal and the wallet',
  }),
  settleMs: ms.default(30_000).meta({
    description: "how long an ended match settles before its audit; an unknown's overdue margin",
  }),
  lookbackMs: ms.default(86_400_000).meta({
    description: 'how far back the first audit of a process reads the journal (one day)',
  }),
  walletSettleMs: z.number().int().min(0).default(600_000).meta({
    description: 'how long the wallet may differ from the journal before it is a finding',
  }),
  walletToleranceMsat: z.number().int().min(0).default(10_000).meta({
    description: 'what the wallet may differ by anyway: it is read in whole sats',
  }),
  feeToleranceBps: z.number().int().min(0).max(10_000).default(100).meta({
    description: "the service's fees, in basis points of what left the wallet (100: 1 %)",
  }),
});

const breakerSchema = z.strictObject({
  failures: z.number().int().min(0).default(5).meta({
    description:
      'ambiguous or 5xx answers to payout creates within `windowMs` from at least `players` players (and, for address payments, as many domains), or 5xx answers to reads of `players` different intents, that pause payouts; `0`: never',
  }),
  windowMs: ms.default(60_000).meta({ description: 'the window those failures are counted in' }),
  players: z.number().int().min(1).max(1000).default(3).meta({
    description:
      "how many different players (and address domains) the failures must come from, so that one player (one address server) never pauses the game; `1`: anyone's",
  }),
  recipientFailures: z.number().int().min(0).default(1).meta({
    description:
      'failed payments to (or unanswered checks of) one Lightning address within `windowMs` after which nothing more is sent to it until the window passes; `0`: never',
  }),
  validateTimeoutMs: ms.max(600_000).default(3_000).meta({
    description: 'the longest check of a Lightning address before a payment to it (one attempt)',
  }),
  walletFloorMsat: z.number().int().min(0).optional().meta({
    description: 'pause payouts rather than let the wallet fall below this many msats',
    defaultText: 'no floor',
  }),
  walletCheckMs: ms.default(30_000).meta({
    description: 'how long a wallet reading is trusted (payouts since are subtracted)',
  }),
});
export type BreakerSettings = z.output<typeof breakerSchema>;

const alertsSchema = z.strictObject({
  coverBelowMsat: z
    .number()
    .int()
    .min(-Number.MAX_SAFE_INTEGER)
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .meta({
      description:
        'raise `cover-low` when the cover falls below this (any integer; 0: only when short)',
      defaultText: 'off',
    }),
  unknownAfterMs: ms.optional().meta({
    description: 'raise `unknown-old` when an intent has been `unknown` this long',
    defaultText: 'off',
  }),
  intervalMs: ms.optional().meta({
    description: 'check this often too, besides after each audit run',
    defaultText: 'only after audit runs',
  }),
  serviceFailingMs: ms.default(60_000).meta({
    description: 'raise `service-failing` when the service has answered only 5xx for this long',
  }),
});
export type AlertSettings = z.output<typeof alertsSchema>;

const limitsSchema = z.strictObject({
  maxOpenPerPlayer: z.number().int().positive().default(20).meta({
    description:
      'open intents (`creating`, `pending`, `unknown`, `held`, `queued`) one player may hold at once',
  }),
  maxOpenPerGame: z.number().int().positive().default(10_000).meta({
    description:
      "open intents the whole game may hold: the bound on a crowd of new players (each a new id); size it to what your wallet and the service's rate should have in flight",
  }),
});

/** Budgets are summed exactly up to 2^53 msats (90,000 BTC) in every store. */
const capMsat = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const budgetWindow = z.strictObject({
  msat: capMsat.meta({
    description: 'the cap, in msats',
  }),
  windowMs: ms.meta({ description: 'the rolling window, in ms (3,600,000: an hour)' }),
});

const budgetsSchema = z.strictObject({
  maxRewardMsat: capMsat.optional().meta({
    description:
      'the largest single payout (a reward, a match payout, an address payment); not a tab withdrawal',
    defaultText: 'none',
  }),
  perPlayer: budgetWindow.optional().meta({
    description: 'payouts to one player over a rolling window',
    defaultText: 'none',
  }),
  perRoom: budgetWindow.optional().meta({
    description: 'payouts in one room over a rolling window',
    defaultText: 'none',
  }),
  game: budgetWindow.optional().meta({
    description: 'every payout of the game over a rolling window',
    defaultText: 'none',
  }),
});

const approvalsSchema = z.strictObject({
  aboveMsat: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).meta({
    description: 'a payout of more than this many msats is held',
  }),
  perPlayerPerDayMsat: capMsat.optional().meta({
    description: "a payout taking its player's last 24 hours past this is held too",
    defaultText: 'none',
  }),
});

// The defaults follow ZBD's Earn SDK at about $100,000 a bitcoin (1 sat ≈ $0.001): $0.10 per
// reward trigger, a $0.01 minimum withdrawal, a few dollars a day.
const tabsSchema = z.strictObject({
  maxCreditMsat: capMsat.default(100_000).meta({
    description: 'the largest single credit (`CreditTooLargeError`)',
  }),
  earnPerHourMsat: capMsat.default(1_000_000).meta({
    description: "what one player's credits may add up to over the last hour (`EarningCapError`)",
  }),
  earnPerDayMsat: capMsat.default(5_000_000).meta({
    description: "what one player's credits may add up to over the last day (`EarningCapError`)",
  }),
  minWithdrawalMsat: capMsat.default(10_000).meta({
    description: 'the smallest withdrawal (`WithdrawalTooSmallError`)',
  }),
  withdrawPerDayMsat: capMsat.default(5_000_000).meta({
    description: 'what one player may withdraw over the last day (`WithdrawalCapError`)',
  }),
});

const fiatSchema = z.strictObject({
  currency: z
    .string()
    .refine((c) => c === 'USD', {
      error: (issue) =>
        `must be 'USD': the service publishes the price of a bitcoin in US dollars only (GET /v0/btcusd), not in ${JSON.stringify(issue.input)}`,
    })
    .meta({
      description: "`'USD'`: the service publishes no other (another is a `ConfigurationError`)",
    }),
  refreshMs: ms.default(60_000).meta({ description: 'how often the price is read again' }),
});

const clientAddressSchema = z
  .strictObject({
    proxies: z.number().int().min(0).max(10).default(0).meta({
      description:
        "how many of the game's own proxies append to X-Forwarded-For (1 behind one load balancer): the entry that many from the right is the client; `0`: the socket's peer",
    }),
    header: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, 'must be a header name')
      .transform((h) => h.toLowerCase())
      .refine((h) => h !== 'x-forwarded-for', 'leave it out to read X-Forwarded-For')
      .optional()
      .meta({
        description:
          "a header the game's proxy sets to the client's address (`'x-real-ip'`), read instead of X-Forwarded-For; needs `proxies` of 1 or more",
        defaultText: 'none',
      }),
    proxyAddresses: addresses.default([...PRIVATE_NETWORKS]).meta({
      description:
        "where the game's proxies connect from (addresses or CIDR subnets, 100 at most); with `lightning.attach(server)`, a request through proxies from elsewhere has no address",
      defaultText: 'loopback and the private networks',
    }),
  })
  .refine((c) => c.header === undefined || c.proxies > 0, {
    message: 'header needs proxies of 1 or more: a client sets any header it likes',
    path: ['header'],
  });

const emulatorSchema = z
  .strictObject({
    port: z.number().int().min(0).max(65535).default(0).meta({
      description: "the embedded emulator's port (`0`: a free port)",
    }),
    host: z.string().min(1).default('127.0.0.1').meta({
      description: "its address; one off loopback (`'0.0.0.0'`) is refused unless `allowRemote`",
    }),
    allowRemote: z.boolean().default(false).meta({
      description:
        'let it listen off loopback (a phone on your network); the start line warns where it listens',
    }),
  })
  .superRefine((e, ctx) => {
    if (!e.allowRemote && !isLoopbackHost(e.host)) {
      ctx.addIssue({
        code: 'custom',
        path: ['host'],
        message: remoteHostProblem(e.host, 'Set emulator.allowRemote: true'),
      });
    }
  });

const rateLimitSchema = z
  .strictObject({
    perSecond: z.number().positive().max(100_000).meta({
      description: "attempts per second: at or a little under the service's limit",
    }),
    burst: z.number().min(1).max(1_000_000).optional().meta({
      description: "the bucket's size: a few under the service's burst",
      defaultText: '`perSecond`, at least 1',
    }),
  })
  .transform((r) => ({ perSecond: r.perSecond, burst: r.burst ?? Math.max(1, r.perSecond) }));

const payoutQueueSchema = z.strictObject({
  fromWinners: z.number().int().min(1).default(10).meta({
    description: 'a settle naming at least this many winners queues its payouts',
  }),
});

const callbackSourcesSchema = z.strictObject({
  refreshMs: ms.default(3_600_000).meta({
    description: "how often the service's list of addresses (`GET /v0/prod-ips`) is read again",
  }),
  also: addresses.default([]).meta({
    description: 'more addresses or CIDR subnets to accept (`10.0.0.0/8`)',
  }),
});
export const lightningOptionsSchema = z.strictObject({
  apiKey: z.string().min(1, 'must not be empty').optional().meta({
    description:
      "the service's key; an empty string (`LIGHTNING_API_KEY=` in a `.env`) counts as none; without one an embedded emulator is started (refused when `NODE_ENV=production`)",
    defaultText: 'none: the embedded emulator',
  }),
  baseUrl: httpUrl.optional().meta({
    description: 'where the API is; for an emulator run with the CLI, its printed URL',
    defaultText: "the service's (`https://api.zbdpay.com`), or the embedded emulator's",
  }),
  publicUrl: httpUrl.optional().meta({
    description:
      "origin the service's callbacks reach this server at; https with a real key (http when `baseUrl` is on this machine); checked at start in development",
    defaultText: '`http://127.0.0.1:2567` with the emulator; required with a key',
  }),
  prefix: z
    .string()
    .regex(/^\/[A-Za-z0-9/_-]*[A-Za-z0-9_-]$/, 'must look like /lightning')
    .default('/lightning')
    .meta({ description: 'where the callback and webhook routes live' }),
  ledger: z
    .union([z.string().min(1), z.custom<LedgerStore>(isObject)])
    .optional()
    .meta({
      description:
        'a `LedgerStore` (`SqliteLedger`, or `PostgresLedger` for several processes: [DEPLOY.md](DEPLOY.md#choosing-the-ledger-sqlite-or-postgresql)) or a SQLite path',
      tsType: 'string | LedgerStore',
      defaultText: '`lightning-ledger.sqlite`; `:memory:` with the emulator',
    }),
  webhookSecret: z.string().min(16, 'must be at least 16 characters').optional().meta({
    description: 'HMAC-SHA256 secret of the ramp and widget webhooks (16 characters or more)',
    defaultText: 'none with a real key (webhook routes answer 503); random with the emulator',
  }),
  api: apiTuningSchema.default({}).meta({
    description:
      "the API client's timeouts, retries and paths ([REFERENCE.md](REFERENCE.md#the-api-client))",
  }),
  rateLimit: rateLimitSchema.optional().meta({
    description:
      "one outbound rate for every process of the game, the game's own `lightning.service.api` calls included ([DEPLOY.md](DEPLOY.md#the-outbound-rate))",
    defaultText: 'none',
  }),
  reconciler: reconcilerSchema.prefault({}).meta({
    description:
      're-reads of overdue intents, which recover lost callbacks and crashes ([OPERATING.md](OPERATING.md#recovery))',
  }),
  breaker: breakerSchema.prefault({}).meta({
    description:
      'pauses payouts after `failures` ambiguous or 5xx answers, or before the wallet falls below `walletFloorMsat` (fees, spends and 429s never count): `PayoutsPausedError` (`LN_PAYOUTS_PAUSED`), nothing sent. The `paused` event (once) and `lightning.operator.paused` give `reason`, `cause` (`payouts`, `reads` or `wallet`), `players` and `recipients`; `lightning.operator.resume()` lifts it',
  }),
  audit: auditSchema.prefault({}).meta({
    description:
      'the live audit of the journal and the wallet ([OPERATING.md](OPERATING.md#the-live-audit))',
  }),
  limits: limitsSchema.prefault({}).meta({
    description:
      "open intents, counted across every process; one more rejects with `LimitExceededError` (`LN_LIMIT_EXCEEDED`; `limit` names which, `playerId` whom), nothing recorded or sent. A match's own record does not count; its fees, payouts and refunds do, and a settled match pays its players even at the cap",
  }),
  budgets: budgetsSchema.prefault({}).meta({
    description:
      "payout caps: the payouts (rewards, address payments, tab withdrawals) created in a window, but those that ended expired or failed, may add up to its `msat`, reserved in the ledger with each payout's record, so across processes. Past one: `BudgetExceededError` (`LN_BUDGET_EXCEEDED`; `scope`: `payout` for the single-payout cap, else `player`, `room` or `game`; `limitMsat`, `reservedMsat`), nothing recorded or sent",
  }),
  tabs: tabsSchema.prefault({}).meta({
    description:
      "the earning rules of players' tabs ([MATCHES.md](MATCHES.md#earning-rules-and-what-each-protects-against))",
  }),
  approvals: approvalsSchema.optional().meta({
    description:
      'payouts above a line wait, `held`, for an operator ([OPERATING.md](OPERATING.md#payout-approvals))',
    defaultText: 'off',
  }),
  payoutQueue: payoutQueueSchema.prefault({}).meta({
    description:
      'how a settle with many winners queues its payouts ([MATCHES.md](MATCHES.md#many-winners-the-payout-queue))',
  }),
  emulator: emulatorSchema.prefault({}).meta({
    description: 'the embedded emulator, started when there is no `apiKey`',
  }),
  clientAddress: clientAddressSchema.prefault({}).meta({
    description:
      "who a client is, by address, for `callbackSources` and the region gate: no header is read but the one set here, and only what node's `isIP` accepts counts",
  }),
  fiat: fiatSchema.optional().meta({
    description:
      "read the service's price of a bitcoin (`GET /v0/btcusd`) at start and every `refreshMs` into every room's `state.lightning.price` ([ROOMS.md](ROOMS.md#what-each-client-sees)); a failed read keeps the last price, logged once",
    defaultText: 'off',
  }),
  meterProvider: z
    .custom<MeterProvider>(
      (v) => isObject(v) && typeof (v as MeterProvider).getMeter === 'function',
      'must be an OpenTelemetry MeterProvider',
    )
    .optional()
    .meta({
      description:
        'an OpenTelemetry `MeterProvider` for the metrics ([OPERATING.md](OPERATING.md#metrics))',
      tsType: 'MeterProvider',
      defaultText: 'the global one, as the server starts',
    }),
  alerts: alertsSchema.optional().meta({
    description:
      'the `alert` event for conditions an operator must act on ([OPERATING.md](OPERATING.md#alerts))',
    defaultText: 'off',
  }),
  callbackSources: callbackSourcesSchema.optional().meta({
    description:
      "accept status callbacks only from the service's published addresses and `also` (others: an empty 403, nothing read); the sender is the `clientAddress`",
    defaultText: 'off',
  }),
  startWithoutReadyMs: z.number().int().nonnegative().max(600_000).default(5_000).meta({
    description:
      'a game that mounts the routes or the plugin and never calls `ready()` starts this long after anyway, with a warning outside production; 0: only `ready()` starts it',
  }),
  maxBodyBytes: z
    .number()
    .int()
    .positive()
    .default(64 * 1024)
    .meta({ description: 'largest callback or webhook body (413 beyond)' }),
  logger: z
    .custom<LightningLogger>(
      (v) => isObject(v) && typeof (v as LightningLogger).warn === 'function',
    )
    .default(consoleLogger)
    .meta({
      description:
        '`{ info, warn, error }`: the start line, the set-up check, a listener that threw, strays',
      tsType: 'LightningLogger',
      defaultText: '`console`, with a `[lightning]` prefix',
    }),
  clock: z
    .custom<Clock>((v) => isObject(v) && typeof (v as Clock).now === 'function')
    .default(systemClock)
    .meta({
      description: "the server's time source (`now()`); tests pass the emulator's `ManualClock`",
      tsType: 'Clock',
      defaultText: 'the system clock',
    }),
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
