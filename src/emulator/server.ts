/**
 * Routing and the request pipeline on plain node:http: log, CORS preflight (LNURL only),
 * injected faults, body, API key or dev wallet key, handler, answer (or a destroyed socket).
 * Every route is in the one table below. `/_emulator/` sends no CORS headers: no other web
 * page may read the dev wallet's answers (reward codes) or call its control routes.
 */

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CONTROL_KEY_HEADER, isControlKey } from './bind.js';
import type { EmulatorCore } from './core.js';
import {
  DEV_WALLET_HTML,
  devClaim,
  devGrantPoints,
  devPay,
  devPayInvoice,
  devSetBtcUsd,
  devState,
} from './dev-wallet.js';
import { errorFor, type Family, v0Ok, WIDGET_ERRORS } from './envelopes.js';
import type { FaultDecision } from './faults.js';
import {
  BodyTooLargeError,
  type Ctx,
  DEFAULT_BODY_LIMIT,
  html,
  InvalidJsonError,
  json,
  Refusal,
  type Reply,
  readJsonBody,
  send,
} from './http.js';
import { sendToLnAddress, validateLnAddress } from './ln-address.js';
import { payCallback, payInfo, withdrawCallback, withdrawInfo } from './lnurl-handlers.js';
import { createPayment, getPayment } from './payments.js';
import type { RequestLog } from './request-log.js';
import { createRampSession, createWidgetSession, sessionPage } from './sessions.js';
import { createStaticCharge, getStaticCharge, updateStaticCharge } from './static-charges.js';
import type { Project } from './store.js';
import { acceptDisclosures, createUser, deplete, updateUser } from './widget-users.js';
import { createWithdrawalRequest, getWithdrawalRequest } from './withdrawals.js';

/**
 * 'key': any key of the project; 'production': a production-scope key; 'control': the dev
 * wallet's key of this start (header x-emulator-key).
 */
type Auth = 'none' | 'key' | 'production' | 'control';

interface Route {
  method: string;
  pattern: string;
  family: Family;
  auth: Auth;
  handle(ctx: Ctx): Reply;
}

const r = (method: string, pattern: string, family: Family, auth: Auth, handle: Route['handle']) =>
  ({ method, pattern, family, auth, handle }) satisfies Route;

