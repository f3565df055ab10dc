/**
 * The console as Colyseus router endpoints, adapting the router's WHATWG Request and Response
 * to operator/console.ts. Colyseus 0.18's router ends a streamed answer after its first chunk,
 * so the CSV exports answer 501 here (use `console.attach`): a cut file that looks whole is
 * worse than none.
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
    lightningConsoleTabs: endpoint('/api/tabs', 'GET'),
    lightningConsoleRefusals: endpoint('/api/refusals', 'GET'),
    lightningConsoleAction: endpoint('/api/actions/:name', 'POST'),
    lightningConsoleExport: endpoint('/export/:file', 'GET'),
  };
}
