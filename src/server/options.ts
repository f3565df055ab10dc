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
      'ambiguous or 5xx answers to payout creates within `windowMs`, from at least `players` different players (and, for payments to addresses, as many address domains), or 5xx answers to reads of at least `players` different intents (the service itself), that pause payouts; `0` never trips',
  }),
  windowMs: ms.default(60_000).meta({ description: 'the window those failures are counted in' }),
  players: z.number().int().min(1).max(1000).default(3).meta({
    description:
      "how many different players (and address domains) those failures must come from: one player (one address server) never pauses the game, their failures count against them alone; `1` counts anyone's",
  }),
  recipientFailures: z.number().int().min(0).default(1).meta({
    description:
      'failed payments to one Lightning address (or checks of it that did not answer) within `windowMs` after which nothing more is sent to it until the window has passed; `0`: never held',
  }),
  validateTimeoutMs: ms.max(600_000).default(3_000).meta({
    description:
      'how long the check of a Lightning address before each payment to it may take (one attempt)',
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
        'raise `cover-low` when cover (wallet - owed - escrow - in flight) falls below this (any integer; 0: only when short)',
      defaultText: 'off',
    }),
  unknownAfterMs: ms.optional().meta({
    description: 'raise `unknown-old` when an intent has been `unknown` this long',
    defaultText: 'off',
  }),
  intervalMs: ms.optional().meta({
    description: 'check this often as well as after each audit run (every `audit.intervalMs`)',
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
      "open intents the whole game may hold, whoever holds them: what bounds a crowd of new players, whom a per-player limit cannot (each is a new id); size it to what your wallet and the service's rate limits should ever have in flight",
  }),
});

/** Budgets are summed exactly up to 2^53 msats (90,000 BTC) in every store. */
const capMsat = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const budgetWindow = z.strictObject({
  msat: capMsat.meta({
    description:
      'the most the payouts created in the window (unless they ended expired or failed) may add up to',
  }),
  windowMs: ms.meta({ description: 'the rolling window, in ms (3,600,000 for an hour)' }),
});

const budgetsSchema = z.strictObject({
  maxRewardMsat: capMsat.optional().meta({
    description:
      "the largest single payout (a reward, a match payout, a payment to a Lightning address); not a tab's withdrawal, which gathers many credits each under `tabs.maxCreditMsat`",
    defaultText: 'none',
  }),
  perPlayer: budgetWindow.optional().meta({
    description: 'payouts (tab withdrawals included) to one player over a rolling window',
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
    description:
      "a payout taking its player's last 24 hours past this is held too (checked in the ledger's atomic create)",
    defaultText: 'none',
  }),
});

// The defaults follow ZBD's Earn SDK at about $100,000 a bitcoin (1 sat ≈ $0.001): $0.10 per
// reward trigger, a $0.01 minimum withdrawal, a few dollars a day.
const tabsSchema = z.strictObject({
  maxCreditMsat: capMsat.default(100_000).meta({
    description: 'the largest single credit (`CreditTooLargeError`): 100 sats',
  }),
  earnPerHourMsat: capMsat.default(1_000_000).meta({
    description:
      "what one player's credits may add up to over the last hour (`EarningCapError`, checked in the ledger with the credit's record, so across processes)",
  }),
  earnPerDayMsat: capMsat.default(5_000_000).meta({
    description:
      "what one player's credits may add up to over the last day (`EarningCapError`, likewise)",
  }),
  minWithdrawalMsat: capMsat.default(10_000).meta({
    description: "the smallest withdrawal (`WithdrawalTooSmallError`): the service's own 10 sats",
  }),
  withdrawPerDayMsat: capMsat.default(5_000_000).meta({
    description:
      'what one player may withdraw over the last day (`WithdrawalCapError`, in the ledger likewise)',
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
      description:
        "`'USD'`, the currency `state.lightning.price` is in: the service publishes USD only, another currency is a `ConfigurationError`",
    }),
  refreshMs: ms.default(60_000).meta({ description: 'how often the price is read again' }),
});

