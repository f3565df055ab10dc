/**
 * What a failed create means for its intent: one the service certainly did not act on ends
 * `failed`; one that may hide a success makes it `unknown`, never re-sent (the `unknown` event).
 * A payout's failure is told to the breaker.
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

/** Records the failure on `intent` (`creating`, or a grace-made `unknown`): false if it lost. */
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
  const points = engine.port.failureOf(err).meaning === 'insufficientPoints';
  const error = points ? 'insufficient point balance' : message;
  const moved = await engine.apply(
    intent,
    'failed',
    { error, nextCheckAt: null },
    points ? 'TX3017' : 'create refused',
  );
  return moved !== null;
}
