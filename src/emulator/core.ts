/**
 * What every handler needs, gathered in one object: state, time, callback delivery and the
 * emulator's own address (LNURL codes point back at it). One per running emulator.
 */

import type { Clock } from '../clock.js';
import type { CallbackDispatcher } from './callbacks.js';
import type { Scheduler } from './clock.js';
import type { FaultSet } from './faults.js';
import type { KeyPair } from './invoice-keys.js';
import type { KeyRateLimiter } from './rate-limit.js';
import type { LnAddressRule, Store } from './store.js';
import type { WebhookDelivery } from './webhooks.js';

export interface EmulatorCore {
  readonly store: Store;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly callbacks: CallbackDispatcher;
  readonly faults: FaultSet;
  /** The optional limit per API key: 429 with Retry-After beyond it. */
  readonly rateLimiter: KeyRateLimiter;
  /** Where LNURL codes and widget URLs point; no trailing slash. */
  baseUrl: string;
  /** HS256 secret of session tokens. */
  readonly sessionSecret: string;
  /** The dev wallet's key, new at each start (header x-emulator-key). */
  readonly controlKey: string;
  /** Signs ramp and widget webhooks when set. */
  webhookSecret: string | undefined;
  /** Points (in the project's point currency) each new widget user starts with; 0: none. */
  readonly userPoints: number;
  /** 0: payments complete at once; otherwise they stay `processing` this long. */
  paymentDelayMs: number;
  /** Armed expiry timers by resource id, cancelled when the resource settles. */
  readonly timers: Map<string, () => void>;
  readonly webhookLog: WebhookDelivery[];
  /** The emulator's node key: signs the invoices of LNURL-pay. */
  readonly nodeKey: KeyPair;
  /** The dev wallet's key: signs the invoices it hands to LNURL-withdraw. */
  readonly walletKey: KeyPair;
  /** What `GET /v0/prod-ips` answers: the addresses callbacks come from. */
  prodIps: string[];
  /** What `GET /v0/btcusd` answers, and when it was taken (null: each read's time). */
  btcUsd: { price: number; at: number | null };
  /** Regions that `GET /v0/is-supported-region/{ip}` refuses, by IP; every other IP is supported. */
  readonly unsupported: Map<string, { country: string; region: string }>;
  /** Lightning addresses the control changed, by lower-case address; any other is valid. */
  readonly lnAddresses: Map<string, LnAddressRule>;
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
