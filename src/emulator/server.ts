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
import {
  type Ctx,
  DEFAULT_BODY_LIMIT,
  errorFor,
  type Family,
  html,
  json,
  Refusal,
  type Reply,
  readJsonBody,
  send,
  v0Ok,
  WIDGET_ERRORS,
} from './http.js';
import { sendToLnAddress, validateLnAddress } from './ln-address.js';
import { createPayment, getPayment } from './payments.js';
import type { LoggedRequest, RequestLog } from './request-log.js';
import { createRampSession, createWidgetSession, sessionPage } from './sessions.js';
import {
  createStaticCharge,
  getStaticCharge,
  payCallback,
  payInfo,
  updateStaticCharge,
} from './static-charges.js';
import type { Project } from './store.js';
import { acceptDisclosures, createUser, deplete, updateUser } from './widget-users.js';
import {
  createWithdrawalRequest,
  getWithdrawalRequest,
  withdrawCallback,
  withdrawInfo,
} from './withdrawals.js';

/**
 * 'key': any key of the project; 'production': a production-scope key; 'control': the dev
 * wallet's key of this start (header x-emulator-key).
 */
type Auth = 'none' | 'key' | 'production' | 'control';

interface Route {
  method: string;
  pattern: string;
  auth: Auth;
  handle(ctx: Ctx): Reply;
}

const r = (method: string, pattern: string, auth: Auth, handle: Route['handle']) =>
  ({ method, pattern, auth, handle }) satisfies Route;

