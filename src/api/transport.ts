/**
 * Sends one call to the service: builds the request, runs the attempts the retry policy
 * allows (waiting on the client's clock between them), unwraps the envelope, validates
 * `data`, and turns every failure into one error of the tree in errors.ts: the retry table
 * says what a failure means, this file only builds the error it names. One undici Pool with
 * keep-alive per client; an attempt costs one request, one JSON.parse and one zod parse.
 */
import { type Dispatcher, Pool } from 'undici';
import type { z } from 'zod';
import { type Clock, sleep } from '../clock.js';
import { ConfigurationError } from '../errors.js';
import type { CallPriority, OutboundGate } from '../port/gate.js';
import { VERSION } from '../version.js';
import { type RequestEvent, requestChannel } from './diagnostics.js';
import {
  AmbiguousResultError,
  AuthenticationError,
  ConnectionError,
  type ErrorDetails,
  InsufficientPointsError,
  InvalidRequestError,
  NotFoundError,
  type PaymentsApiError,
  PermissionError,
  RateLimitError,
  ServiceError,
  TimeoutError,
  UnexpectedResponseError,
} from './errors.js';
import {
  type BackoffOptions,
  decide,
  type FailureKind,
  type FinalFailure,
  parseRetryAfter,
  type RequestSafety,
  retryDelay,
} from './retry-policy.js';

export interface TransportOptions {
  apiKey: string;
  /** Other secrets that must never appear in an error (the key always is one). */
  redact?: readonly string[] | undefined;
  baseUrl: string;
  timeoutMs: number;
  connectTimeoutMs: number;
  maxRetries: number;
  backoff: BackoffOptions;
  /** Waits between retries and reads `Retry-After` dates; attempt deadlines stay real. */
  clock: Clock;
  dispatcher?: Dispatcher | undefined;
}

export interface Call<S extends z.ZodType> {
  /** The client method, for diagnostics and messages: `withdrawalRequests.create`. */
  operation: string;
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  body?: unknown;
  safety: RequestSafety;
  /** Where the call waits at an outbound gate, when there is one. */
  priority: CallPriority;
  /** For keyed calls: the key every attempt carries, reported on ambiguous failures. */
  idempotencyKey?: string;
  /** Validates the envelope's `data`. */
  data: S;
  /** This call's limit per attempt, instead of the client's `timeoutMs`. */
  timeoutMs?: number;
  /** This call's retries, instead of the client's `maxRetries`. */
  maxRetries?: number;
}

type AnswerHeaders = Dispatcher.ResponseData['headers'];

/** How one attempt ended, when it did not end with a usable answer or a refusal. */
interface Failure {
  kind: FailureKind;
  status?: number | undefined;
  retryAfterMs?: number;
  message: string;
  cause?: Error;
  /** The answer's headers, when the service answered. */
  headers?: AnswerHeaders;
}

type Outcome =
  | { kind: 'ok'; status: number; text: string; headers: AnswerHeaders }
  | { kind: 'http-error'; status: number; error: PaymentsApiError }
  | Failure;

// biome-ignore format: a table
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** The refusal each status means; any other 4xx is an InvalidRequestError. */
const REFUSALS: Readonly<Record<number, typeof InvalidRequestError>> = {
  401: AuthenticationError,
  403: PermissionError,
  404: NotFoundError,
};

/** Behind a gate, 429s in a row a call waits out (each refused before processing). */
export const GATED_RATE_LIMIT_RETRIES = 10;

const closed = () => new ConfigurationError('PaymentsApi', 'is closed; nothing was sent');

export class Transport {
  /** The key and every other secret to cut out of text the service sent back. */
  readonly #secrets: readonly string[];
  readonly #origin: string;
  readonly #basePath: string;
  readonly #dispatcher: Dispatcher;
  readonly #options: TransportOptions;
  readonly #headers: Record<string, string>;
  #gate: OutboundGate | undefined;
  #closed = false;

