/**
 * The one shape of every money operation: record the intent, only then call the service, and
 * turn the answer into `pending` (or the failure into `failed`/`unknown`, see outcome.ts).
 */
import type { Intent, IntentPatch, NewIntent } from '../../ledger/intent.js';
import type { Engine } from '../engine.js';
import { recordCreateFailure } from './outcome.js';

export interface Created {
  patch: IntentPatch;
  note: string;
}

export async function recordThenSend<T>(
  engine: Engine,
  fields: NewIntent,
  send: (intent: Intent) => Promise<T>,
  created: (answer: T, intent: Intent) => Created,
  options: { retryAfterAmbiguousMs?: number | null } = {},
): Promise<Intent> {
  const intent = await engine.ledger.create(fields, engine.now());
  let answer: T;
  try {
    answer = await send(intent);
  } catch (err) {
    await recordCreateFailure(engine, intent, err, options.retryAfterAmbiguousMs ?? null);
    throw err;
  }
  const { patch, note } = created(answer, intent);
  const moved = await engine.apply(intent, 'pending', patch, note);
  // Only a callback racing the create answer could have moved it already; read what won.
  return moved ?? ((await engine.ledger.get(intent.id)) as Intent);
}