const ROUTES: Route[] = [
  r('GET', '/v0/wallet', 'v0', 'key', ({ project }) =>
    v0Ok(
      { unit: 'sats', balance: Math.floor(project.walletMsat / 1000) },
      'Successfully retrieved Wallet.',
    ),
  ),
  r('GET', '/v0/prod-ips', 'v0', 'key', ({ core }) =>
    v0Ok({ ips: [...core.prodIps] }, 'Successfully retrieved IPs.'),
  ),
  r('GET', '/v0/btcusd', 'v0', 'key', ({ core }) =>
    v0Ok(
      {
        // As the service's SDKs type them: text, the time in whole seconds.
        btcUsdPrice: core.btcUsd.price.toFixed(2),
        btcUsdTimestamp: String(Math.floor((core.btcUsd.at ?? core.clock.now()) / 1000)),
      },
      'Successfully retrieved BTC USD price ticker information.',
    ),
  ),
  r('GET', '/v0/is-supported-region/:ip', 'v0', 'key', ({ core, id: ip }) => {
    const refused = core.unsupported.get(ip);
    return v0Ok(
      {
        ipAddress: ip,
        isSupported: refused === undefined,
        ipCountry: refused?.country ?? 'US',
        ipRegion: refused?.region ?? 'CA',
      },
      'Successfully retrieved region support.',
    );
  }),
  r('POST', '/v0/payments', 'v0', 'key', createPayment),
  r('GET', '/v0/payments/:id', 'v0', 'key', getPayment),
  r('POST', '/v0/ln-address/send-payment', 'v0', 'key', sendToLnAddress),
  r('GET', '/v0/ln-address/validate/:address', 'v0', 'key', validateLnAddress),
  r('POST', '/v0/withdrawal-requests', 'v0', 'key', createWithdrawalRequest),
  r('GET', '/v0/withdrawal-requests/:id', 'v0', 'key', getWithdrawalRequest),
  r('POST', '/v0/static-charges', 'v0', 'key', createStaticCharge),
  r('GET', '/v0/static-charges/:id', 'v0', 'key', getStaticCharge),
  r('PATCH', '/v0/static-charges/:id', 'v0', 'key', updateStaticCharge),
  r('POST', '/api/v1/widget/users', 'widget', 'production', createUser),
  r('POST', '/api/v1/widget/users/deplete', 'widget', 'production', deplete),
  r('POST', '/api/v1/widget/users/session', 'widget', 'production', createWidgetSession),
  r('PATCH', '/api/v1/widget/users/:userId', 'widget', 'production', updateUser),
  r('POST', '/api/v1/widget/users/:userId/disclosures', 'widget', 'production', acceptDisclosures),
  r('POST', '/api/v1/ramp-widget', 'widget', 'production', createRampSession),
  r('GET', '/lnurl/withdraw/:id', 'lnurl', 'none', withdrawInfo),
  r('GET', '/lnurl/withdraw/:id/callback', 'lnurl', 'none', withdrawCallback),
  r('GET', '/lnurl/pay/:id', 'lnurl', 'none', payInfo),
  r('GET', '/lnurl/pay/:id/callback', 'lnurl', 'none', payCallback),
  // The page holds no secret: its key comes in the URL's fragment, which no request carries.
  r('GET', '/_emulator/', 'emulator', 'none', () => ({
    ...html(200, DEV_WALLET_HTML),
    headers: { 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY' },
  })),
  r('GET', '/_emulator', 'emulator', 'none', () => ({
    status: 302,
    headers: { location: '/_emulator/' },
  })),
  r('GET', '/_emulator/state', 'emulator', 'control', devState),
  r('POST', '/_emulator/withdrawal-requests/:id/claim', 'emulator', 'control', devClaim),
  r('POST', '/_emulator/static-charges/:id/pay', 'emulator', 'control', devPay),
  r('POST', '/_emulator/pay-invoice', 'emulator', 'control', devPayInvoice),
  r('POST', '/_emulator/btcusd', 'emulator', 'control', devSetBtcUsd),
  r('POST', '/_emulator/users/:id/points', 'emulator', 'control', devGrantPoints),
  r('GET', '/_emulator/widget', 'emulator', 'none', (c) => sessionPage(c.core, 'widget', c.query)),
  r('GET', '/_emulator/ramp', 'emulator', 'none', (c) => sessionPage(c.core, 'ramp', c.query)),
];

/** At most one parameter per path: a handler gets it as `id`. */
const COMPILED = ROUTES.map((route) => ({
  ...route,
  regex: new RegExp(`^${route.pattern.replace(/:\w+/g, '([^/]+)')}$`),
}));

function familyOf(path: string): Family {
  if (path.startsWith('/api/')) return 'widget';
  if (path.startsWith('/lnurl/')) return 'lnurl';
  if (path.startsWith('/_emulator')) return 'emulator';
  return 'v0';
}

/** LNURL only: a web wallet fetches these from its own origin, as from the service. */
const LNURL_CORS_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, OPTIONS',
  'access-control-allow-headers': 'content-type',
  'access-control-max-age': '600',
};

function withCors(reply: Reply): Reply {
  return { ...reply, headers: { ...LNURL_CORS_HEADERS, ...reply.headers } };
}

export interface ServerOptions {
  bodyLimit?: number;
}

