/**
 * What an operator can do from the console, one row per action: its input (zod, the console's
 * edge) and the public method of `Lightning` it calls, which goes through the engine (a
 * compare-and-set, its events, its journal entries). An action is a new row here, and a button
 * in the page (operator/page.ts) that posts to `{path}/api/actions/<name>`.
 *
 * `by` is who `authorize` said the operator is; the methods here take no author yet.
 */
import { z } from 'zod';
import { parseInput } from '../parse.js';
import type { ConsoleHost } from './reads.js';

export interface Action {
  /** Parses the body, calls the method; `did` ends the log line (what was done to what). */
  run(host: ConsoleHost, body: unknown, by: string): Promise<{ result: unknown; did: string }>;
}

const resolveInput = z.strictObject({
  id: z.string().min(1).max(255),
  status: z.enum(['completed', 'expired', 'failed']),
  note: z.string().trim().min(1, 'must say why').max(500),
});

const nothing = z.strictObject({});

export const ACTIONS = {
  /** An `unknown` intent's outcome, as the operator found it at the service. */
  resolve: {
    async run(host, body) {
      const a = parseInput(resolveInput, body, 'body');
      const moved = await host.resolve(a.id, a.status, a.note);
      return {
        result: { id: moved.id, status: moved.status },
        did: `${moved.id} -> ${moved.status}`,
      };
    },
  },
  /** Lifts the breaker's pause of payouts. */
  resume: {
    async run(host, body) {
      parseInput(nothing, body, 'body');
      const was = host.paused();
      host.resume();
      return { result: { resumed: was !== null }, did: was ? 'payouts' : '(nothing was paused)' };
    },
  },
} as const satisfies Record<string, Action>;

export type ActionName = keyof typeof ACTIONS;
