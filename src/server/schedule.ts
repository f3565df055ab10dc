/**
 * When the reconciler looks at an intent again: pure functions of the intent, the time and
 * the settings, shared by the operations (first check after a create), the engine (after each
 * re-read) and the reconciler.
 */
import type { Intent } from '../ledger/intent.js';
import type { ReconcilerSettings } from './options.js';

type Backoff = Pick<ReconcilerSettings, 'firstCheckMs' | 'maxBackoffMs'>;

/** When an intent that is still open should be read again. */
export function nextCheckAt(
  intent: Pick<Intent, 'checks' | 'expiresAt'>,
  now: number,
  settings: Backoff,
): number {
  const { firstCheckMs, maxBackoffMs } = settings;
  const next = now + Math.min(maxBackoffMs, firstCheckMs * 2 ** Math.min(intent.checks, 20));
  // Look right after the expiry: that is when the answer changes.
  if (intent.expiresAt !== null && intent.expiresAt >= now) {
    return Math.min(next, intent.expiresAt + 1_000);
  }
  return next;
}

/** How long to wait after a re-read failed (the service is down or slow). */
export function retryAfterErrorMs(intent: Intent, settings: Backoff): number {
  return Math.min(settings.maxBackoffMs, 2_000 * 2 ** Math.min(intent.checks, 20));
}
