/**
 * The one shape of every money operation: record the intent, only then call the service, and
 * turn the answer into `pending` (or the failure into `failed`/`unknown`, see outcome.ts).
 */
import type { Intent, IntentPatch, NewIntent } from '../../ledger/intent.js';
import type { LightningCore } from '../core.js';
import { recordCreateFailure } from './outcome.js';

export interface Created {
  patch: IntentPatch;
  note: string;
}

export async function recordThenSend<T>(
  core: LightningCore,
  fields: NewIntent,
  send: (intent: Intent) => Promise<T>,
  created: (answer: T, intent: Intent) => Created,
  options: { retryAfterAmbiguousMs?: number | null } = {},
): Promise<Intent> {
  const intent = await core.ledger.create(fields, core.now());
  let answer: T;
  try {
    answer = await send(intent);
  } catch (err) {
    await recordCreateFailure(core, intent, err, options.retryAfterAmbiguousMs ?? null);
    throw err;
  }
  const { patch, note } = created(answer, intent);
  const moved = await core.apply(intent, 'pending', patch, note);
  // Only a callback racing the create answer could have moved it already; read what won.
  return moved ?? ((await core.ledger.get(intent.id)) as Intent);
}
