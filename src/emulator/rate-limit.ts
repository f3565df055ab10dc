/**
 * The emulator's optional rate limit: a token bucket per API key, as a payments service keeps
 * one per key. A request beyond it is answered 429 with `Retry-After` (whole seconds, at least
 * 1, as HTTP writes it) and counted in the request log. Off unless `rateLimit` is given.
 *
 * Footprint: one small record per API key that called (two numbers); a take is a few
 * arithmetic operations on the emulator's clock (a ManualClock refills only when moved).
 */

import type { Clock } from '../clock.js';

export interface EmulatorRateLimit {
  /** Requests per second each API key may make, on average (the bucket's refill). */
  perSecond: number;
  /** Requests a key may make at once after a quiet spell (the bucket's size). Default perSecond. */
  burst?: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** A limit is positive and finite; a burst below one request would refuse everything. */
export function rateLimitProblem(limit: EmulatorRateLimit): string | undefined {
  if (typeof limit !== 'object' || limit === null) return 'must be { perSecond, burst? }';
  const { perSecond, burst } = limit;
  if (typeof perSecond !== 'number' || !Number.isFinite(perSecond) || perSecond <= 0) {
    return 'perSecond must be a positive number';
  }
  if (burst !== undefined && (!Number.isFinite(burst) || burst < 1)) {
    return 'burst must be a number of at least 1';
  }
  return undefined;
}

export class KeyRateLimiter {
  readonly #clock: Clock;
  #limit: Required<EmulatorRateLimit> | null = null;
  readonly #buckets = new Map<string, Bucket>();

  constructor(clock: Clock, limit: EmulatorRateLimit | null | undefined) {
    this.#clock = clock;
    this.set(limit ?? null);
  }

  /** The limit in force, or null when requests are not limited. */
  get limit(): Required<EmulatorRateLimit> | null {
    return this.#limit;
  }

  /** Changes the limit (null: off); every key starts again with a full bucket. */
  set(limit: EmulatorRateLimit | null): void {
    this.#buckets.clear();
    this.#limit =
      limit === null ? null : { perSecond: limit.perSecond, burst: limit.burst ?? limit.perSecond };
  }

  /** 0 when `apiKey` may make a request now (a token is taken), else the ms until it may. */
  take(apiKey: string): number {
    const limit = this.#limit;
    if (limit === null) return 0;
    const now = this.#clock.now();
    const bucket = this.#buckets.get(apiKey) ?? { tokens: limit.burst, at: now };
    if (now > bucket.at) {
      bucket.tokens = Math.min(
        limit.burst,
        bucket.tokens + ((now - bucket.at) * limit.perSecond) / 1000,
      );
      bucket.at = now;
    }
    this.#buckets.set(apiKey, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil(((1 - bucket.tokens) * 1000) / limit.perSecond));
  }
}
