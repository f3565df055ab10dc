/**
 * The game's outbound rate: a token bucket with a hold until which nobody calls (a 429's
 * Retry-After). PostgreSQL keeps one for every process (sql/postgres/rate-take.sql), by its own
 * clock; SQLite keeps it in process, here.
 */
import type { RateLimit, RateStore } from './store.js';
import { parseEpochMs, parseTake } from './validate.js';

export type { RateLimit, RateStore } from './store.js';

interface Bucket {
  tokens: number;
  /** When `tokens` was counted, and no token before `hold` (epoch ms). */
  at: number;
  hold: number;
}

/**
 * A bucket in process: full when fresh, or empty at `emptyAt` (a process standing in for a shared
 * bucket it cannot reach must not add a burst to what the others spent).
 */
export class LocalRateBucket implements RateStore {
  #bucket: Bucket | null;

  constructor(options: { emptyAt?: number } = {}) {
    const at = options.emptyAt;
    this.#bucket = at === undefined ? null : { tokens: 0, at: parseEpochMs(at, 'now'), hold: 0 };
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
    parseEpochMs(until, 'until');
    this.#bucket ??= { tokens: 0, at: 0, hold: 0 };
    const bucket = this.#bucket;
    if (until <= bucket.hold) return;
    bucket.hold = until;
    bucket.tokens = 0;
    bucket.at = Math.max(bucket.at, until);
  }
}
