/**
 * The operator's console (`lightning.operator.console`, docs/OPERATING.md), behind one key:
 * `GET /operator?key=<key>` keeps the key in an HttpOnly cookie and opens the console, whose
 * `authorize` checks that cookie. The key is ARENA_OPERATOR_KEY; without it, outside
 * production, a random one for this run (npm start prints the link); in production without it
 * there is no console. A real game puts its own admin sign-in here instead. The console names
 * players by the names they chose (PlayerNames), not by their ids. Costs one comparison per
 * console request, one map read per row shown.
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

/** The names players chose when they joined, by player id: the newest 10,000. */
export class PlayerNames {
  readonly #names = new Map<string, string>();

  set(playerId: string, name: string): void {
    this.#names.delete(playerId);
    this.#names.set(playerId, name);
    if (this.#names.size > 10_000) {
      for (const oldest of this.#names.keys()) {
        this.#names.delete(oldest);
        break;
      }
    }
  }

  get(playerId: string): string | undefined {
    return this.#names.get(playerId);
  }
}

/** Mounts the console on the server (with its CSV exports), at /lightning/console. */
export function mountConsole(
  lightning: Lightning,
  http: HttpServer,
  key: string,
  names: PlayerNames,
) {
  lightning.operator.console.attach(http, {
    authorize: (request) => same(cookieOf(request), key) && 'operator',
    playerName: (playerId) => names.get(playerId),
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
