/**
 * The retry policy, as one table: for each kind of request and each kind of failure, retry
 * or stop. The rule that shapes it: a request that has no idempotency key and may have
 * reached the service is never sent again, because the service could already have created a
 * withdrawal request or sent a payment, and a second one would move money twice.
 *
 * | request                                   | connect | 429   | 5xx       | timeout   | reset     |
 * |-------------------------------------------|---------|-------|-----------|-----------|-----------|
 * | read (GET)                                | retry   | retry | retry     | retry     | retry     |
 * | keyed (deplete, same idempotency_key)     | retry   | retry | retry     | retry     | retry     |
 * | unkeyed (POST/PATCH without a key)        | retry   | retry | ambiguous | ambiguous | ambiguous |
 *
 * `connect`: the connection was never made, so no byte of the request was sent.
 * `429`: the service refused before processing. `Retry-After` (on 429 or 5xx) is honoured up to a cap.
 * `ambiguous`: stop with `AmbiguousResultError`; the caller must look before acting again.
 */

export type RequestSafety = 'read' | 'keyed' | 'unkeyed';
export type FailureKind = 'connect' | 'rate-limited' | 'server-error' | 'timeout' | 'reset';
export type Decision = 'retry' | 'stop' | 'ambiguous';

export const RETRY_POLICY: Readonly<
  Record<RequestSafety, Readonly<Record<FailureKind, Decision>>>
> = {
  read: {
    connect: 'retry',
    'rate-limited': 'retry',
    'server-error': 'retry',
    timeout: 'retry',
    reset: 'retry',
  },
  keyed: {
    connect: 'retry',
    'rate-limited': 'retry',
    'server-error': 'retry',
    timeout: 'retry',
    reset: 'retry',
  },
  unkeyed: {
    connect: 'retry',
    'rate-limited': 'retry',
    'server-error': 'ambiguous',
    timeout: 'ambiguous',
    reset: 'ambiguous',
  },
};

export interface BackoffOptions {
  /** First retry waits up to this long (full jitter), doubling each attempt. */
  baseDelayMs: number;
  /** No computed backoff exceeds this. */
  maxDelayMs: number;
  /** The longest `Retry-After` the client will wait; a longer one ends the retries. */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = {
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 10_000,
};

/**
 * How long to wait before retry number `retry` (0-based), or null when the wait the service
 * asked for is longer than we allow. Full jitter spreads a crowd of clients apart.
 */
export function retryDelay(
  retry: number,
  options: BackoffOptions,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number | null {
  if (retryAfterMs !== undefined) {
    return retryAfterMs > options.maxRetryAfterMs ? null : retryAfterMs;
  }
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/** Parses `Retry-After` (seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(
  value: string | string[] | undefined,
  now = Date.now(),
): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text.trim())) return Math.ceil(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
