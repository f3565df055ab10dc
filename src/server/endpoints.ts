/**
 * The HTTP routes the service calls, as Colyseus router endpoints (the `@colyseus/auth`
 * style): spread `lightning.endpoints()` into `createRouter({ ... })`.
 *
 *   POST {prefix}/callbacks/:token   status callbacks of withdrawal requests, charges, payments
 *   POST {prefix}/webhooks/ramp      purchase (ramp) session events
 *   POST {prefix}/webhooks/widget    widget session events
 *
 * Bodies are read raw with a size cap (the routes are open to the internet, and signatures
 * are over the raw bytes). An unknown token gets 404 with an empty body.
 */
import { createHash } from 'node:crypto';
import { createEndpoint } from '@colyseus/core';
import { z } from 'zod';
import { BodyTooLargeError, parseJson, readRawBody } from './body.js';
import type { LightningCore } from './core.js';
import { verifySignature } from './webhook-signature.js';

const webhookBody = z.looseObject({ type: z.string().min(1).max(200), data: z.unknown() });

const empty = (status: number) => new Response(null, { status });

export function lightningEndpoints(core: LightningCore) {
  const { prefix, maxBodyBytes } = core.options;

  const read = async (request: Request | undefined): Promise<Buffer | Response> => {
    if (!request) return empty(400);
    try {
      return await readRawBody(request, maxBodyBytes);
    } catch (err) {
      return empty(err instanceof BodyTooLargeError ? 413 : 400);
    }
  };

  const webhook = (source: 'ramp' | 'widget') =>
    createEndpoint(
      `${prefix}/webhooks/${source}`,
      { method: 'POST', disableBody: true },
      async (ctx) => {
        const raw = await read(ctx.request);
        if (raw instanceof Response) return raw;
        const secret = core.options.webhookSecret;
        const signature = ctx.request?.headers.get('x-zbd-signature') ?? null;
        if (secret !== undefined && !verifySignature(secret, raw, signature)) return empty(401);
        const parsed = webhookBody.safeParse(parseJson(raw));
        if (!parsed.success) return empty(400);
        const id =
          ctx.request?.headers.get('x-zbd-event-id') ??
          createHash('sha256').update(raw).digest('base64url');
        // At-least-once delivery: the same event id is acknowledged, not handled twice.
        if (await core.ledger.recordEvent(`${source}:${id}`, core.now())) {
          core.emit('webhook', {
            source,
            id,
            type: parsed.data.type,
            data: parsed.data.data,
            verified: secret !== undefined,
          });
        }
        return empty(200);
      },
    );

  return {
    lightningCallback: createEndpoint(
      `${prefix}/callbacks/:token`,
      { method: 'POST', disableBody: true },
      async (ctx) => {
        const raw = await read(ctx.request);
        if (raw instanceof Response) return raw;
        const status = await core.handleCallback(String(ctx.params.token), parseJson(raw));
        return empty(status);
      },
    ),
    lightningRampWebhook: webhook('ramp'),
    lightningWidgetWebhook: webhook('widget'),
  };
}