const ROUTES: Route[] = [
  r('GET', '/v0/wallet', 'key', ({ project }) =>
    v0Ok(
      { unit: 'sats', balance: Math.floor(project.walletMsat / 1000) },
      'Successfully retrieved Wallet.',
    ),
  ),
  r('GET', '/v0/prod-ips', 'key', ({ core }) =>
    v0Ok({ ips: [...core.prodIps] }, 'Successfully retrieved IPs.'),
  ),
  r('GET', '/v0/btcusd', 'key', ({ core }) =>
    v0Ok(
      {
        // As the service's SDKs type them: text, the time in whole seconds.
        btcUsdPrice: core.btcUsd.price.toFixed(2),
        btcUsdTimestamp: String(Math.floor((core.btcUsd.at ?? core.clock.now()) / 1000)),
      },
      'Successfully retrieved BTC USD price ticker information.',
    ),
  ),
  r('GET', '/v0/is-supported-region/:ip', 'key', ({ core, id: ip }) => {
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
  r('POST', '/v0/payments', 'key', createPayment),
  r('GET', '/v0/payments/:id', 'key', getPayment),
  r('POST', '/v0/ln-address/send-payment', 'key', sendToLnAddress),
  r('GET', '/v0/ln-address/validate/:address', 'key', validateLnAddress),
  r('POST', '/v0/withdrawal-requests', 'key', createWithdrawalRequest),
  r('GET', '/v0/withdrawal-requests/:id', 'key', getWithdrawalRequest),
  r('POST', '/v0/static-charges', 'key', createStaticCharge),
  r('GET', '/v0/static-charges/:id', 'key', getStaticCharge),
  r('PATCH', '/v0/static-charges/:id', 'key', updateStaticCharge),
  r('POST', '/api/v1/widget/users', 'production', createUser),
  r('POST', '/api/v1/widget/users/deplete', 'production', deplete),
  r('POST', '/api/v1/widget/users/session', 'production', createWidgetSession),
  r('PATCH', '/api/v1/widget/users/:userId', 'production', updateUser),
  r('POST', '/api/v1/widget/users/:userId/disclosures', 'production', acceptDisclosures),
  r('POST', '/api/v1/ramp-widget', 'production', createRampSession),
  r('GET', '/lnurl/withdraw/:id', 'none', withdrawInfo),
  r('GET', '/lnurl/withdraw/:id/callback', 'none', withdrawCallback),
  r('GET', '/lnurl/pay/:id', 'none', payInfo),
  r('GET', '/lnurl/pay/:id/callback', 'none', payCallback),
  // The page holds no secret: its key comes in the URL's fragment, which no request carries.
  r('GET', '/_emulator/', 'none', () => ({
    ...html(200, DEV_WALLET_HTML),
    headers: { 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY' },
  })),
  r('GET', '/_emulator', 'none', () => ({
    status: 302,
    headers: { location: '/_emulator/' },
  })),
  r('GET', '/_emulator/state', 'control', devState),
  r('POST', '/_emulator/withdrawal-requests/:id/claim', 'control', devClaim),
  r('POST', '/_emulator/static-charges/:id/pay', 'control', devPay),
  r('POST', '/_emulator/pay-invoice', 'control', devPayInvoice),
  r('POST', '/_emulator/btcusd', 'control', devSetBtcUsd),
  r('POST', '/_emulator/users/:id/points', 'control', devGrantPoints),
  r('GET', '/_emulator/widget', 'none', (c) => sessionPage(c.core, 'widget', c.query)),
  r('GET', '/_emulator/ramp', 'none', (c) => sessionPage(c.core, 'ramp', c.query)),
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

export function createRequestHandler(
  core: EmulatorCore,
  log: RequestLog,
  options: { bodyLimit?: number } = {},
) {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;

  /** The route's answer; a request refused before its handler ran throws a Refusal. */
  async function run(req: IncomingMessage, path: string, search: string, logged: LoggedRequest) {
    const method = req.method ?? 'GET';
    const found = COMPILED.filter((route) => route.regex.test(path));
    const route = found.find((candidate) => candidate.method === method);
    if (route === undefined) {
      if (found.length > 0) {
        throw new Refusal(405, `${method} is not allowed on ${path}`, 'METHOD_NOT_ALLOWED');
      }
      throw new Refusal(404, `No route for ${method} ${path}`, WIDGET_ERRORS.notFound);
    }
    // Before the body: a request without the key costs nothing more.
    if (
      route.auth === 'control' &&
      !isControlKey(req.headers[CONTROL_KEY_HEADER], core.controlKey)
    ) {
      return json(401, {
        status: 'ERROR',
        reason: `missing or wrong dev wallet key (header ${CONTROL_KEY_HEADER}): open the dev wallet URL this emulator printed at its start`,
      });
    }
    const body = /^(POST|PATCH|PUT)$/.test(method) ? await readJsonBody(req, bodyLimit) : undefined;
    let project: Project | undefined;
    if (route.auth === 'key' || route.auth === 'production') {
      const header = req.headers.apikey;
      const key = typeof header === 'string' ? core.store.keys.get(header) : undefined;
      if (!key) {
        throw new Refusal(
          401,
          'Missing or invalid API key (header apikey)',
          WIDGET_ERRORS.unauthorized,
        );
      }
      // Counted per key, before the work: a refused request was never processed.
      const waitMs = core.rateLimiter.take(key.key);
      if (waitMs > 0) {
        log.refused(logged);
        // Whole seconds, as HTTP writes a delay, and never 0: the client waits at least that.
        const headers = { 'retry-after': String(Math.ceil(waitMs / 1000)) };
        throw new Refusal(429, 'Too many requests', 'RATE_LIMITED', headers);
      }
      if (route.auth === 'production' && key.scope !== 'production') {
        const message = 'This operation requires a production-scope API key';
        throw new Refusal(403, message, WIDGET_ERRORS.forbidden);
      }
      project = core.store.projects.get(key.projectId);
    }
    const param = route.regex.exec(path)?.[1];
    const id = param === undefined ? '' : decodeURIComponent(param);
    const query = new URLSearchParams(search);
    try {
      return route.handle({ core, id, query, body, project: project as Project });
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      return refusal(familyOf(path), error);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const [path = '/', search = ''] = (req.url ?? '/').split(/\?(.*)/s);
    const logged = log.record(method, path);
    // Every answer carries an id, as the service's do: what a developer quotes to its support.
    res.setHeader('x-request-id', randomUUID());
    const family = familyOf(path);
    const answer = (reply: Reply) => send(res, family === 'lnurl' ? withCors(reply) : reply);
    if (method === 'OPTIONS' && family === 'lnurl') return answer({ status: 204 });

    const fault = family === 'emulator' ? undefined : core.faults.match(method, path);
    if (fault) {
      if (fault.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, fault.latencyMs));
      if (fault.mode === 'destroy-before-processing') return void req.socket.destroy();
      if (fault.mode === 'hang') return; // closed by close(), or by the client giving up
      if (fault.mode === 'status') {
        const message =
          fault.status === 429 ? 'Too many requests (injected fault)' : 'Injected fault';
        const headers =
          fault.retryAfter === undefined ? undefined : { 'retry-after': String(fault.retryAfter) };
        return send(
          res,
          refusal(family, new Refusal(fault.status, message, 'INJECTED_FAULT', headers)),
        );
      }
    }
    let reply: Reply;
    try {
      reply = await run(req, path, search, logged);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      return answer(refusal(family, error));
    }
    if (fault?.mode === 'process-then-destroy') return void req.socket.destroy();
    // Processed, and the answer never comes: the client times out on a request that happened.
    if (fault?.mode === 'process-then-hang') return;
    answer(reply);
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

/** A refusal in the envelope of its family (v0, widget, lnurl, emulator). */
function refusal(family: Family, { status, code, message, headers }: Refusal): Reply {
  const reply = errorFor(family, status, code, message);
  return headers === undefined ? reply : { ...reply, headers };
}
