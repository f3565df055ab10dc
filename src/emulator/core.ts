/**
 * What every handler needs, gathered in one object: state, time, callback delivery, faults
 * and the emulator's own address (LNURL codes point back at it). One per running emulator.
 */

import { randomBytes } from 'node:crypto';
import { systemClock } from '../clock.js';
import { CallbackDispatcher } from './callbacks.js';
import { Scheduler } from './clock.js';
import { FaultSet } from './faults.js';
import type { EmulatorOptions } from './index.js';
import { generateKeyPair } from './invoice-keys.js';
import { KeyRateLimiter } from './rate-limit.js';
import { type LnAddressRule, Store } from './store.js';
import type { WebhookDelivery } from './webhooks.js';

export type EmulatorCore = ReturnType<typeof createCore>;

export function createCore(
  options: EmulatorOptions,
  btcUsdPrice: number,
  warn: (m: string) => void,
) {
  const clock = options.clock ?? systemClock;
  return {
    store: new Store(),
    clock,
    scheduler: new Scheduler(clock),
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
  };
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Arms (or re-arms) the one timer of a resource. */
export function armTimer(core: EmulatorCore, id: string, at: number, fn: () => void): void {
  core.timers.get(id)?.();
  core.timers.set(
    id,
    core.scheduler.at(at, () => {
      core.timers.delete(id);
      fn();
    }),
  );
}

export function disarmTimer(core: EmulatorCore, id: string): void {
  core.timers.get(id)?.();
  core.timers.delete(id);
}

/** A price `GET /v0/btcusd` can answer: a positive, finite number under 10^15 dollars. */
export function isPrice(price: unknown): price is number {
  return typeof price === 'number' && Number.isFinite(price) && price > 0 && price < 1e15;
}
