/**
 * The game's one outbound rate: a token bucket (its tokens, when they were counted, and a hold
 * until which nobody calls: a 429's Retry-After). PostgreSQL keeps one bucket for every process
 * (sql/postgres/rate-take.sql repeats the rule below), by its own clock: one process whose
 * clock is ahead would otherwise stamp the bucket in everyone's future. SQLite keeps it in
 * process (LocalRateBucket).
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
   * Takes one call's token: 0 when taken, else the ms to wait (until the next token or the
   * hold's end). A fresh bucket is full. With `keep` (under `burst`), the token is taken only if
   * `keep` more remain: a call of low priority leaves the last tokens to those that matter more.
   * `now` is the caller's clock; a shared bucket counts by its store's own.
   */
  takeToken(limit: RateLimit, now: number, keep?: number): Promise<number>;
  /**
   * No token before `until` (the caller's clock, read as `now`) in any process sharing the store,
   * and the bucket empty from then (the service's was, when it said 429). An earlier hold than
   * the one in force changes nothing.
   */
  holdCalls(until: number, now?: number): Promise<void>;
}

interface Bucket {
  tokens: number;
  /** When `tokens` was counted, and no token before `hold` (epoch ms). */
  at: number;
  hold: number;
}

/** A time as the stores keep them: whole epoch ms, not negative. */
function parseRateTime(value: number, what: 'now' | 'until'): number {
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
  const { perSecond, burst } = (limit ?? {}) as Partial<RateLimit>;
  if (
    !(typeof perSecond === 'number' && Number.isFinite(perSecond) && perSecond > 0) ||
    !(typeof burst === 'number' && Number.isFinite(burst) && burst >= 1)
  ) {
    throw new InvalidIntentError('limit must be { perSecond > 0, burst >= 1 }, finite numbers');
  }
  if (!(Number.isSafeInteger(keep) && keep >= 0 && keep + 1 <= burst)) {
    throw new InvalidIntentError('keep must be a whole number from 0 to burst - 1');
  }
  return { perSecond, burst };
}

/**
 * The bucket of a store that keeps it in process (SQLite): one per store instance. Fresh, it is
 * full; `emptyAt` (epoch ms) starts it empty then instead: a process standing in for a shared
 * bucket it can no longer reach must not add a burst to what the others already spent.
 */
export class LocalRateBucket implements RateStore {
  #bucket: Bucket | null;

  constructor(options: { emptyAt?: number } = {}) {
    const at = options.emptyAt;
    this.#bucket = at === undefined ? null : { tokens: 0, at: parseRateTime(at, 'now'), hold: 0 };
  }

  /** Refill for the time since `at` (never past `burst`), then take one unless held or short. */
  async takeToken(limit: RateLimit, now: number, keep = 0): Promise<number> {
    const { perSecond, burst } = parseTake(limit, now, keep);
    this.#bucket ??= { tokens: burst, at: 0, hold: 0 };
    const bucket = this.#bucket;
    if (now > bucket.at) {
      bucket.tokens += ((now - bucket.at) * perSecond) / 1000;
      bucket.at = now;
    }
    bucket.tokens = Math.min(burst, bucket.tokens);
    if (now < bucket.hold) return bucket.hold - now;
    if (bucket.tokens >= 1 + keep) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil(((1 + keep - bucket.tokens) * 1000) / perSecond));
  }

  /** The later hold wins, and the bucket is empty from its end. */
  async holdCalls(until: number): Promise<void> {
    parseRateTime(until, 'until');
    this.#bucket ??= { tokens: 0, at: 0, hold: 0 };
    const bucket = this.#bucket;
    if (until <= bucket.hold) return;
    bucket.hold = until;
    bucket.tokens = 0;
    bucket.at = Math.max(bucket.at, until);
  }
}