  constructor(options: TransportOptions) {
    this.#options = options;
    this.#secrets = [options.apiKey, ...(options.redact ?? [])].filter((s) => s !== '');
    const base = new URL(options.baseUrl);
    this.#origin = base.origin;
    this.#basePath = base.pathname.replace(/\/+$/, '');
    this.#dispatcher =
      options.dispatcher ??
      new Pool(this.#origin, {
        connect: { timeout: options.connectTimeoutMs },
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        keepAliveTimeout: 4_000,
      });
    this.#headers = {
      apikey: options.apiKey,
      accept: 'application/json',
      'user-agent': `colyseus-lightning/${VERSION}`,
    };
  }

  /** Every attempt from now on waits for `gate`, and every 429 is told to it. */
  limitBy(gate: OutboundGate): void {
    this.#gate = gate;
  }

  async send<S extends z.ZodType>(call: Call<S>): Promise<z.output<S>> {
    // Said at once: a closed pool would fail every attempt as a lost connection, and retry.
    if (this.#closed) throw closed();
    const path = this.#basePath + call.path;
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const headers =
      body === undefined ? this.#headers : { ...this.#headers, 'content-type': 'application/json' };
    const { backoff } = this.#options;
    const maxAttempts = (call.maxRetries ?? this.#options.maxRetries) + 1;
    // Once an attempt may have been processed, a later one that was only refused cannot tell
    // whether it was: the call stays ambiguous.
    let mayHaveApplied = false;
    let limitedInARow = 0;
    /** The last attempt's failure: what a call that cannot go on ends in. */
    let last: { failure: Failure; attempt: number } | undefined;
    const gate = this.#gate;

    for (let attempt = 1; ; attempt++) {
      if (gate !== undefined) {
        try {
          await gate.acquire(call.priority);
          if (this.#closed) throw closed();
        } catch (err) {
          // Closed while waiting to send again: an earlier attempt may have been processed,
          // and the call says so rather than "nothing was sent".
          if (mayHaveApplied && last) throw this.#finalError(call, path, last, 'ambiguous');
          throw err;
        }
      }
      const started = performance.now();
      const outcome = await this.#attempt(call, path, headers, body);
      if (requestChannel.hasSubscribers) {
        requestChannel.publish({
          operation: call.operation,
          method: call.method,
          path,
          attempt,
          status: outcome.status,
          durationMs: performance.now() - started,
          outcome: outcome.kind,
        } satisfies RequestEvent);
      }
      if (outcome.kind === 'http-error') throw outcome.error;
      if (outcome.kind === 'ok') return this.#unwrap(call, path, outcome);

      last = { failure: outcome, attempt };
      const decision = decide(call.safety, outcome.kind);
      if (decision.final === 'ambiguous') mayHaveApplied = true;
      if (gate !== undefined && outcome.kind === 'rate-limited') {
        // Refused before processing: the gate holds every call sharing it for the wait asked
        // (capped), and this one waits its turn again, its attempts unspent.
        const waitMs = outcome.retryAfterMs ?? (retryDelay(limitedInARow, backoff) as number);
        await gate.limited(Math.min(waitMs, backoff.maxRetryAfterMs));
        limitedInARow++;
        if (waitMs <= backoff.maxRetryAfterMs && limitedInARow <= GATED_RATE_LIMIT_RETRIES) {
          attempt--;
          continue;
        }
      } else {
        limitedInARow = 0;
      }
      if (decision.retry && attempt < maxAttempts) {
        const delay = retryDelay(attempt - 1, backoff, outcome.retryAfterMs);
        if (delay !== null) {
          await sleep(this.#options.clock, delay);
          continue;
        }
      }
      throw this.#finalError(call, path, last, mayHaveApplied ? 'ambiguous' : decision.final);
    }
  }

  close(): Promise<void> {
    this.#closed = true;
    return this.#options.dispatcher === undefined ? this.#dispatcher.close() : Promise.resolve();
  }

  async #attempt(
    call: Call<z.ZodType>,
    path: string,
    headers: Record<string, string>,
    body: string | undefined,
  ): Promise<Outcome> {
    let status: number;
    let answerHeaders: AnswerHeaders;
    let text: string;
    // undici checks its own timeouts on a coarse tick; one timer per attempt makes
    // `timeoutMs` a precise deadline for the whole answer, headers and body.
    const timeoutMs = call.timeoutMs ?? this.#options.timeoutMs;
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), timeoutMs);
    try {
      const response = await this.#dispatcher.request({
        origin: this.#origin,
        path,
        method: call.method,
        headers,
        body,
        signal: deadline.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      status = response.statusCode;
      answerHeaders = response.headers;
      text = await response.body.text();
    } catch (err) {
      return deadline.signal.aborted
        ? { kind: 'timeout', message: `no answer within ${timeoutMs} ms` }
        : this.#transportFailure(err, timeoutMs);
    } finally {
      clearTimeout(timer);
    }

    if (status >= 200 && status < 300) return { kind: 'ok', status, text, headers: answerHeaders };
    const { message, serviceCode } = this.#errorBody(text, status);
    if (status === 429 || status >= 500) {
      // Retry-After is honoured wherever the service sends it (429, and 503 during upkeep).
      const retryAfterMs = parseRetryAfter(answerHeaders['retry-after'], this.#options.clock.now());
      return {
        kind: status === 429 ? 'rate-limited' : 'server-error',
        status,
        message,
        headers: answerHeaders,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      };
    }
    const details = { status, serviceCode, method: call.method, path };
    const Refusal =
      serviceCode === 'TX3017'
        ? InsufficientPointsError
        : (REFUSALS[status] ?? InvalidRequestError);
    return {
      kind: 'http-error',
      status,
      error: new Refusal(`${call.operation}: ${message}`, {
        ...details,
        ...this.#answerDetails(answerHeaders),
      }),
    };
  }

  #transportFailure(err: unknown, timeoutMs: number): Failure {
    const code = (err as { code?: unknown } | null)?.code;
    const codeText = typeof code === 'string' ? code : '';
    const cause = this.#scrubbedCause(err);
    if (CONNECT_CODES.has(codeText) || /^ERR_(TLS|SSL)/.test(codeText)) {
      const message = `could not connect (${codeText}); the request never reached the service`;
      return { kind: 'connect', message, cause };
    }
    if (TIMEOUT_CODES.has(codeText)) {
      return { kind: 'timeout', message: `no answer within ${timeoutMs} ms`, cause };
    }
    // Anything else (reset, socket closed mid-answer, an unknown fault) may have happened
    // after the request was sent; the policy treats it as possibly processed.
    return { kind: 'reset', message: `connection lost (${codeText || 'unknown'})`, cause };
  }

  /** The error the call ends in: `final` is the retry table's reading of the failure. */
  #finalError(
    call: Call<z.ZodType>,
    path: string,
    { failure, attempt }: { failure: Failure; attempt: number },
    final: FinalFailure,
  ): PaymentsApiError {
    const { status, cause, retryAfterMs } = failure;
    const details: ErrorDetails = { status, method: call.method, path, attempts: attempt, cause };
    Object.assign(details, this.#answerDetails(failure.headers));
    const what = `${call.operation}: ${failure.message}`;
    switch (final) {
      case 'ambiguous': {
        const { idempotencyKey } = call;
        const advice =
          idempotencyKey === undefined
            ? 'it was not sent again. Look the resource up before acting.'
            : 're-send it with the same idempotency key.';
        return new AmbiguousResultError(`${what}; it may have been processed; ${advice}`, {
          ...details,
          idempotencyKey,
        });
      }
      case 'rate-limited':
        return new RateLimitError(`${what}; rate limited`, { ...details, retryAfterMs });
      case 'service-error':
        return new ServiceError(`${what}; service error ${status}`, details);
      case 'timeout':
        return new TimeoutError(what, details);
      case 'connection':
        return new ConnectionError(what, details);
    }
  }

  #unwrap<S extends z.ZodType>(
    call: Call<S>,
    path: string,
    { status, text, headers }: { status: number; text: string; headers: AnswerHeaders },
  ): z.output<S> {
    // Built only for an error: scrubbing every header is work an answer in use does not need.
    const details = () => ({ status, method: call.method, path, ...this.#answerDetails(headers) });
    const fail = (problem: string) =>
      new UnexpectedResponseError(`${call.operation}: ${problem}`, details());
    let envelope: unknown;
    try {
      envelope = JSON.parse(text);
    } catch {
      throw fail('the answer is not JSON');
    }
    if (typeof envelope !== 'object' || envelope === null || !('data' in envelope)) {
      throw fail('the answer has no data');
    }
    if ((envelope as { success?: unknown }).success === false) {
      const { message, serviceCode } = this.#errorBody(text, status);
      throw new InvalidRequestError(`${call.operation}: ${message}`, { ...details(), serviceCode });
    }
    const parsed = call.data.safeParse(envelope.data);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `data.${issue.path.join('.')}` : 'data';
    throw fail(`${where} ${issue?.message ?? 'is malformed'}`);
  }

  /** The service's message and code from an error body, whichever envelope it used. */
  #errorBody(text: string, status: number): { message: string; serviceCode: string | undefined } {
    let message = `HTTP ${status}`;
    let serviceCode: string | undefined;
    try {
      const body = JSON.parse(text) as {
        message?: unknown;
        error?: { code?: unknown; message?: unknown } | string | null;
        code?: unknown;
      };
      const error = typeof body.error === 'object' && body.error !== null ? body.error : undefined;
      const said =
        error?.message ?? body.message ?? (typeof body.error === 'string' ? body.error : undefined);
      if (typeof said === 'string' && said !== '') message = said;
      const code = error?.code ?? body.code;
      // A code is a short token (TX3017): anything else is not one, and may echo what was sent.
      if (typeof code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(code)) {
        serviceCode = this.#scrub(code);
      }
    } catch {
      // Not JSON (a proxy's HTML page, say): the status says enough.
    }
    return { message: this.#scrub(message).slice(0, 500), serviceCode };
  }

  /**
   * What an error quotes of the answer: its request id and headers (scrubbed of every secret,
   * no cookies, each cut at 500 characters, at most 64), built only when an error is.
   */
  #answerDetails(raw: AnswerHeaders | undefined): Pick<ErrorDetails, 'requestId' | 'headers'> {
    if (raw === undefined) return {};
    const headers: Record<string, string> = {};
    let kept = 0;
    for (const [name, value] of Object.entries(raw)) {
      if (value === undefined || name === 'set-cookie' || kept >= 64) continue;
      const text = Array.isArray(value) ? value.join(', ') : String(value);
      headers[name.toLowerCase()] = this.#scrub(text).slice(0, 500);
      kept++;
    }
    const said = headers['x-request-id'] ?? headers['request-id'];
    // An id is a short token: anything else is not one, and is left in `headers` alone.
    const requestId = said !== undefined && /^[\w.:-]{1,128}$/.test(said) ? said : undefined;
    return { requestId, headers: Object.freeze(headers) };
  }

  /** A plain copy of a transport error, so no socket, header or key rides along. */
  #scrubbedCause(err: unknown): Error {
    const source = err instanceof Error ? err : new Error(String(err));
    const copy = new Error(this.#scrub(source.message));
    copy.name = source.name;
    const code = (source as { code?: unknown }).code;
    if (typeof code === 'string') Object.assign(copy, { code });
    return copy;
  }

  #scrub(text: string): string {
    let scrubbed = text;
    for (const secret of this.#secrets) scrubbed = scrubbed.split(secret).join('[redacted]');
    return scrubbed;
  }
}
