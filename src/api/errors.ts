/**
 * The client's one error tree. Every error is a `PaymentsApiError` with a stable `code` to
 * switch on, the HTTP `status` when there was one, the service's own error code
 * (`serviceCode`, e.g. `TX3017`) when it sent one, and `retryable`: whether sending the
 * same request again is safe and may succeed.
 *
 * No error ever carries the API key: messages and causes are built from scrubbed text only.
 */

export interface ErrorDetails {
  status?: number | undefined;
  serviceCode?: string | undefined;
  method?: string | undefined;
  path?: string | undefined;
  /** How many attempts were made before giving up. */
  attempts?: number | undefined;
  cause?: unknown;
}

export class PaymentsApiError extends Error {
  override name = 'PaymentsApiError';
  readonly code: string = 'PAYMENTS_API_ERROR';
  readonly retryable: boolean = false;
  readonly status: number | undefined;
  readonly serviceCode: string | undefined;
  readonly method: string | undefined;
  readonly path: string | undefined;
  readonly attempts: number | undefined;

  constructor(message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.serviceCode = details.serviceCode;
    this.method = details.method;
    this.path = details.path;
    this.attempts = details.attempts;
  }
}

/** An argument failed validation; nothing was sent. `field` names it (dotted path). */
export class InvalidArgumentError extends PaymentsApiError {
  override name = 'InvalidArgumentError';
  override readonly code = 'INVALID_ARGUMENT';
  readonly field: string;
  constructor(field: string, problem: string) {
    super(`${field || 'argument'}: ${problem}`);
    this.field = field;
  }
}

/** 401: the key is missing, unknown or revoked. */
export class AuthenticationError extends PaymentsApiError {
  override name = 'AuthenticationError';
  override readonly code = 'AUTHENTICATION';
}

/** 403: the key may not do this (scope, region, disclosure interface, IP allowlist). */
export class PermissionError extends PaymentsApiError {
  override name = 'PermissionError';
  override readonly code = 'PERMISSION';
}

/** 404: no such resource for this project. */
export class NotFoundError extends PaymentsApiError {
  override name = 'NotFoundError';
  override readonly code = 'NOT_FOUND';
}

/** 400, 409 or 422: the service refused the request as it stands. */
export class InvalidRequestError extends PaymentsApiError {
  override name = 'InvalidRequestError';
  override readonly code: string = 'INVALID_REQUEST';
}

/** TX3017: the widget user's point balance does not cover the debit; nothing was debited. */
export class InsufficientPointsError extends InvalidRequestError {
  override name = 'InsufficientPointsError';
  override readonly code = 'INSUFFICIENT_POINTS';
}

/** 429 that outlasted the retries (or asked for a longer wait than the client allows). */
export class RateLimitError extends PaymentsApiError {
  override name = 'RateLimitError';
  override readonly code = 'RATE_LIMITED';
  override readonly retryable = true;
  /** What the service asked for in `Retry-After`, in milliseconds, when it said. */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, details: ErrorDetails & { retryAfterMs?: number | undefined }) {
    super(message, details);
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** 5xx on a request that is safe to repeat, after the retries. */
export class ServiceError extends PaymentsApiError {
  override name = 'ServiceError';
  override readonly code = 'SERVICE_ERROR';
  override readonly retryable = true;
}

/**
 * The request never reached the service (connection refused, DNS, connect timeout), or, for
 * a read, the connection dropped before the answer: repeating it is safe.
 */
export class ConnectionError extends PaymentsApiError {
  override name = 'ConnectionError';
  override readonly code = 'CONNECTION';
  override readonly retryable = true;
}

/** A read (or a keyed, idempotent request) got no answer in time, after the retries. */
export class TimeoutError extends PaymentsApiError {
  override name = 'TimeoutError';
  override readonly code = 'TIMEOUT';
  override readonly retryable = true;
}

/**
 * The request may have been processed: it was sent, and then the answer was lost (timeout,
 * connection reset) or was a 5xx. For a request without an idempotency key, sending it
 * again could move money twice, so the client never does, and `retryable` is false: look
 * the resource up (or ask an operator) instead. For a keyed request (deplete) `retryable` is
 * true and `idempotencyKey` is the key to re-send with.
 */
export class AmbiguousResultError extends PaymentsApiError {
  override name = 'AmbiguousResultError';
  override readonly code = 'AMBIGUOUS_RESULT';
  override readonly retryable: boolean;
  readonly idempotencyKey: string | undefined;
  constructor(message: string, details: ErrorDetails & { idempotencyKey?: string | undefined }) {
    super(message, details);
    this.idempotencyKey = details.idempotencyKey;
    this.retryable = details.idempotencyKey !== undefined;
  }
}

/** A success status whose body is not what the contract says. */
export class UnexpectedResponseError extends PaymentsApiError {
  override name = 'UnexpectedResponseError';
  override readonly code = 'UNEXPECTED_RESPONSE';
}
