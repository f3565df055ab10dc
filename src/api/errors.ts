/**
 * The client's branch of the error tree (errors.ts at the package root): every failure of a
 * call that reached the network is a `PaymentsApiError`, which adds the `method`, `path` and
 * number of `attempts`. A bad argument is an `InvalidArgumentError` beside this branch: nothing
 * was sent. No error carries the API key: messages and causes are built from scrubbed text.
 */
import { LightningError, type LightningErrorCode, type LightningErrorOptions } from '../errors.js';

export { InvalidArgumentError, LightningError, type LightningErrorCode } from '../errors.js';

export interface ErrorDetails extends LightningErrorOptions {
  method?: string | undefined;
  path?: string | undefined;
  /** How many attempts were made before giving up. */
  attempts?: number | undefined;
  /** The service's id for the answer (`x-request-id` or `request-id`), when it sent one. */
  requestId?: string | undefined;
  /** The last answer's headers (lower-case names; no cookies), when there was an answer. */
  headers?: Readonly<Record<string, string>> | undefined;
}

export class PaymentsApiError extends LightningError {
  static override readonly code: LightningErrorCode = 'LN_API_ERROR';
  readonly method: string | undefined;
  readonly path: string | undefined;
  readonly attempts: number | undefined;
  /** The service's id for its answer (`x-request-id`), to quote to its support. */
  readonly requestId: string | undefined;
  /** The last answer's headers, as the service sent them (set-cookie left out). */
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(message: string, details: ErrorDetails = {}) {
    super(message, details);
    this.method = details.method;
    this.path = details.path;
    this.attempts = details.attempts;
    this.requestId = details.requestId;
    this.headers = details.headers;
  }
}

/** 401: the key is missing, unknown or revoked. */
export class AuthenticationError extends PaymentsApiError {
  static override readonly code: LightningErrorCode = 'LN_AUTHENTICATION';
}

/** 403: the key may not do this (scope, region, disclosure interface, IP allowlist). */
export class PermissionError extends PaymentsApiError {
  static override readonly code: LightningErrorCode = 'LN_PERMISSION';
}

/** 404: no such resource for this project. */
export class NotFoundError extends PaymentsApiError {
  static override readonly code: LightningErrorCode = 'LN_NOT_FOUND';
}

/** 400, 409 or 422: the service refused the request as it stands. */
export class InvalidRequestError extends PaymentsApiError {
  static override readonly code: LightningErrorCode = 'LN_INVALID_REQUEST';
}

/** TX3017: the widget user's point balance does not cover the debit; nothing was debited. */
export class InsufficientPointsError extends InvalidRequestError {
  static override readonly code: LightningErrorCode = 'LN_INSUFFICIENT_POINTS';
}

/** 429 that outlasted the retries (or asked for a longer wait than the client allows). */
export class RateLimitError extends PaymentsApiError {
  static override readonly code: LightningErrorCode = 'LN_RATE_LIMITED';
  static override readonly retryable: boolean = true;
  /** What the service asked for in `Retry-After`, in milliseconds, when it said. */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, details: ErrorDetails & { retryAfterMs?: number | undefined }) {
    super(message, details);
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** 5xx on a request that is safe to repeat, after the retries. */
export class ServiceError extends PaymentsApiError {
  static override readonly code: LightningErrorCode = 'LN_SERVICE_ERROR';
  static override readonly retryable: boolean = true;
}

/** The request never reached the service, or (a read) the connection dropped: safe to repeat. */
export class ConnectionError extends PaymentsApiError {
  static override readonly code: LightningErrorCode = 'LN_CONNECTION';
  static override readonly retryable: boolean = true;
}

/** A read got no answer in time, after the retries. */
export class TimeoutError extends PaymentsApiError {
  static override readonly code: LightningErrorCode = 'LN_TIMEOUT';
  static override readonly retryable: boolean = true;
}

/**
 * The request may have been processed: it was sent, then the answer was lost or was a 5xx.
 * Unkeyed, a second send could move money twice, so `retryable` is false: look the resource up
 * first. Keyed (deplete), `retryable` is true and `idempotencyKey` is the key to re-send with.
 */
export class AmbiguousResultError extends PaymentsApiError {
  static override readonly code: LightningErrorCode = 'LN_AMBIGUOUS_RESULT';
  readonly idempotencyKey: string | undefined;
  constructor(message: string, details: ErrorDetails & { idempotencyKey?: string | undefined }) {
    // Only the key makes a second send safe, whatever the caller asked for.
    super(message, { ...details, retryable: details.idempotencyKey !== undefined });
    this.idempotencyKey = details.idempotencyKey;
  }
}

/** A success status whose body is not what the contract says. */
export class UnexpectedResponseError extends PaymentsApiError {
  static override readonly code: LightningErrorCode = 'LN_UNEXPECTED_RESPONSE';
}
