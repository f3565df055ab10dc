/**
 * The routes the service calls as Colyseus router endpoints: spread `lightning.endpoints()` into
 * `createRouter({ ... })`. This file only adapts the router's Request and Response to routes.ts.
 */
import { createEndpoint } from '@colyseus/core';
import { readRawBody } from './body.js';
import {
  answerRoute,
  type LightningRoute,
  type RouteAnswer,
  type RouteRequest,
  type RoutesHost,
} from './routes.js';

export type { RoutesHost } from './routes.js';

const noHeaders = { get: () => null };

/** The router's request as the routes see it: no socket, so no peer. */
function routeRequest(request: Request | undefined): RouteRequest {
  return {
    headers: request?.headers ?? noHeaders,
    peer: null,
    body: (maxBytes) =>
      request ? readRawBody(request, maxBytes) : Promise.reject(new Error('no request')),
  };
}

const response = (answer: RouteAnswer): Response =>
  new Response(null, { status: answer.status, headers: answer.headers });

export function lightningEndpoints(host: RoutesHost) {
  const { prefix } = host;
  const endpoint = (path: string, route: (params: Record<string, string>) => LightningRoute) =>
    createEndpoint(
      path,
      { method: 'POST', disableBody: true },
      async (ctx): Promise<Response> =>
        response(
          await answerRoute(
            host,
            route(ctx.params as Record<string, string>),
            routeRequest(ctx.request),
          ),
        ),
    );

  return {
    lightningCallback: endpoint(`${prefix}/callbacks/:token`, (params) => ({
      kind: 'callback',
      token: String(params.token),
    })),
    lightningRampWebhook: endpoint(`${prefix}/webhooks/ramp`, () => ({
      kind: 'webhook',
      source: 'ramp',
    })),
    lightningWidgetWebhook: endpoint(`${prefix}/webhooks/widget`, () => ({
      kind: 'webhook',
      source: 'widget',
    })),
  };
}