export function createRequestHandler(
  core: EmulatorCore,
  log: RequestLog,
  options: ServerOptions = {},
) {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const path = q === -1 ? rawUrl : rawUrl.slice(0, q);
    const logged = log.record(method, path);
    // Every answer carries an id, as the service's do: what a developer quotes to its support.
    res.setHeader('x-request-id', randomUUID());
    const family = familyOf(path);
    const cors = family === 'lnurl';

    if (method === 'OPTIONS' && cors) {
      send(res, withCors({ status: 204 }));
      return;
    }

    const fault = family === 'emulator' ? undefined : core.faults.match(method, path);
    if (fault) {
      if (fault.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, fault.latencyMs));
      if (fault.mode === 'destroy-before-processing') {
        req.socket.destroy();
        return;
      }
      if (fault.mode === 'hang') return; // closed by close(), or by the client giving up
      if (fault.mode === 'status') {
        send(res, faultReply(family, fault));
        return;
      }
    }

    let route: (typeof COMPILED)[number] | undefined;
    let match: RegExpExecArray | null = null;
    let pathKnown = false;
    for (const candidate of COMPILED) {
      const m = candidate.regex.exec(path);
      if (!m) continue;
      pathKnown = true;
      if (candidate.method === method) {
        route = candidate;
        match = m;
        break;
      }
    }
    if (!route || !match) {
      const reply = pathKnown
        ? errorFor(family, 405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}`)
        : errorFor(family, 404, WIDGET_ERRORS.notFound, `No route for ${method} ${path}`);
      send(res, cors ? withCors(reply) : reply);
      return;
    }

    // Before the body: a request without the key costs nothing more.
    if (
      route.auth === 'control' &&
      !isControlKey(req.headers[CONTROL_KEY_HEADER], core.controlKey)
    ) {
      send(
        res,
        json(401, {
          status: 'ERROR',
          reason: `missing or wrong dev wallet key (header ${CONTROL_KEY_HEADER}): open the dev wallet URL this emulator printed at its start`,
        }),
      );
      return;
    }

    // Answers an error in the route's family (v0, widget, lnurl, emulator).
    const refuse = (status: number, code: string, message: string) =>
      send(res, errorFor(route.family, status, code, message));
    let body: unknown;
    if (method === 'POST' || method === 'PATCH' || method === 'PUT') {
      try {
        body = await readJsonBody(req, bodyLimit);
      } catch (error) {
        if (error instanceof BodyTooLargeError) {
          res.setHeader('connection', 'close');
          refuse(413, 'PAYLOAD_TOO_LARGE', error.message);
          return;
        }
        if (error instanceof InvalidJsonError) {
          refuse(400, WIDGET_ERRORS.validation, error.message);
          return;
        }
        throw error;
      }
    }

    let project: Project | undefined;
    if (route.auth !== 'none' && route.auth !== 'control') {
      const header = req.headers.apikey;
      const key = typeof header === 'string' ? core.store.keys.get(header) : undefined;
      if (!key) {
        refuse(401, WIDGET_ERRORS.unauthorized, 'Missing or invalid API key (header apikey)');
        return;
      }
      // Counted per key, before the work: a refused request was never processed.
      const waitMs = core.rateLimiter.take(header as string);
      if (waitMs > 0) {
        log.refused(logged);
        const reply = errorFor(route.family, 429, 'RATE_LIMITED', 'Too many requests');
        // Whole seconds, as HTTP writes a delay, and never 0: the client waits at least that.
        reply.headers = { 'retry-after': String(Math.ceil(waitMs / 1000)) };
        send(res, reply);
        return;
      }
      if (route.auth === 'production' && key.scope !== 'production') {
        refuse(403, WIDGET_ERRORS.forbidden, 'This operation requires a production-scope API key');
        return;
      }
      project = core.store.projects.get(key.projectId);
    }

    const id = match[1] === undefined ? '' : decodeURIComponent(match[1]);
    const query = new URLSearchParams(q === -1 ? '' : rawUrl.slice(q + 1));
    let reply: Reply;
    try {
      reply = route.handle({ core, id, query, body, project: project as Project });
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      reply = errorFor(route.family, error.status, error.code, error.message);
    }
    if (cors) reply = withCors(reply);

    if (fault?.mode === 'process-then-destroy') {
      req.socket.destroy();
      return;
    }
    // Processed, and the answer never comes: the client times out on a request that happened.
    if (fault?.mode === 'process-then-hang') return;
    send(res, reply);
  }

  return (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      send(res, json(500, { success: false, message: `Emulator error: ${message}` }));
    });
  };
}

function faultReply(family: Family, fault: FaultDecision): Reply {
  const message = fault.status === 429 ? 'Too many requests (injected fault)' : 'Injected fault';
  const reply = errorFor(
    family === 'emulator' ? 'v0' : family,
    fault.status,
    'INJECTED_FAULT',
    message,
  );
  if (fault.retryAfter !== undefined) reply.headers = { 'retry-after': String(fault.retryAfter) };
  return reply;
}
