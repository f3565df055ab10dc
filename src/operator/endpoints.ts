/**
 * The console as Colyseus router endpoints: spread `lightning.operator.console.endpoints({ authorize })` into
 * `createRouter({ ... })`. What they answer is operator/console.ts; this file adapts the
 * router's WHATWG Request and Response to it.
 *
 * Colyseus 0.18's router (better-call's `setResponse`) ends a streamed answer after its first
 * chunk, so through it the CSV exports answer 501 and say to use `lightning.operator.console.attach`;
 * a truncated file that looks whole would be worse than none.
 */
import { createEndpoint } from '@colyseus/core';
import { readRawBody } from '../server/body.js';
import { answerConsole, type ConsoleAnswer, type ConsoleSettings } from './console.js';
import type { ConsoleHost } from './reads.js';

const noRequest = new Request('http://localhost/');

function toResponse(answer: ConsoleAnswer): Response {
  const { body } = answer;
  // The router's answers are whole: streamed bodies never reach it (exportCsv refuses).
  return new Response(typeof body === 'string' ? body : null, {
    status: answer.status,
    headers: answer.headers,
  });
}

export function consoleEndpoints(host: ConsoleHost, settings: ConsoleSettings) {
  const { path } = settings;
  const endpoint = (at: string, method: 'GET' | 'POST') =>
    createEndpoint(
      `${path}${at}`,
      method === 'GET' ? { method } : { method, disableBody: true },
      async (ctx): Promise<Response> => {
        const request = ctx.request ?? noRequest;
        const url = new URL(request.url);
        return toResponse(
          await answerConsole(host, settings, {
            method,
            sub: url.pathname.slice(path.length),
            query: url.searchParams,
            headers: request.headers,
            request: () => request,
            body: (max) => readRawBody(request, max),
            streams: false,
          }),
        );
      },
    );
  return {
    lightningConsolePage: endpoint('', 'GET'),
    lightningConsoleOverview: endpoint('/api/overview', 'GET'),
    lightningConsoleIntents: endpoint('/api/intents', 'GET'),
    lightningConsoleIntent: endpoint('/api/intents/:id', 'GET'),
    lightningConsoleMatches: endpoint('/api/matches', 'GET'),
    lightningConsoleMatch: endpoint('/api/matches/:id', 'GET'),
    lightningConsoleOplog: endpoint('/api/oplog', 'GET'),
    lightningConsoleAction: endpoint('/api/actions/:name', 'POST'),
    lightningConsoleExport: endpoint('/export/:file', 'GET'),
  };
}
