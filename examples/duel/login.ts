/**
 * Who a duel player is, signed in as the README's game signs them in: `POST /login` with a name
 * answers a token this server signed, and the room's static onAuth (as @colyseus/auth's JWT
 * check) verifies it, so `client.auth.id` is the player's name, never a join option. A name is
 * all it checks: a game with accounts checks them here instead. Set DUEL_AUTH_SECRET so that
 * tokens outlive a restart. Costs one HMAC per token issued or verified.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createEndpoint } from '@colyseus/core';
import { z } from 'zod';

const body = z.object({
  name: z
    .string()
    .trim()
    .regex(/^[\p{L}\p{N} _-]{1,20}$/u),
});

export class DuelLogin {
  readonly #secret: Buffer;

  constructor(secret = process.env.DUEL_AUTH_SECRET) {
    this.#secret = secret ? Buffer.from(secret) : randomBytes(32);
  }

  #mac(id: string): Buffer {
    return createHmac('sha256', this.#secret).update(id).digest();
  }

  issue(id: string): string {
    return `${Buffer.from(id).toString('base64url')}.${this.#mac(id).toString('base64url')}`;
  }

  /** The player's id in a token this server issued; throws for anything else (join refused). */
  verify(token: unknown): string {
    const [encoded = '', mac = ''] = typeof token === 'string' ? token.split('.') : [];
    const id = Buffer.from(encoded, 'base64url').toString();
    const given = Buffer.from(mac, 'base64url');
    const wanted = this.#mac(id);
    if (id === '' || given.length !== wanted.length || !timingSafeEqual(given, wanted)) {
      throw new Error('sign in first');
    }
    return id;
  }

  /** `POST /login { name }` -> `{ token }`; a bad name is a 400. */
  endpoints() {
    return {
      duelLogin: createEndpoint('/login', { method: 'POST' }, async (ctx) => {
        const parsed = body.safeParse(ctx.body);
        if (!parsed.success) {
          return Response.json(
            { error: 'a name: 1 to 20 letters, digits, spaces, - or _' },
            { status: 400 },
          );
        }
        return { token: this.issue(parsed.data.name) };
      }),
    };
  }
}
