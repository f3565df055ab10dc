/**
 * The game's one outbound rate: a token bucket (its tokens, the time they were counted at, and
 * a hold until which nobody calls: a 429's Retry-After). PostgreSQL keeps one bucket for every
 * process in one statement; SQLite keeps it in process (each process of a machine draws its
 * own). A shared bucket counts time by its store's clock (clock_timestamp()), never a caller's:
 * one process whose clock is ahead would otherwise stamp the bucket in everyone's future.
 * `takeFrom` and `holdBucket` are the rule, which the SQL statement repeats.
 */

import { InvalidIntentError } from './errors.js';

export interface RateLimit {
  /** Calls per second, on average: the bucket's refill. */
  perSecond: number;
  /** Calls at once after a quiet spell: the bucket's size (at least 1). */
  burst: number;
}

export interface RateStore {
  /**
   * Takes one call's token from the game's bucket: 0 when it is taken, else
   * how many ms to wait before asking again (nothing taken): until the next token, or until
   * the end of a hold. A fresh bucket is full. With `keep` (a whole number under `burst`,
   * default 0), the token is taken only if `keep` more remain: a call of low priority leaves
   * the last tokens to those that matter more, in every process. `now` is the caller's clock
   * (epoch ms): the in-process bucket counts by it; a shared one by its store's own clock.
   */
  takeToken(limit: RateLimit, now: number, keep?: number): Promise<number>;
  /**
   * No token is handed out before `until` (epoch ms on the caller's clock, read as `now`: a
   * shared store holds for `until - now` by its own clock), in any process sharing the store,
   * and the bucket starts empty from then (the service's own bucket was empty when it said
   * 429). An earlier hold than the one in force changes nothing.
   */
  holdCalls(until: number, now?: number): Promise<void>;
}

/** The bucket's state as every store keeps it. */
export interface Bucket {
  tokens: number;
  /** When `tokens` was counted (epoch ms). */
  at: number;
  /** No token before this (epoch ms); 0 when none. */
  hold: number;
}

/** A fresh bucket: full, counted at the start of time, no hold. */
export function freshBucket(limit: RateLimit): Bucket {
  return { tokens: limit.burst, at: 0, hold: 0 };
}

/**
 * The rule: refill for the time since `at` (never past `burst`, never for time going back),
 * then take one token unless a hold runs or fewer than 1 + `keep` are there. Changes `bucket`;
 * answers 0 or the wait in whole ms (at least 1).
 */
export function takeFrom(bucket: Bucket, limit: RateLimit, now: number, keep = 0): number {
  if (now > bucket.at) {
    bucket.tokens = Math.min(
      limit.burst,
      bucket.tokens + ((now - bucket.at) * limit.perSecond) / 1000,
    );
    bucket.at = now;
  }
  bucket.tokens = Math.min(limit.burst, bucket.tokens);
  if (now < bucket.hold) return bucket.hold - now;
  if (bucket.tokens >= 1 + keep) {
    bucket.tokens -= 1;
    return 0;
  }
  return Math.max(1, Math.ceil(((1 + keep - bucket.tokens) * 1000) / limit.perSecond));
}

/** The hold: the later one wins, and the bucket is empty from its end. */
export function holdBucket(bucket: Bucket, until: number): void {
  if (until <= bucket.hold) return;
  bucket.hold = until;
  bucket.tokens = 0;
  bucket.at = Math.max(bucket.at, until);
}

export function parseRateLimit(limit: RateLimit): RateLimit {
  const ok =
    typeof limit === 'object' &&
    limit !== null &&
    typeof limit.perSecond === 'number' &&
    Number.isFinite(limit.perSecond) &&
    limit.perSecond > 0 &&
    typeof limit.burst === 'number' &&
    Number.isFinite(limit.burst) &&
    limit.burst >= 1;
  if (!ok) {
    throw new InvalidIntentError('limit must be { perSecond > 0, burst >= 1 }, finite numbers');
  }
  return { perSecond: limit.perSecond, burst: limit.burst };
}

/** A time as the stores keep them: whole epoch ms, not negative. */
export function parseRateTime(value: number, what: 'now' | 'until'): number {
  if (!(Number.isSafeInteger(value) && value >= 0)) {
    throw new InvalidIntentError(`${what} must be a non-negative whole number of epoch ms`);
  }
  return value;
}

/** How long a hold until `until` lasts from `now` (both checked): 0 for one already over. */
export function holdFor(until: number, now: number): number {
  return Math.max(0, parseRateTime(until, 'until') - parseRateTime(now, 'now'));
}

export function parseTake(limit: RateLimit, now: number, keep: number): RateLimit {
  parseRateTime(now, 'now');
  const parsed = parseRateLimit(limit);
  if (!(Number.isSafeInteger(keep) && keep >= 0 && keep + 1 <= parsed.burst)) {
    throw new InvalidIntentError('keep must be a whole number from 0 to burst - 1');
  }
  return parsed;
}

/**
 * The bucket of a store that keeps it in process (SQLite): one per store instance. Fresh, it is
 * full; `emptyAt` (epoch ms) starts it empty then instead: a process that stands in for a shared
 * bucket it can no longer reach must not add a burst to what the others already spent.
 */
export class LocalRateBucket implements RateStore {
  #bucket: Bucket | null;

  constructor(options: { emptyAt?: number } = {}) {
    const at = options.emptyAt;
    this.#bucket = at === undefined ? null : { tokens: 0, at: parseRateTime(at, 'now'), hold: 0 };
  }

  async takeToken(limit: RateLimit, now: number, keep = 0): Promise<number> {
    const parsed = parseTake(limit, now, keep);
    this.#bucket ??= freshBucket(parsed);
    return takeFrom(this.#bucket, parsed, now, keep);
  }

  async holdCalls(until: number): Promise<void> {
    parseRateTime(until, 'until');
    this.#bucket ??= { tokens: 0, at: 0, hold: 0 };
    holdBucket(this.#bucket, until);
  }
}
