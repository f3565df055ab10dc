/** When the reconciler looks at an intent again: pure functions of the intent, time and settings. */
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

/** When an `unknown` is due: 'resend' after `resendMs`, 'deadline' when it can expire, else never. */
export function unknownCheckAt(
  intent: Pick<Intent, 'remoteId' | 'code' | 'expiresAt'>,
  lostAnswer: 'deadline' | 'proof' | 'resend',
  now: number,
  resendMs: number | null,
  settings: Pick<ReconcilerSettings, 'expiryMarginMs'>,
): number | null {
  if (lostAnswer === 'resend') return now + (resendMs ?? 0);
  if (
    lostAnswer === 'deadline' &&
    intent.remoteId === null &&
    intent.code === null &&
    intent.expiresAt !== null
  ) {
    return intent.expiresAt + settings.expiryMarginMs;
  }
  return resendMs === null ? null : now + resendMs;
}
