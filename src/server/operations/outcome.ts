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
import type { Engine } from '../engine.js';

export async function recordCreateFailure(
  engine: Engine,
  intent: Intent,
  err: unknown,
  retryLaterMs: number | null,
): Promise<void> {
  const message = err instanceof Error ? err.message : String(err);
  const ambiguous = err instanceof AmbiguousResultError || err instanceof UnexpectedResponseError;
  if (ambiguous) {
    const moved = await engine.apply(
      intent,
      'unknown',
      { error: message, nextCheckAt: retryLaterMs === null ? null : engine.now() + retryLaterMs },
      'create outcome unknown',
    );
    if (moved) engine.emit('unknown', moved, err instanceof Error ? err : new Error(message));
    return;
  }
  if (err instanceof InsufficientPointsError) {
    await engine.apply(
      intent,
      'failed',
      { error: 'insufficient point balance', nextCheckAt: null },
      'TX3017',
    );
    return;
  }
  await engine.apply(intent, 'failed', { error: message, nextCheckAt: null }, 'create refused');
}
