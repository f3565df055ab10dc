/**
 * What an operator can do from the console, one row per action: its input (zod, the console's
 * edge) and the `lightning.operator` call it makes. An action is a row here and a button in the
 * page posting to `{path}/api/actions/<name>`; `by` is who `authorize` said the operator is.
 */
import { z } from 'zod';
import type { OperatorAction } from '../ledger/operator-log.js';
import { parseInput } from '../parse.js';
import { intentIdInput, operatorNote, playerIdInput, resolveStatus } from '../server/operator.js';
import type { ConsoleHost } from './reads.js';

export interface Action {
  /** Parses the body, calls the method; `did` ends the log line (what was done to what). */
  run(host: ConsoleHost, body: unknown, by: string): Promise<{ result: unknown; did: string }>;
}

// The method parses again; the schemas are the server's own, so both edges agree.
const resolveInput = z.strictObject({
  id: intentIdInput,
  status: resolveStatus,
  note: operatorNote,
});
const nothing = z.strictObject({});
const why = z.strictObject({ why: operatorNote });
const intent = z.strictObject({ id: intentIdInput });
const player = z.strictObject({ playerId: playerIdInput });
const intentWhy = z.strictObject({ id: intentIdInput, why: operatorNote });
const playerWhy = z.strictObject({ playerId: playerIdInput, why: operatorNote });

/** What the page is answered for a logged action: the line, as the operator log keeps it. */
const logged = (line: OperatorAction, did: string) => ({ result: line, did });

export const ACTIONS = {
  /** An `unknown` intent's outcome, as the operator found it at the service. */
  resolve: {
    async run(host, body, by) {
      const a = parseInput(resolveInput, body, 'body');
      const moved = await host.operator.resolve(a.id, a.status, a.note, by);
      return {
        result: { id: moved.id, status: moved.status },
        did: `${moved.id} -> ${moved.status}`,
      };
    },
  },
  /** Pauses this process's payouts, with the operator's reason. */
  pause: {
    async run(host, body, by) {
      const a = parseInput(why, body, 'body');
      return logged(await host.operator.pause(by, a.why), 'payouts');
    },
  },
  /** Lifts a pause of payouts, the breaker's or an operator's; refused when none is on. */
  resume: {
    async run(host, body, by) {
      parseInput(nothing, body, 'body');
      return logged(await host.operator.resume(by), 'payouts');
    },
  },
  /** A match's payout or refund that expired unclaimed after it was shown: a new code, once. */
  reissue: {
    async run(host, body, by) {
      const a = parseInput(intent, body, 'body');
      const attempt = await host.operator.reissue(a.id, by);
      return {
        result: { id: a.id, attempt: attempt.id, status: attempt.status },
        did: `${a.id} -> ${attempt.id}`,
      };
    },
  },
  /** A payout the approvals held: sent now. */
  approve: {
    async run(host, body, by) {
      const a = parseInput(intent, body, 'body');
      const sent = await host.operator.approve(a.id, by);
      return { result: { id: sent.id, status: sent.status }, did: `${sent.id} -> ${sent.status}` };
    },
  },
  /** A payout the approvals held: ended failed, never sent (a match's goes to the house). */
  reject: {
    async run(host, body, by) {
      const a = parseInput(intentWhy, body, 'body');
      const ended = await host.operator.reject(a.id, by, a.why);
      return { result: { id: ended.id, status: ended.status }, did: `${ended.id} -> failed` };
    },
  },
  /** Refuses the player's money helpers, in every process, until unblocked. */
  block: {
    async run(host, body, by) {
      const a = parseInput(playerWhy, body, 'body');
      return logged(await host.operator.block(a.playerId, by, a.why), a.playerId);
    },
  },
  unblock: {
    async run(host, body, by) {
      const a = parseInput(player, body, 'body');
      return logged(await host.operator.unblock(a.playerId, by), a.playerId);
    },
  },
} as const satisfies Record<string, Action>;

export type ActionName = keyof typeof ACTIONS;
