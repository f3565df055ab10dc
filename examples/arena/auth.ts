/**
 * Who a player is in the arena. `POST /auth` hands the browser a JWT (HS256) that the server
 * signs; the room verifies it in `onAuth` and takes the player id from it, never from the join
 * options, so knowing another player's id gets nobody their reward codes.
 *
 * The arena has guest players: a request without a token gets a new id; one that brings a
 * valid token (in `Authorization: Bearer`) gets a fresh token for the same id, so a reload or
 * a reconnect finds its entries again. A studio with accounts issues the token at its login
 * instead and keeps the same `verify`.
 *
 * A new guest is a new player for the game's money limits (a per-player limit bounds one id),
 * so how many one address may make is limited in front of this route (sign-in-limit.ts).
 *
 * Set ARENA_AUTH_SECRET (32 bytes or more) in production: without it each start picks a random
 * secret and every earlier token stops working. Costs one HMAC per token issued or verified.
 */
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createEndpoint } from '@colyseus/core';
import { z } from 'zod';

export interface ArenaAuthOptions {
  /** The HMAC key. Default: ARENA_AUTH_SECRET, else random (tokens die with the process). */
  secret?: string;
  /** How long a token is valid, in seconds. Default 7 days. */
  ttlSeconds?: number;
  /** epoch ms; tests move it. Default Date.now. */
  now?: () => number;
}

const ISSUER = 'lightning-arena';
const header = z.object({ alg: z.literal('HS256'), typ: z.literal('JWT').optional() });
const claims = z.object({
  iss: z.literal(ISSUER),
  sub: z.string().regex(/^[\w-]{8,64}$/),
  iat: z.number().int(),
  exp: z.number().int(),
});
const bearer = z.string().regex(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (part: string): unknown => JSON.parse(Buffer.from(part, 'base64url').toString());

export class NotSignedInError extends Error {
  constructor(why: string) {
    super(`not signed in: ${why}`);
  }
}

export class ArenaAuth {
  readonly #secret: Buffer;
  readonly #ttlSeconds: number;
  readonly #now: () => number;

  constructor(options: ArenaAuthOptions = {}) {
    const secret = options.secret ?? process.env.ARENA_AUTH_SECRET;
    if (secret !== undefined && secret.length < 32) {
      throw new Error('the arena auth secret must be at least 32 characters');
    }
    this.#secret = secret ? Buffer.from(secret) : randomBytes(32);
    this.#ttlSeconds = options.ttlSeconds ?? 7 * 24 * 3600;
    this.#now = options.now ?? Date.now;
  }

  /** A signed token for `playerId` (a new guest id when none is given). */
  issue(playerId: string = randomUUID()): string {
    const iat = Math.floor(this.#now() / 1000);
    const body = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode(
      claims.parse({ iss: ISSUER, sub: playerId, iat, exp: iat + this.#ttlSeconds }),
    )}`;
    return `${body}.${this.#sign(body).toString('base64url')}`;
  }

  /** The player id the token was issued for; throws NotSignedInError for anything else. */
  verify(token: unknown): string {
    if (typeof token !== 'string') throw new NotSignedInError('no token');
    const [head = '', payload = '', mac = '', ...rest] = token.split('.');
    if (rest.length > 0 || !mac) throw new NotSignedInError('not a JWT');
    const given = Buffer.from(mac, 'base64url');
    const expected = this.#sign(`${head}.${payload}`);
    // The signature first: nothing from an unsigned token is even parsed.
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new NotSignedInError('bad signature');
    }
    const parsed = (() => {
      try {
        return { head: header.safeParse(decode(head)), body: claims.safeParse(decode(payload)) };
      } catch {
        return undefined;
      }
    })();
    if (!parsed?.head.success || !parsed.body.success) throw new NotSignedInError('malformed');
    if (parsed.body.data.exp * 1000 <= this.#now()) throw new NotSignedInError('expired');
    return parsed.body.data.sub;
  }

  /**
   * The player an `Authorization` header signs in again (a valid `Bearer` token of ours), or
   * undefined: then `POST /auth` makes a new guest. An expired or foreign token is no error.
   */
  returning(authorization: string | null | undefined): string | undefined {
    const presented = bearer.safeParse(authorization);
    if (!presented.success) return undefined;
    try {
      return this.verify(presented.data.slice('Bearer '.length));
    } catch {
      return undefined;
    }
  }

  /**
   * `POST /auth` -> `{ token }`, as a router endpoint to spread into `createRouter`. The router
   * cannot see the socket: new guests are limited per address in front of it (sign-in-limit.ts).
   */
  endpoints() {
    return {
      arenaSignIn: createEndpoint('/auth', { method: 'POST', disableBody: true }, async (ctx) => {
        const playerId = this.returning(ctx.request?.headers.get('authorization'));
        return Response.json(
          { token: this.issue(playerId) },
          { headers: { 'cache-control': 'no-store' } },
        );
      }),
    };
  }

  #sign(body: string): Buffer {
    return createHmac('sha256', this.#secret).update(body).digest();
  }
}
