/**
 * On the emulator only: `POST /dev-wallet/pay/:id` and `POST /dev-wallet/claim/:id`, what the
 * page's "Pay with dev wallet" and "Claim with dev wallet" buttons call. The emulator's own
 * dev wallet routes answer no other web page (no CORS, a key per start), so the arena's client
 * asks its own server, which acts through the emulator's in-process control: for the signed-in
 * player (the Bearer token of `POST /auth`) and only on that player's own fee or payout, so a
 * page can never pay or claim anyone else's. Costs one token check and one scan of the
 * emulator's lists per press.
 */
import { createEndpoint } from '@colyseus/core';
import type { Emulator } from 'colyseus-lightning/emulator';
import { z } from 'zod';
import type { ArenaAuth } from './auth.js';

const bearer = z.string().regex(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
const target = z.object({
  action: z.enum(['pay', 'claim']),
  id: z.string().regex(/^[\w-]{1,100}$/),
});

const answer = (status: number, body: { status: 'OK' | 'ERROR'; reason?: string }) =>
  Response.json(body, { status, headers: { 'cache-control': 'no-store' } });

export function devWalletEndpoints(emulator: Emulator, auth: ArenaAuth) {
  return {
    arenaDevWallet: createEndpoint(
      '/dev-wallet/:action/:id',
      { method: 'POST', disableBody: true },
      async (ctx) => {
        const presented = bearer.safeParse(ctx.request?.headers.get('authorization'));
        let playerId: string;
        try {
          playerId = auth.verify(presented.success ? presented.data.slice(7) : undefined);
        } catch {
          return answer(401, { status: 'ERROR', reason: 'sign in first' });
        }
        const wanted = target.safeParse(ctx.params);
        if (!wanted.success) return answer(404, { status: 'ERROR', reason: 'no such entry' });
        const { action, id } = wanted.data;
        const { control } = emulator;
        const own =
          action === 'pay'
            ? control.staticCharges().some((c) => c.id === id && c.internalId === playerId)
            : control.withdrawalRequests().some((w) => w.id === id && w.internalId === playerId);
        // Someone else's entry reads as one that does not exist.
        if (!own) return answer(404, { status: 'ERROR', reason: 'no such entry of yours' });
        const result = action === 'pay' ? control.payStaticCharge(id) : control.claimWithdrawal(id);
        return answer(result.status === 'OK' ? 200 : 400, result);
      },
    ),
  };
}
