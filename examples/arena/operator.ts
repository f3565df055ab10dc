/**
 * The operator's console (`lightning.operator.console`, docs/OPERATING.md), behind one key:
 * `GET /operator?key=<key>` keeps the key in an HttpOnly cookie and opens the console, whose
 * `authorize` checks that cookie. The key is ARENA_OPERATOR_KEY; without it, outside
 * production, a random one for this run (npm start prints the link); in production without it
 * there is no console. A real game puts its own admin sign-in here instead. Costs one
 * comparison per console request.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import { createEndpoint } from '@colyseus/core';
import type { Lightning } from 'colyseus-lightning';

const COOKIE = 'arena-operator';

export interface OperatorKey {
  key: string;
  /** True when made for this run: a development credential, printed by npm start. */
  generated: boolean;
}

/** The operator's key: the configured one, a new one outside production, or none. */
export function operatorKey(env: NodeJS.ProcessEnv = process.env): OperatorKey | undefined {
  if (env.ARENA_OPERATOR_KEY) return { key: env.ARENA_OPERATOR_KEY, generated: false };
  if (env.NODE_ENV === 'production') return undefined;
  return { key: randomBytes(18).toString('base64url'), generated: true };
}

const same = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

function cookieOf(request: Request): string {
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === COOKIE) return decodeURIComponent(value.join('='));
  }
  return '';
}

/** Mounts the console on the server (with its CSV exports); `path` is where it lives. */
export function mountConsole(lightning: Lightning, http: HttpServer, key: string) {
  lightning.operator.console.attach(http, {
    authorize: (request) => same(cookieOf(request), key) && 'operator',
  });
}

/** `GET /operator?key=`: the key kept as a cookie, then the console; a wrong key is a 401. */
export function operatorEndpoints(key: string, consolePath = '/lightning/console') {
  return {
    arenaOperator: createEndpoint('/operator', { method: 'GET' }, async (ctx) => {
      const given = new URL(ctx.request?.url ?? '/', 'http://x').searchParams.get('key') ?? '';
      if (!same(given, key)) return new Response('wrong operator key', { status: 401 });
      return new Response(null, {
        status: 303,
        headers: {
          location: consolePath,
          'set-cookie': `${COOKIE}=${encodeURIComponent(key)}; Path=/; HttpOnly; SameSite=Strict`,
          'cache-control': 'no-store',
        },
      });
    }),
  };
}
