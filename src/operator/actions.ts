/**
 * What an operator can do from the console, one row per action: its input (zod, the console's
 * edge) and the `lightning.operator` call it makes. An action is a row here and a button in the
 * page posting to `{path}/api/actions/<name>`; `by` is who `authorize` said the operator is.
 */
import { z } from 'zod';
import type { Intent } from '../ledger/intent.js';
import type { OperatorAction } from '../ledger/operator-log.js';
import { parseInput } from '../parse.js';
import { intentIdInput, operatorNote, playerIdInput, resolveStatus } from '../server/operator.js';
import type { ConsoleHost } from './reads.js';

/** `did` ends the log line (what was done to what). */
type Done = { result: unknown; did: string };

export interface Action {
  /** Parses the body, then calls the method. */
  run(host: ConsoleHost, body: unknown, by: string): Promise<Done>;
}

/** An action over the fields `shape` names (the server's own schemas, so both edges agree). */
function action<S extends z.ZodRawShape>(
  shape: S,
  run: (host: ConsoleHost, a: z.output<z.ZodObject<S>>, by: string) => Promise<Done>,
): Action {
  const body = z.strictObject(shape);
  return { run: async (host, input, by) => run(host, parseInput(body, input, 'body'), by) };
}

/** What the page is answered for a logged action: the line, as the operator log keeps it. */
const logged = (line: OperatorAction, did: string): Done => ({ result: line, did });
/** What it is answered for a moved intent: its id and status. */
const moved = (i: Intent, did = `${i.id} -> ${i.status}`): Done => ({
  result: { id: i.id, status: i.status },
  did,
});

const id = intentIdInput;
const why = operatorNote;
const playerId = playerIdInput;

export const ACTIONS = {
  /** An `unknown` intent's outcome, as the operator found it at the service. */
  resolve: action({ id, status: resolveStatus, note: operatorNote }, async (host, a, by) =>
    moved(await host.operator.resolve(a.id, a.status, a.note, by)),
  ),
  /** Pauses this process's payouts, with the operator's reason. */
  pause: action({ why }, async (host, a, by) =>
    logged(await host.operator.pause(by, a.why), 'payouts'),
  ),
  /** Lifts a pause of payouts, the breaker's or an operator's; refused when none is on. */
  resume: action({}, async (host, _, by) => logged(await host.operator.resume(by), 'payouts')),
  /** A match's payout or refund that expired unclaimed after it was shown: a new code, once. */
  reissue: action({ id }, async (host, a, by) => {
    const attempt = await host.operator.reissue(a.id, by);
    return {
      result: { id: a.id, attempt: attempt.id, status: attempt.status },
      did: `${a.id} -> ${attempt.id}`,
    };
  }),
  /** A payout the approvals held: sent now. */
  approve: action({ id }, async (host, a, by) => moved(await host.operator.approve(a.id, by))),
  /** A payout the approvals held: ended failed, never sent (a match's goes to the house). */
  reject: action({ id, why }, async (host, a, by) => {
    const ended = await host.operator.reject(a.id, by, a.why);
    return moved(ended, `${ended.id} -> failed`);
  }),
  /** Refuses the player's money helpers, in every process, until unblocked. */
  block: action({ playerId, why }, async (host, a, by) =>
    logged(await host.operator.block(a.playerId, by, a.why), a.playerId),
  ),
  unblock: action({ playerId }, async (host, a, by) =>
    logged(await host.operator.unblock(a.playerId, by), a.playerId),
  ),
} as const satisfies Record<string, Action>;

export type ActionName = keyof typeof ACTIONS;
