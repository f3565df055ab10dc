/**
 * The HTTP routes the service calls, as Colyseus router endpoints (the `@colyseus/auth`
 * style): spread `lightning.endpoints()` into `createRouter({ ... })`.
 *
 *   POST {prefix}/callbacks/:token   status callbacks of withdrawal requests, charges, payments
 *   POST {prefix}/webhooks/ramp      purchase (ramp) session events
 *   POST {prefix}/webhooks/widget    widget session events
 *
 * Bodies are read raw with a size cap (the routes are open to the internet, and signatures
 * are over the raw bytes). An unknown token gets 404 with an empty body. The routes are built
 * before the engine exists (at server definition), and wait for it on the first request.
 */
import { createEndpoint } from '@colyseus/core';
import { BodyTooLargeError, parseJson, readRawBody } from './body.js';
import type { Engine } from './engine.js';
import { receiveWebhook } from './webhooks.js';

export interface RoutesHost {
  prefix: string;
  maxBodyBytes: number;
  /** The engine, once the server is ready. */
  engine(): Promise<Engine>;
}

const empty = (status: number) => new Response(null, { status });

export function lightningEndpoints(host: RoutesHost) {
  const { prefix, maxBodyBytes } = host;

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
        const headers = ctx.request?.headers;
        const status = await receiveWebhook(await host.engine(), {
          source,
          raw,
          signature: headers?.get('x-zbd-signature') ?? null,
          eventId: headers?.get('x-zbd-event-id') ?? null,
        });
        return empty(status);
      },
    );

  return {
    lightningCallback: createEndpoint(
      `${prefix}/callbacks/:token`,
      { method: 'POST', disableBody: true },
      async (ctx) => {
        const raw = await read(ctx.request);
        if (raw instanceof Response) return raw;
        const engine = await host.engine();
        return empty(await engine.handleCallback(String(ctx.params.token), parseJson(raw)));
      },
    ),
    lightningRampWebhook: webhook('ramp'),
    lightningWidgetWebhook: webhook('widget'),
  };
}