const clientAddressSchema = z
  .strictObject({
    proxies: z.number().int().min(0).max(10).default(0).meta({
      description:
        "how many proxies of the game's own append to X-Forwarded-For (1 behind one load balancer): the entry that many places from the right is the client; `0`: the socket's peer",
    }),
    header: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, 'must be a header name')
      .transform((h) => h.toLowerCase())
      .refine((h) => h !== 'x-forwarded-for', 'leave it out to read X-Forwarded-For')
      .optional()
      .meta({
        description:
          "a header the game's proxy sets to the client's address (`'x-real-ip'`, `'cf-connecting-ip'`), read instead of X-Forwarded-For; only with `proxies` of 1 or more",
        defaultText: 'none',
      }),
    proxyAddresses: addresses.default([...PRIVATE_NETWORKS]).meta({
      description:
        "where the game's proxies connect from (addresses or CIDR subnets, 100 at most): where the socket is known (`lightning.attach(server)`), a request through proxies from elsewhere went around them and has no address",
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
      description: "the embedded emulator's port, when there is no key (`0`: a free port)",
    }),
    host: z.string().min(1).default('127.0.0.1').meta({
      description:
        "the embedded emulator's address; one other than loopback (`'0.0.0.0'`) is refused unless `emulator.allowRemote`",
    }),
    allowRemote: z.boolean().default(false).meta({
      description:
        'let the embedded emulator listen off loopback (a phone on your network); the start line then says where it listens, as a warning',
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
      "origin the service's callbacks reach this server at; https required with a real key (http allowed when `baseUrl` is on this machine); checked at start in development",
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
        'a `LedgerStore` (`SqliteLedger`; `PostgresLedger` for several processes or machines: docs/DEPLOY.md says how to choose) or a SQLite path',
      tsType: 'string | LedgerStore',
      defaultText: '`lightning-ledger.sqlite`; `:memory:` with the emulator',
    }),
  webhookSecret: z.string().min(16, 'must be at least 16 characters').optional().meta({
    description:
      'HMAC-SHA256 secret of the ramp and widget webhooks (16 characters or more); duplicates are found by a hash of the route and the signed body, remembered for good',
    defaultText:
      'none with a real key (webhook routes answer 503, store nothing); random with the emulator',
  }),
  api: apiTuningSchema.default({}).meta({
    description: "the API client's timeouts, retries and path overrides (docs/REFERENCE.md)",
  }),
  rateLimit: rateLimitSchema.optional().meta({
    description:
      "one outbound rate for the whole game. Every attempt to the service, the game's own `lightning.service.api` calls included, waits for a token of one bucket kept in the ledger (shared by every process on a PostgreSQL ledger; per process on SQLite); waiting calls go players first (their own actions: fees, spends, sessions, and the re-read that proves their callback; those who took few tokens lately in the order they waited, those who took many after them), then payouts (a payout after every 3 or 4 players' tokens while both wait), then the reconciler's re-reads; a 429's `Retry-After` holds every process, and a 429 behind it is waited out (up to 10 in a row) instead of failing the call (docs/DEPLOY.md, \"The outbound rate\")",
    defaultText: 'none',
  }),
  reconciler: reconcilerSchema.prefault({}).meta({
    description:
      'polling of overdue intents, which recovers lost callbacks; recovery after a crash (docs/OPERATING.md)',
  }),
  breaker: breakerSchema.prefault({}).meta({
    description:
      'pauses payouts (rewards and payments to Lightning addresses) after `failures` ambiguous or 5xx answers, or before the wallet falls below `walletFloorMsat`. Entry fees and spends never count, nor does a 429. Paused payouts reject with `PayoutsPausedError` (`LN_PAYOUTS_PAUSED`), nothing sent; the `paused` event fires once, and it and `lightning.operator.paused` say why: `reason`, `cause` (`payouts`, `reads` or `wallet`), `players` and `recipients` (the addresses); `lightning.operator.resume()` lifts it. A Lightning address is checked before each payment to it',
  }),
  audit: auditSchema.prefault({}).meta({
    description:
      'the live audit of the journal and the wallet, run by the reconciler (docs/OPERATING.md)',
  }),
  limits: limitsSchema.prefault({}).meta({
    description:
      "limits on open intents, across every process; one more rejects with `LimitExceededError` (`LN_LIMIT_EXCEEDED`; `limit` names which, `playerId` the player refused), nothing recorded or sent. A match's own record does not count (it moves no money by itself); its fees, payouts and refunds do, and a settled match pays its players even at the cap. Each store keeps the count as it writes, so a check reads one number (docs/DEPLOY.md). An entry fee is also one per player and room: a second `chargeEntryFee` while one is open returns the open one (pass `key` to hold one per key, e.g. per match)",
  }),
  budgets: budgetsSchema.prefault({}).meta({
    description:
      "payout caps: payouts (rewards, payments to Lightning addresses, tab withdrawals) created in a rolling window, unless they ended expired or failed, may add up to its `msat`. Checked and reserved in the ledger with the payout's record, so they hold across processes; a reward that expires unclaimed, or a payment that failed, gives its part back. A refusal rejects with `BudgetExceededError` (`LN_BUDGET_EXCEEDED`, with `scope`: `payout` for the single-payout cap, else `player`, `room` or `game`; `limitMsat`, `reservedMsat`), nothing recorded or sent",
  }),
  tabs: tabsSchema.prefault({}).meta({
    description:
      "players' tabs' earning rules (docs/MATCHES.md). Each refusal records and sends nothing and is counted in `lightning.refused`. A withdrawal is a payout: `budgets.perPlayer`/`perRoom`/`game`, the breaker, `approvals` and blocks apply to it; `budgets.maxRewardMsat` does not (it gathers many credits, each under `maxCreditMsat`)",
  }),
  approvals: approvalsSchema.optional().meta({
    description:
      "a reward, match payout, address payment or tab withdrawal above `aboveMsat` (or past the player's 24-hour total) is recorded `held`, nothing sent, until `approve(id, by)` or `reject(id, by, why)`; never a refusal, nor a player's own fee back (docs/OPERATING.md#payout-approvals)",
    defaultText: 'off',
  }),
  payoutQueue: payoutQueueSchema.prefault({}).meta({
    description:
      "a match settled with at least `fromWinners` winners records every payout `queued` at once and returns (the match stays `settling`, its view's `made` of `total` counting, `match.progress` telling); the reconcilers of the game's processes send them in their turn, at `rateLimit` when set (as payouts), else at the reconciler's pace, each exactly once (docs/MATCHES.md, \"Many winners: the payout queue\"). Only where this process runs its reconciler; `rewardMany` always queues",
  }),
  emulator: emulatorSchema.prefault({}).meta({
    description: 'the embedded emulator, started when there is no `apiKey`',
  }),
  clientAddress: clientAddressSchema.prefault({}).meta({
    description:
      "who the client is, by address, for `callbackSources` and the room plugin's `regionGate` alike. No header a client sends is read but the one set here. Only strings node's `isIP` accepts count",
  }),
  fiat: fiatSchema.optional().meta({
    description:
      "read the service's price of a bitcoin in US dollars (`GET /v0/btcusd`) as the server starts and every `refreshMs`; every room syncs it in `state.lightning.price` (`currency`, `btcPrice`: 1 BTC in that currency, 0 until known; `at`: when the service priced it, epoch ms). A failed read keeps the last price and is logged once until a read answers",
    defaultText: "off: `state.lightning.price` has currency `''` and 0",
  }),
  meterProvider: z
    .custom<MeterProvider>(
      (v) => isObject(v) && typeof (v as MeterProvider).getMeter === 'function',
      'must be an OpenTelemetry MeterProvider',
    )
    .optional()
    .meta({
      description:
        "an OpenTelemetry `MeterProvider` for the metrics (docs/OPERATING.md); without an SDK installed, every instrument is the API's no-op",
      tsType: 'MeterProvider',
      defaultText: 'the global one, as the server starts',
    }),
  alerts: alertsSchema.optional().meta({
    description:
      'the `alert` event, raised once and cleared once per condition (cover low, an old unknown, payouts paused, an audit finding, the service answering only 5xx), one log line each, `lightning.operator.alerts()` for the raised ones; checked after each audit run and every `intervalMs` when set (docs/OPERATING.md)',
    defaultText: 'off',
  }),
  callbackSources: callbackSourcesSchema.optional().meta({
    description:
      "accept status callbacks only from the service's published addresses and `also`; others get an empty 403 before anything is read. The sender is the `clientAddress`, so behind proxies the game must be reachable only through them; with no proxy, only `lightning.attach(server)` sees the sender",
    defaultText: 'off',
  }),
  startWithoutReadyMs: ms.max(600_000).default(5_000).meta({
    description:
      'a game that mounts the routes or the plugin and never calls `ready()` starts this long after anyway, with a warning outside production',
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
      description:
        "the time source of the server, its ledger writes and its schedule (`now()`); tests pass the emulator's `ManualClock`",
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
