/**
 * Widget sessions and purchase (ramp) sessions: an HS256 JWT (node:crypto HMAC, secret in
 * control.sessionSecret) valid until expires_at, and a widget_url served by the emulator
 * that carries it. Widget sessions live 1 hour (the docs give no figure), ramp sessions
 * 15 minutes. Webhooks of either kind are fired through control: `{type, data}` POSTed to the
 * session's webhook_url with X-ZBD-Event-Id (unique per event) and X-ZBD-Event-Type, and, when
 * a webhook secret is set, X-ZBD-Signature = hex HMAC-SHA256 of the raw body. The service
 * retries for hours; the emulator sends once and reports what happened.
 */

import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { request } from 'undici';
import { z } from 'zod';
import type { EmulatorCore, WebhookDelivery } from './core.js';
import { type Ctx, html, type Reply, widgetOk } from './http.js';
import type { SessionRecord } from './store.js';
import { email, httpUrl, parse } from './validation.js';
import { findUser } from './widget-users.js';

export const WIDGET_SESSION_TTL_MS = 60 * 60 * 1000;
export const RAMP_SESSION_TTL_MS = 15 * 60 * 1000;

const metadata = z.record(z.string(), z.unknown()).nullish();

/** The fields of a session as its body gives them. */
type Given = Pick<SessionRecord, 'email' | 'referenceId' | 'webhookUrl' | 'metadata'> &
  Partial<SessionRecord>;

const widgetBody: z.ZodType<Given> = z
  .object({
    email: email.nullish(),
    webhook_url: httpUrl.nullish(),
    reference_id: z.string().max(255).nullish(),
    metadata,
    access_token: z.string().min(1).nullish(),
  })
  .refine((b) => b.email || b.access_token, {
    message: 'is required unless access_token is supplied',
    path: ['email'],
  })
  .transform((b) => ({
    email: b.email ?? null,
    referenceId: b.reference_id ?? null,
    webhookUrl: b.webhook_url ?? null,
    metadata: b.metadata ?? null,
    otpSkipped: Boolean(b.access_token),
  }));

const currency = z
  .string()
  .regex(/^[A-Z]{3,5}$/, 'must be a currency code such as USD, EUR or BTC');

const rampBody: z.ZodType<Given> = z
  .object({
    email,
    webhook_url: httpUrl,
    destination: z.string().min(1).nullish(),
    quote_currency: currency.nullish(),
    base_currency: currency.nullish(),
    reference_id: z.string().max(255).nullish(),
    metadata,
  })
  .transform((b) => ({
    email: b.email,
    referenceId: b.reference_id ?? null,
    webhookUrl: b.webhook_url,
    metadata: b.metadata ?? null,
    destination: b.destination ?? null,
    quoteCurrency: b.quote_currency ?? null,
    baseCurrency: b.base_currency ?? null,
  }));

function b64url(value: Buffer | string): string {
  return Buffer.from(value).toString('base64url');
}

