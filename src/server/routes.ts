/**
 * What the lightning routes answer, whichever transport carries the request (the router,
 * endpoints.ts, or the `node:http` listener, listener.ts): `POST {prefix}/callbacks/:token`,
 * `/webhooks/ramp`, `/webhooks/widget`. Every answer is empty. Cost: what the engine does.
 */
import { BodyTooLargeError } from './body.js';
import type { HeaderReader } from './client-address.js';
import type { LightningLogger } from './logger.js';
import { PROBE_HEADER } from './probe.js';
import type { Runtime } from './runtime.js';
import { receiveWebhook } from './webhooks.js';

export interface RoutesHost {
  prefix: string;
  maxBodyBytes: number;
  logger: LightningLogger;
  /** The runtime, once the server is ready. */
  runtime(): Promise<Runtime>;
  /** The runtime at once when it is running (no promise per request). */
  running?(): Runtime | undefined;
  /** The token of this server's set-up probe, answered without the engine. */
  probeToken: string;
  /** Told of each callback's answer (not the probe's), for the metrics. */
  callbackAnswered?(status: number): void;
  /** A websocket upgrade the listener saw: watched, not answered. */
  upgrade?(url: string, headers: HeaderReader, peer: string | null): void;
}

/** Which of the routes a request is for. */
export type LightningRoute =
  | { kind: 'callback'; token: string }
  | { kind: 'webhook'; source: 'ramp' | 'widget' };

/** A request as the routes need it, from either transport. */
export interface RouteRequest {
  headers: HeaderReader;
  /** The socket's remote address; null where the transport hides it (the router). */
  peer: string | null;
  /** The raw body, at most `maxBytes`; rejects with BodyTooLargeError over it. */
  body(maxBytes: number): Promise<Buffer>;
}

/** An empty answer: its status, and the probe's header when it was the probe. */
export interface RouteAnswer {
  status: number;
  headers?: Record<string, string>;
}

const empty = (status: number): RouteAnswer => ({ status });

/** The route of a POST to `pathname` (no query), or null when it is none of ours. */
export function matchRoute(prefix: string, pathname: string): LightningRoute | null {
  if (!pathname.startsWith(prefix)) return null;
  const rest = pathname.slice(prefix.length);
  if (rest.startsWith('/callbacks/')) {
    const token = rest.slice('/callbacks/'.length);
    return token.length > 0 && !token.includes('/') ? { kind: 'callback', token } : null;
  }
  if (rest === '/webhooks/ramp') return { kind: 'webhook', source: 'ramp' };
  if (rest === '/webhooks/widget') return { kind: 'webhook', source: 'widget' };
  return null;
}

/** Answers one request; a failure is one log line and an empty 500 (the reconciler recovers). */
export async function answerRoute(
  host: RoutesHost,
  route: LightningRoute,
  request: RouteRequest,
): Promise<RouteAnswer> {
  const name = route.kind === 'callback' ? 'callback' : `${route.source} webhook`;
  let answer: RouteAnswer;
  try {
    answer =
      route.kind === 'callback'
        ? await answerCallback(host, route.token, request)
        : await answerWebhook(host, route.source, request);
  } catch (err) {
    host.logger.error(`${name} failed: ${(err as Error).message}`);
    answer = empty(500);
  }
  if (route.kind === 'callback' && route.token !== host.probeToken) {
    host.callbackAnswered?.(answer.status);
  }
  return answer;
}

async function answerCallback(
  host: RoutesHost,
  token: string,
  request: RouteRequest,
): Promise<RouteAnswer> {
  if (token === host.probeToken) return { status: 200, headers: { [PROBE_HEADER]: 'ok' } };
  const arrivedAt = performance.now();
  const { engine, sources, metrics } = host.running?.() ?? (await host.runtime());
  // Before the body is read or the ledger touched: a refused sender costs nothing more.
  if (sources && !(await sources.admits(request.headers, request.peer))) {
    return empty(403);
  }
  const raw = await read(host, request);
  if (typeof raw === 'number') return empty(raw);
  const { status, moved } = await engine.handleCallback(token, raw);
  if (moved) metrics.callbackMoved(moved, performance.now() - arrivedAt);
  return empty(status);
}

async function answerWebhook(
  host: RoutesHost,
  source: 'ramp' | 'widget',
  request: RouteRequest,
): Promise<RouteAnswer> {
  const raw = await read(host, request);
  if (typeof raw === 'number') return empty(raw);
  const status = await receiveWebhook((await host.runtime()).engine, {
    source,
    raw,
    signature: request.headers.get('x-zbd-signature'),
    deliveryId: request.headers.get('x-zbd-event-id'),
  });
  return empty(status);
}

/** The body, or the status that refuses it: 413 over the cap, 400 when it could not be read. */
async function read(host: RoutesHost, request: RouteRequest): Promise<Buffer | number> {
  try {
    return await request.body(host.maxBodyBytes);
  } catch (err) {
    return err instanceof BodyTooLargeError ? 413 : 400;
  }
}
