/**
 * The HTTP routes the service calls, as Colyseus router endpoints (the `@colyseus/auth`
 * style): spread `lightning.endpoints()` into `createRouter({ ... })`.
 *
 *   POST {prefix}/callbacks/:token   status callbacks of withdrawal requests, charges, payments
 *   POST {prefix}/webhooks/ramp      purchase (ramp) session events
 *   POST {prefix}/webhooks/widget    widget session events
 *
 * Bodies are read raw with a size cap (the routes are open to the internet, and signatures
 * are over the raw bytes). An unknown token gets 404 with an empty body; this server's own
 * set-up probe (server/probe.ts) gets 200 and a header that says it arrived. The routes are built
 * before the engine exists (at server definition), and wait for it on the first request.
 */
import { createEndpoint } from '@colyseus/core';
import { BodyTooLargeError, parseJson, readRawBody } from './body.js';
import type { Engine } from './engine.js';
import type { LightningLogger } from './logger.js';
import { PROBE_HEADER } from './probe.js';
import { receiveWebhook } from './webhooks.js';

export interface RoutesHost {
  prefix: string;
  maxBodyBytes: number;
  logger: LightningLogger;
  /** The engine, once the server is ready. */
  engine(): Promise<Engine>;
  /** The token of this server's set-up probe (server/probe.ts), answered without the engine. */
  probeToken: string;
}

const empty = (status: number) => new Response(null, { status });

/**
 * Runs a route so that it never leaks a stack trace to the internet: an unexpected failure
 * (the ledger unreachable, say) is one log line and an empty 500. The service does not retry
 * callbacks; the reconciler recovers what the failed one would have done.
 */
async function guarded(
  logger: LightningLogger,
  route: string,
  handle: () => Promise<Response>,
): Promise<Response> {
  try {
    return await handle();
  } catch (err) {
    logger.error(`${route} failed: ${(err as Error).message}`);
    return empty(500);
  }
}

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
    createEndpoint(`${prefix}/webhooks/${source}`, { method: 'POST', disableBody: true }, (ctx) =>
      guarded(host.logger, `${source} webhook`, async () => {
        const raw = await read(ctx.request);
        if (raw instanceof Response) return raw;
        const headers = ctx.request?.headers;
        const status = await receiveWebhook(await host.engine(), {
          source,
          raw,
          signature: headers?.get('x-zbd-signature') ?? null,
          deliveryId: headers?.get('x-zbd-event-id') ?? null,
        });
        return empty(status);
      }),
    );

  return {
    lightningCallback: createEndpoint(
      `${prefix}/callbacks/:token`,
      { method: 'POST', disableBody: true },
      (ctx) =>
        guarded(host.logger, 'callback', async () => {
          if (ctx.params.token === host.probeToken) {
            return new Response(null, { status: 200, headers: { [PROBE_HEADER]: 'ok' } });
          }
          const engine = await host.engine();
          // Before the body is read or the ledger touched: a refused sender costs nothing more.
          if (engine.sources && !(await engine.sources.admits(ctx.request?.headers))) {
            return empty(403);
          }
          const raw = await read(ctx.request);
          if (raw instanceof Response) return raw;
          return empty(await engine.handleCallback(String(ctx.params.token), parseJson(raw)));
        }),
    ),
    lightningRampWebhook: webhook('ramp'),
    lightningWidgetWebhook: webhook('widget'),
  };
}
