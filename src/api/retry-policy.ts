/**
 * The retry policy, as one table: for each kind of failure (row) and request (column), whether
 * to send again while attempts remain, and the error the call ends in once they are spent. A
 * request with no idempotency key that may have reached the service is never sent again: a
 * second withdrawal request or payment would move money twice.
 *
 * `connect`: no byte of the request was sent. `429`: refused before processing. `Retry-After`
 * (on 429 or 5xx) is honoured up to a cap; a longer one ends the retries. `keyed`: every
 * attempt carries the same idempotency key, so re-sending an ambiguous one is safe.
 * `ambiguous`: `AmbiguousResultError`; the caller looks before acting again. A call once
 * ambiguous stays so even if its last attempt was only refused (transport.ts).
 */

export type RequestSafety = 'read' | 'keyed' | 'unkeyed';
export type FailureKind = 'connect' | 'rate-limited' | 'server-error' | 'timeout' | 'reset';
/** What a failure means once no retry is left: the error the call ends in. */
export type FinalFailure =
  | 'connection'
  | 'rate-limited'
  | 'service-error'
  | 'timeout'
  | 'ambiguous';

export interface Decision {
  /** Send the request again, if attempts remain. */
  readonly retry: boolean;
  /** What the failure means when it is the last one. */
  readonly final: FinalFailure;
}

type Row = readonly [read: Decision, keyed: Decision, unkeyed: Decision];

const retry = (final: FinalFailure): Decision => Object.freeze({ retry: true, final });
const stop = (final: FinalFailure): Decision => Object.freeze({ retry: false, final });

// retry(x): send again while attempts remain, then end in x; stop(x): end in x at once.
// biome-ignore format: aligned, it reads as a table
const RETRY_POLICY: Readonly<Record<FailureKind, Row>> = {
  //               read (GET)                keyed (deplete)           unkeyed (POST/PATCH)
  connect:        [retry('connection'),      retry('connection'),      retry('connection')],
  'rate-limited': [retry('rate-limited'),    retry('rate-limited'),    retry('rate-limited')],
  'server-error': [retry('service-error'),   retry('ambiguous'),       stop('ambiguous')],
  timeout:        [retry('timeout'),         retry('ambiguous'),       stop('ambiguous')],
  reset:          [retry('connection'),      retry('ambiguous'),       stop('ambiguous')],
};

const COLUMN: Readonly<Record<RequestSafety, 0 | 1 | 2>> = { read: 0, keyed: 1, unkeyed: 2 };

/** The table's cell for this request and this failure. */
export function decide(safety: RequestSafety, kind: FailureKind): Decision {
  return RETRY_POLICY[kind][COLUMN[safety]];
}

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
  retryAfterMs?: number,
  random: () => number = Math.random,
): number | null {
  if (retryAfterMs !== undefined) {
    return retryAfterMs > options.maxRetryAfterMs ? null : retryAfterMs;
  }
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/** Parses `Retry-After` (seconds or an HTTP date) into milliseconds from `now` (epoch ms). */
export function parseRetryAfter(
  value: string | string[] | undefined,
  now: number,
): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text.trim())) return Math.ceil(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
