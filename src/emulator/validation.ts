/**
 * Request-body checks shared by the routes, in zod, with messages a developer can act on.
 * Amounts are strings of digits in millisatoshis, as the service wants them.
 */

import { z } from 'zod';
import { Refusal } from './http.js';

export const msatString = z
  .string({ error: 'must be a string of digits (millisatoshis)' })
  .regex(/^\d+$/, 'must be a string of digits (millisatoshis)')
  .refine((s) => Number.isSafeInteger(Number(s)), 'is too large');

/** The service calls only HTTPS; the emulator also allows http, because tests run on loopback. */
export const httpUrl = z
  .string()
  .refine((s) => /^https?:$/.test(URL.parse(s)?.protocol ?? ''), 'must be an http(s) URL');

export const isoTimestamp = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO 8601 timestamp');

export const email = z.string().regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'must be an email address');

/** The body as `schema` reads it, or a 400 refusal naming every problem. */
export function parse<T>(schema: z.ZodType<T>, body: unknown, hint = ''): T {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const message = result.error.issues
    .map((issue) => {
      const where = issue.path.map(String).join('.');
      if (issue.code === 'unrecognized_keys') return `unknown field(s): ${issue.keys.join(', ')}`;
      return where ? `${where}: ${issue.message}` : issue.message;
    })
    .join('; ');
  throw new Refusal(400, `${message}${hint}`);
}
