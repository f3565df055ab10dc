/**
 * The HTTP edge: reading a capped JSON body, and writing a reply. Handlers return a plain
 * `Reply` value instead of writing to the response, so that the server can decide at the
 * last moment to answer it or to destroy the connection (fault injection). The service's two
 * answer shapes are here too: `{success, message, data}` on the v0 paths (errors `{success:
 * false, message}`), and `{success, message, data, error}` on the widget interface; which one
 * a route uses is its `family`.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmulatorCore } from './core.js';
import type { Project } from './store.js';

export interface Reply {
  status: number;
  /** Serialized as JSON unless `html` is set. */
  body?: unknown;
  html?: string;
  headers?: Record<string, string>;
}

/** A request as a route's handler gets it. */
export interface Ctx {
  core: EmulatorCore;
  /** The path's one parameter (`:id`, `:ip`, ...), decoded; '' on a route without one. */
  id: string;
  query: URLSearchParams;
  body: unknown;
  /** Set on routes with auth other than 'none'. */
  project: Project;
}

export const DEFAULT_BODY_LIMIT = 64 * 1024;

/** A request refused as it stands: the server answers it in the route's envelope. */
export class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code = 'VALIDATION_ERROR',
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

/** Reads and parses a JSON body; an empty body is `undefined`. */
export function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  // The connection closes after a 413: the rest of the body is not read.
  const tooLarge = () =>
    new Refusal(413, `request body exceeds ${limit} bytes`, 'PAYLOAD_TOO_LARGE', {
      connection: 'close',
    });
  return new Promise((resolve, reject) => {
    if (Number(req.headers['content-length']) > limit) {
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (failed) return;
      if (size === 0) {
        resolve(undefined);
        return;
      }
      try {
        resolve(JSON.parse(Buffer.concat(chunks, size).toString('utf8')));
      } catch {
        reject(new Refusal(400, 'request body is not valid JSON'));
      }
    });
    req.on('error', reject);
  });
}

export function json(status: number, body: unknown): Reply {
  return { status, body };
}

/** An LNURL-style answer (also the dev wallet's): 400 only when it says ERROR. */
export function outcome(result: { status: 'OK' | 'ERROR' }): Reply {
  return json(result.status === 'OK' ? 200 : 400, result);
}

export function failure(reason: string, status = 400): Reply {
  return json(status, { status: 'ERROR', reason });
}

export function html(status: number, text: string): Reply {
  return { status, html: text };
}

export function send(res: ServerResponse, reply: Reply): void {
  const text = reply.html ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
  const headers: Record<string, string | number> = {
    'content-type': reply.html === undefined ? 'application/json' : 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...reply.headers,
  };
  res.writeHead(reply.status, headers);
  res.end(text);
}

export type Family = 'v0' | 'widget' | 'lnurl' | 'emulator';

export function v0Ok(data: unknown, message = 'Success', status = 200): Reply {
  return json(status, { success: true, message, data });
}

export function v0Error(status: number, message: string): Reply {
  return json(status, { success: false, message });
}

export function widgetOk(data: unknown, message = 'Success', status = 200): Reply {
  return json(status, { success: true, message, data, error: null });
}

export function widgetError(status: number, code: string, message: string): Reply {
  return json(status, { success: false, message, data: null, error: { code, message } });
}

/** The error codes this emulator uses on the widget interface (only TX3017 is the service's). */
export const WIDGET_ERRORS = {
  validation: 'VALIDATION_ERROR',
  unauthorized: 'UNAUTHORIZED',
  forbidden: 'FORBIDDEN',
  notFound: 'NOT_FOUND',
  insufficientPoints: 'TX3017',
  idempotencyConflict: 'IDEMPOTENCY_KEY_REUSED',
  emailInUse: 'EMAIL_IN_USE',
} as const;

/** An error in the family's shape; `code` only matters to the widget interface. */
export function errorFor(family: Family, status: number, code: string, message: string): Reply {
  if (family === 'widget') return widgetError(status, code, message);
  if (family === 'lnurl') return json(status, { status: 'ERROR', reason: message });
  return v0Error(status, message);
}
