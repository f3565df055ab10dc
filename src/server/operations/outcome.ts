/**
 * What a failed create call means for its intent. A failure the service certainly did not
 * act on (a refusal, a connection never made) ends the intent as `failed`. A failure that may
 * hide a success (a timeout after sending, a 5xx, a garbled answer) makes it `unknown`: it
 * is never re-sent, and the `unknown` event tells the game and its operator.
 */
import {
  AmbiguousResultError,
  InsufficientPointsError,
  UnexpectedResponseError,
} from '../../api/errors.js';
import type { Intent } from '../../ledger/intent.js';
import type { LightningCore } from '../core.js';

export async function recordCreateFailure(
  core: LightningCore,
  intent: Intent,
  err: unknown,
  retryLaterMs: number | null,
): Promise<void> {
  const message = err instanceof Error ? err.message : String(err);
  const ambiguous = err instanceof AmbiguousResultError || err instanceof UnexpectedResponseError;
  if (ambiguous) {
    const moved = await core.apply(
      intent,
      'unknown',
      { error: message, nextCheckAt: retryLaterMs === null ? null : core.now() + retryLaterMs },
      'create outcome unknown',
    );
    if (moved) core.emit('unknown', moved, err as Error);
    return;
  }
  if (err instanceof InsufficientPointsError) {
    await core.apply(
      intent,
      'failed',
      { error: 'insufficient point balance', nextCheckAt: null },
      'TX3017',
    );
    return;
  }
  await core.apply(intent, 'failed', { error: message, nextCheckAt: null }, 'create refused');
}