export function signJwt(secret: string, payload: Record<string, unknown>): string {
  const input = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(payload))}`;
  return `${input}.${b64url(createHmac('sha256', secret).update(input).digest())}`;
}

/** The payload of a token signed with `secret` and not expired at `now`; null otherwise. */
export function verifyJwt(
  secret: string,
  token: string,
  now: number,
): Record<string, unknown> | null {
  const [header, payload, signature] = token.split('.');
  if (!header || !payload || !signature) return null;
  const expected = createHmac('sha256', secret).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
  if (typeof claims.exp !== 'number' || claims.exp * 1000 <= now) return null;
  return claims;
}

/** The route that makes a session of `kind`: a signed token, and the page that shows it. */
function sessionRoute(kind: SessionRecord['kind'], body: z.ZodType<Given>, ttlMs: number) {
  return (ctx: Ctx): Reply => {
    const { core, project } = ctx;
    const given = parse(body, ctx.body);
    const now = core.clock.now();
    // Whole seconds, so that the JWT's exp and expires_at name the same instant.
    const exp = Math.floor((now + ttlMs) / 1000);
    const session = { ...given, kind, projectId: project.id };
    const userId = session.email ? (findUser(core, project, session.email)?.id ?? null) : null;
    const token = signJwt(core.sessionSecret, {
      iss: 'colyseus-lightning-emulator',
      sub: userId ?? session.email ?? 'anonymous',
      kind,
      project_id: project.id,
      email: session.email,
      reference_id: session.referenceId,
      otp_required: !session.otpSkipped,
      jti: randomUUID(),
      iat: Math.floor(now / 1000),
      exp,
    });
    const record: SessionRecord = {
      ...session,
      userId,
      token,
      createdAt: now,
      expiresAt: exp * 1000,
    };
    core.store.sessions.set(token, record);
    const data = {
      session_token: token,
      expires_at: new Date(record.expiresAt).toISOString(),
      widget_url: `${core.baseUrl}/_emulator/${kind}?session_token=${encodeURIComponent(token)}`,
    };
    return kind === 'ramp'
      ? widgetOk(data, 'Ramp session created')
      : widgetOk(data, 'Widget session created', 201);
  };
}

export const createWidgetSession = sessionRoute('widget', widgetBody, WIDGET_SESSION_TTL_MS);
export const createRampSession = sessionRoute('ramp', rampBody, RAMP_SESSION_TTL_MS);

/** By session token, or else the newest session of the kind with that reference_id. */
export function findSession(core: EmulatorCore, kind: SessionRecord['kind'], target: string) {
  const byToken = core.store.sessions.get(target);
  if (byToken?.kind === kind) return byToken;
  let found: SessionRecord | undefined;
  for (const session of core.store.sessions.values()) {
    if (session.kind === kind && session.referenceId === target) found = session;
  }
  return found;
}

/** What a webhook's `data` says unless the caller says otherwise. */
function defaultData(session: SessionRecord, type: string): Record<string, unknown> {
  const { referenceId: reference_id } = session;
  if (type === 'ramp.purchase.completed') {
    return { amount: '10.00', currency: session.quoteCurrency ?? 'USD', reference_id };
  }
  if (type === 'ramp.kyc.completed') return { user_id: session.userId ?? session.email };
  return { reference_id };
}

export async function fireWebhook(
  core: EmulatorCore,
  kind: SessionRecord['kind'],
  target: string,
  type: string,
  data?: Record<string, unknown>,
): Promise<WebhookDelivery> {
  const session = findSession(core, kind, target);
  if (!session) throw new Error(`no ${kind} session with token or reference_id ${target}`);
  if (!session.webhookUrl) throw new Error(`the ${kind} session has no webhook_url`);
  const defaults =
    kind === 'ramp' ? defaultData(session, type) : { reference_id: session.referenceId };
  const delivery = await sendWebhook(
    session.webhookUrl,
    type,
    { ...defaults, ...data },
    core.webhookSecret,
  );
  core.webhookLog.push(delivery);
  return delivery;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page behind widget_url: enough to see that the token is valid and for whom. */
export function sessionPage(
  core: EmulatorCore,
  kind: SessionRecord['kind'],
  query: URLSearchParams,
): Reply {
  const token = query.get('session_token') ?? '';
  const claims = verifyJwt(core.sessionSecret, token, core.clock.now());
  const title = kind === 'ramp' ? 'Buy Bitcoin (emulated ramp)' : 'Wallet widget (emulated)';
  if (!claims || claims.kind !== kind) {
    return html(401, page(title, '<p class="bad">Invalid or expired session token.</p>'));
  }
  const rows = Object.entries(claims)
    .map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(String(v))}</td></tr>`)
    .join('');
  return html(200, page(title, `<p class="ok">Session valid.</p><table>${rows}</table>`));
}

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>
<style>body{font:15px system-ui;margin:2em}.ok{color:#070}.bad{color:#b00}th{text-align:left;padding-right:1em}</style>
</head><body><h1>${title}</h1>${body}<p><small>colyseus-lightning emulator: for development only.</small></p></body></html>`;
}

export function signWebhook(secret: string, rawBody: string): string {
  return createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex');
}

export async function sendWebhook(
  url: string,
  type: string,
  data: Record<string, unknown>,
  secret: string | undefined,
  eventId: string = randomUUID(),
): Promise<WebhookDelivery> {
  const body = JSON.stringify({ type, data });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-zbd-event-id': eventId,
    'x-zbd-event-type': type,
  };
  if (secret) headers['x-zbd-signature'] = signWebhook(secret, body);
  const delivery: WebhookDelivery = {
    eventId,
    type,
    url,
    body,
    headers,
    httpStatus: null,
    error: null,
    ok: false,
  };
  try {
    const res = await request(url, {
      method: 'POST',
      body,
      headers,
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    await res.body.dump();
    delivery.httpStatus = res.statusCode;
    delivery.ok = res.statusCode >= 200 && res.statusCode < 300;
  } catch (error) {
    delivery.error = error instanceof Error ? error.message : String(error);
  }
  return delivery;
}
