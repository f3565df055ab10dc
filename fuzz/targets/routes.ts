/**
 * The route targets: the callback route and the two webhook routes, over real HTTP to the game
 * server. Every request is one that must be refused: a token the ledger does not hold, a
 * forged or missing signature, a signed body that is not a webhook, a signed webhook of the other
 * route's types, an oversized body, a header past its cap, a method the route does not take.
 * Each must answer 4xx, and record, send and emit nothing.
 */
import fc from 'fast-check';
import { signBody } from '../../src/server/webhook-signature.js';
import { type FuzzEnvironment, WEBHOOK_SECRET } from '../environment.js';
import { describe, type Outcome, type Target } from '../harness.js';

interface HttpInput {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

/** Characters a raw path may hold (undici refuses the rest before sending). */
const pathChar = fc.mapToConstant({
  num: 0x7e - 0x21 + 1,
  build: (i) => String.fromCharCode(0x21 + i),
});
const base64urlChar = fc.constantFrom(
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.split(''),
);
/** Printable ASCII: what a header value may hold. */
const headerChar = fc.mapToConstant({
  num: 0x7e - 0x20 + 1,
  build: (i) => String.fromCharCode(0x20 + i),
});
const headerText = (max: number) => fc.string({ unit: headerChar, maxLength: max });
const hex = (length: number) =>
  fc.string({
    unit: fc.constantFrom(...'0123456789abcdef'.split('')),
    minLength: length,
    maxLength: length,
  });

/** Over the routes' default cap of 64 KiB. */
const OVERSIZED = Buffer.alloc(64 * 1024 + 1, 'a');

const body: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? 'null')) },
  { weight: 3, arbitrary: fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary' }).map((s) => Buffer.from(s)) },
  {
    weight: 2,
    arbitrary: fc
      .record({ type: fc.string(), data: fc.jsonValue() }, { requiredKeys: [] })
      .map((v) => Buffer.from(JSON.stringify(v))),
  },
  { weight: 1, arbitrary: fc.constant(OVERSIZED) },
  { weight: 1, arbitrary: fc.constant(Buffer.alloc(0)) },
);

/** Methods the routes do not take (OPTIONS is left out: a CORS preflight may rightly pass). */
const method = fc.oneof(
  { weight: 6, arbitrary: fc.constant('POST') },
  { weight: 1, arbitrary: fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE') },
);

const contentType: fc.Arbitrary<Record<string, string>> = fc.constantFrom<Record<string, string>>(
  { 'content-type': 'application/json' },
  { 'content-type': 'text/plain' },
  {},
);

/**
 * Whether `raw` is a webhook as the contract describes one: a JSON object whose `type` is a
 * string of 1 to 200 characters. Written from the contract, apart from the package's code.
 */
function isWebhookShape(raw: Buffer): boolean {
  try {
    const value = JSON.parse(raw.toString('utf8')) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
    const type = (value as { type?: unknown }).type;
    return typeof type === 'string' && type.length >= 1 && type.length <= 200;
  } catch {
    return false;
  }
}

async function send(env: FuzzEnvironment, input: HttpInput): Promise<Outcome> {
  try {
    const res = await env.routes.request({
      method: input.method,
      path: input.path,
      headers: input.headers,
      body: input.method === 'POST' ? input.body : undefined,
    });
    await res.body.dump();
    if (res.statusCode >= 400 && res.statusCode < 500) return { label: String(res.statusCode) };
    return { problem: `answered ${res.statusCode}` };
  } catch (err) {
    return { problem: `the request failed: ${describe(err)}` };
  }
}

export function routeTargets(env: FuzzEnvironment): Target[] {
  const token = fc.oneof(
    // Shaped like ours, but the ledger holds none of them.
    fc.string({ unit: base64urlChar, minLength: 32, maxLength: 32 }),
    fc.string({ unit: base64urlChar, maxLength: 64 }),
    fc.string({ unit: 'grapheme', maxLength: 64 }).map(encodeURIComponent),
    fc.string({ unit: pathChar, maxLength: 64 }),
    fc.constantFrom('', '.', '..', '%2e%2e', '%00', '%zz', '%', 'a%2Fb', '..%2F..%2Fx'),
  );
  const callback: Target<HttpInput> = {
    name: 'route /callbacks/:token',
    inputs: fc
      .record({ method, token, body, type: contentType })
      .map(({ method, token, body, type }) => ({
        method,
        path: `/lightning/callbacks/${token}`,
        headers: type,
        body,
      })),
    attempt: (input) => send(env, input),
  };

  const signature = (raw: Buffer) =>
    fc.oneof(
      fc.constant(undefined),
      hex(64),
      hex(64).map((h) => `sha256=${h}`),
      fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('base64')),
      headerText(600),
      // The right signature of a body that is not a webhook, in each accepted form.
      fc.constantFrom(
        signBody(WEBHOOK_SECRET, raw),
        `sha256=${signBody(WEBHOOK_SECRET, raw)}`,
        Buffer.from(signBody(WEBHOOK_SECRET, raw), 'hex').toString('base64'),
      ),
    );
  // A signed webhook of the other route's types: `ramp.*` belongs to the ramp route, every
  // other type to the widget route.
  const misrouted = (source: 'ramp' | 'widget') =>
    fc
      .record({
        method: fc.constant('POST'),
        body: fc
          .record({
            type:
              source === 'widget'
                ? fc.string({ maxLength: 100 }).map((t) => `ramp.${t}`)
                : fc.string({ minLength: 1, maxLength: 200 }).filter((t) => !t.startsWith('ramp.')),
            data: fc.jsonValue(),
          })
          .map((v) => Buffer.from(JSON.stringify(v))),
        type: contentType,
        eventId: fc.option(headerText(100), { nil: undefined }),
      })
      .chain((r) => fc.constantFrom(...signedForms(r.body)).map((sig) => ({ ...r, sig })));
  const webhook = (source: 'ramp' | 'widget'): Target<HttpInput> => ({
    name: `route /webhooks/${source}`,
    inputs: fc
      .oneof(
        {
          weight: 9,
          arbitrary: fc
            .record({
              method,
              body,
              type: contentType,
              eventId: fc.option(headerText(600), { nil: undefined }),
            })
            .chain((r) => signature(r.body).map((sig) => ({ ...r, sig })))
            // A correctly signed webhook is a real one: only signed bodies that are not webhooks.
            .filter(
              (r) => !(isWebhookShape(r.body) && signedForms(r.body).includes(r.sig as string)),
            ),
        },
        { weight: 1, arbitrary: misrouted(source) },
      )
      .map(({ method, body, type, eventId, sig }) => ({
        method,
        path: `/lightning/webhooks/${source}`,
        headers: {
          ...type,
          ...(sig === undefined ? {} : { 'x-zbd-signature': sig }),
          ...(eventId === undefined ? {} : { 'x-zbd-event-id': eventId }),
        },
        body,
      })),
    attempt: (input) => send(env, input),
  });

  return [callback, webhook('ramp'), webhook('widget')];
}

function signedForms(raw: Buffer): string[] {
  const hexSig = signBody(WEBHOOK_SECRET, raw);
  return [hexSig, `sha256=${hexSig}`, Buffer.from(hexSig, 'hex').toString('base64')];
}
