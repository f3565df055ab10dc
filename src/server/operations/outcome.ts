/**
 * What a failed create call means for its intent. A failure the service certainly did not
 * act on (a refusal, a connection never made) ends the intent as `failed`. A failure that may
 * hide a success (a timeout after sending, a 5xx, a garbled answer) makes it `unknown`: it
 * is never re-sent, and the `unknown` event tells the game and its operator. A payout's
 * failure is told to the breaker, with its player and address (breaker.ts).
 */
import { type Intent, isPayout } from '../../ledger/intent.js';
import type { PaymentsPort } from '../../port/port.js';
import type { Engine } from '../engine.js';
import { unknownCheckAt } from '../schedule.js';

/** Whether a failed call may hide a success at the provider. */
export function isAmbiguous(port: PaymentsPort, err: unknown): boolean {
  const { meaning } = port.failureOf(err);
  return meaning === 'ambiguous' || meaning === 'garbled';
}

/**
 * Records the failure on `intent` (in status `creating`, or `unknown` when the grace period
 * ran out first and the failure is certain). Resolves true when it moved the intent, false
 * when another writer had already moved it.
 */
export async function recordCreateFailure(
  engine: Engine,
  intent: Intent,
  err: unknown,
  retryLaterMs: number | null,
): Promise<boolean> {
  const message = err instanceof Error ? err.message : String(err);
  // Only money going out can pause money going out; a fee or a spend that failed cannot.
  const ambiguous = isAmbiguous(engine.port, err);
  if (isPayout(intent.kind)) {
    engine.breaker.payoutFailed(err, ambiguous, {
      playerId: intent.playerId,
      lnAddress: engine.rulesOf(intent.kind).address?.(intent) ?? null,
    });
  }
  if (ambiguous) {
    if (intent.status !== 'creating') return false;
    const moved = await engine.apply(
      intent,
      'unknown',
      {
        error: message,
        nextCheckAt: unknownCheckAt(
          intent,
          engine.rulesOf(intent.kind).lostAnswer,
          engine.now(),
          retryLaterMs,
          engine.settings.reconciler,
        ),
      },
      'create outcome unknown',
    );
    if (moved) engine.emit('unknown', moved, err instanceof Error ? err : new Error(message));
    return moved !== null;
  }
  if (engine.port.failureOf(err).meaning === 'insufficientPoints') {
    const moved = await engine.apply(
      intent,
      'failed',
      { error: 'insufficient point balance', nextCheckAt: null },
      'TX3017',
    );
    return moved !== null;
  }
  const moved = await engine.apply(
    intent,
    'failed',
    { error: message, nextCheckAt: null },
    'create refused',
  );
  return moved !== null;
}
