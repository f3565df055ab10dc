/**
 * What every handler needs, gathered in one object: state, time, callback delivery, faults
 * and the emulator's own address (LNURL codes point back at it). One per running emulator.
 */

import { randomBytes } from 'node:crypto';
import { type Clock, systemClock, timerAt } from '../clock.js';
import { generateKeyPair } from './bolt11.js';
import { CallbackDispatcher, type CallbackOptions } from './callbacks.js';
import { type FaultRule, FaultSet } from './faults.js';
import { type EmulatorRateLimit, KeyRateLimiter } from './rate-limit.js';
import { type LnAddressRule, type Project, Store } from './store.js';

export type EmulatorCore = ReturnType<typeof createCore>;

/** A webhook of a widget or ramp session, as it was sent and answered. */
export interface WebhookDelivery {
  eventId: string;
  type: string;
  url: string;
  /** The raw body exactly as sent (what the signature covers). */
  body: string;
  headers: Record<string, string>;
  httpStatus: number | null;
  error: string | null;
  ok: boolean;
}

export interface EmulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default '127.0.0.1'. Other than loopback is refused unless `allowRemote` is true. */
  host?: string;
  /** Listen on a `host` other than loopback (a phone on your network). Development only. */
  allowRemote?: boolean;
  /** The address LNURL codes and widget URLs point at (a tunnel). Default `http://host:port`. */
  publicUrl?: string;
  /** Default: the system clock with real timers. A ManualClock drives expiries in tests. */
  clock?: Clock;
  /** Faults active from the start (and again after control.reset()). */
  faults?: FaultRule[];
  /** Callback delivery options from the start (and again after control.reset()). */
  callbacks?: CallbackOptions;
  /** Signs widget and ramp webhooks (X-ZBD-Signature) when set. */
  webhookSecret?: string;
  /** HS256 secret of session tokens; random by default. */
  sessionSecret?: string;
  /** The default project's wallet in msat; default DEFAULT_WALLET_MSAT. */
  walletMsat?: number;
  /** Fixed keys for the default project (e.g. to keep a .env stable); random by default. */
  apiKey?: string;
  sandboxKey?: string;
  /** Points each new widget user starts with (USDZ minor units). Default 0. */
  userPoints?: number;
  /** Keep payments `processing` this long before `completed`; default 0 (at once). */
  paymentDelayMs?: number;
  /** What `GET /v0/btcusd` answers, in US dollars; default DEFAULT_BTC_USD_PRICE. */
  btcUsdPrice?: number;
  /** Where the emulator's few log lines go. Default the console, prefixed `[emulator]`. */
  logger?: { warn(message: string): void };
  /** Largest accepted request body in bytes; default 64 KiB. */
  bodyLimit?: number;
  /**
   * Limit each API key to `perSecond` requests (`burst` at once) as the service does: beyond
   * it, 429 with `Retry-After`, not processed. Default: none.
   */
  rateLimit?: EmulatorRateLimit;
}

export function createCore(
  options: EmulatorOptions,
  btcUsdPrice: number,
  warn: (m: string) => void,
) {
  const clock = options.clock ?? systemClock;
  return {
    store: new Store(),
    clock,
    callbacks: new CallbackDispatcher(options.callbacks, warn),
    faults: new FaultSet(options.faults),
    /** The optional limit per API key: 429 with Retry-After beyond it. */
    rateLimiter: new KeyRateLimiter(clock, options.rateLimit),
    /** Where LNURL codes and widget URLs point; no trailing slash. Set once listening. */
    baseUrl: '',
    /** HS256 secret of session tokens. */
    sessionSecret: options.sessionSecret ?? randomBytes(32).toString('hex'),
    /** The dev wallet's key, new at each start (header x-emulator-key). */
    controlKey: randomBytes(24).toString('base64url'),
    /** Signs ramp and widget webhooks when set. */
    webhookSecret: options.webhookSecret,
    /** Points (in the project's point currency) each new widget user starts with; 0: none. */
    userPoints: options.userPoints ?? 0,
    /** 0: payments complete at once; otherwise they stay `processing` this long. */
    paymentDelayMs: options.paymentDelayMs ?? 0,
    /** Armed expiry timers by resource id, cancelled when the resource settles. */
    timers: new Map<string, () => void>(),
    webhookLog: [] as WebhookDelivery[],
    /** The emulator's node key: signs the invoices of LNURL-pay. */
    nodeKey: generateKeyPair(),
    /** The dev wallet's key: signs the invoices it hands to LNURL-withdraw. */
    walletKey: generateKeyPair(),
    /** What `GET /v0/prod-ips` answers: callbacks leave from this machine. */
    prodIps: ['127.0.0.1', '::1'],
    /** What `GET /v0/btcusd` answers, and when it was taken (null: each read's time). */
    btcUsd: { price: btcUsdPrice, at: null as number | null },
    /** Regions that `GET /v0/is-supported-region/{ip}` refuses, by IP; any other is supported. */
    unsupported: new Map<string, { country: string; region: string }>(),
    /** Lightning addresses the control changed, by lower-case address; any other is valid. */
    lnAddresses: new Map<string, LnAddressRule>(),
    /** The dev wallet page's name of a player (an internalId), as the game told (namePlayers). */
    playerName: ((_internalId: string) => undefined) as (internalId: string) => string | undefined,
  };
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Arms (or re-arms) the one timer of a resource. Expiries are also checked on every read:
 * the timer is what makes their callbacks fire without one.
 */
export function armTimer(core: EmulatorCore, id: string, at: number, fn: () => void): void {
  disarmTimer(core, id);
  core.timers.set(
    id,
    timerAt(core.clock, at, () => {
      core.timers.delete(id);
      fn();
    }),
  );
}

export function disarmTimer(core: EmulatorCore, id: string): void {
  core.timers.get(id)?.();
  core.timers.delete(id);
}

export function disarmAll(core: EmulatorCore): void {
  for (const cancel of core.timers.values()) cancel();
  core.timers.clear();
}

/** The record `id` of `project`; another project's is as unknown as a missing one. */
export function owned<T extends { projectId: string }>(
  records: Map<string, T>,
  project: Project,
  id: string,
): T | undefined {
  const record = records.get(id);
  return record?.projectId === project.id ? record : undefined;
}

/** A price `GET /v0/btcusd` can answer: a positive, finite number under 10^15 dollars. */
export function isPrice(price: unknown): price is number {
  return typeof price === 'number' && Number.isFinite(price) && price > 0 && price < 1e15;
}
