/**
 * Re-reads the service's resource behind an intent and says what the intent should become.
 * This is the only place where the service's words turn into ours: a callback's body is
 * never trusted, only what the API answers here.
 *
 *   reward    (withdrawal request): completed -> completed, expired -> expired, error -> failed
 *   entryFee  (static charge):      slots above the baseline -> completed; disabled, or our
 *                                   deadline passed (the charge is then closed) -> expired
 *   payment   (to a Lightning address): completed -> completed, failed -> failed
 *   spend     (deplete):            no read exists; the same idempotency key is sent again
 */

import type { PaymentsApi } from '../api/client.js';
import { InsufficientPointsError } from '../api/errors.js';
import type { Intent, IntentPatch, IntentStatus } from '../ledger/intent.js';

export interface Observation {
  /** The status the intent should move to, or null: still open, look again later. */
  to: IntentStatus | null;
  /** Fields learned on the way (the remote id and code of an intent that was `unknown`). */
  patch: IntentPatch;
  /** The service's own status word, for the history. */
  note: string;
}

/** Statuses of a static charge that accept no more payments. */
const CLOSED_CHARGE = new Set(['inactive', 'disabled', 'expired']);

/**
 * Reads the resource and says what the intent should become. With `proof` (the callback URL of
 * an intent that learned `remoteId` from a callback's body), a resource whose callback URL is
 * not `proof` is someone else's: the answer is null, and nothing was written at the service.
 */
export async function observe(
  api: PaymentsApi,
  intent: Intent,
  remoteId: string,
  now: number,
  proof?: string,
): Promise<Observation | null> {
  const foreign = (callbackUrl: string | null | undefined) =>
    proof !== undefined && (proof === '' || callbackUrl !== proof);
  switch (intent.kind) {
    case 'reward': {
      const request = await api.withdrawalRequests.get(remoteId);
      if (foreign(request.callbackUrl)) return null;
      const patch = { remoteId, code: request.invoice.request, uri: request.invoice.uri ?? null };
      const seen = { patch, note: `withdrawal request ${request.status}` };
      if (request.status === 'completed') return { ...seen, to: 'completed' };
      if (request.status === 'expired') return { ...seen, to: 'expired' };
      if (request.status === 'error') return { ...seen, to: 'failed' };
      return { ...seen, to: null };
    }
    case 'entryFee': {
      const charge = await api.staticCharges.get(remoteId);
      if (foreign(charge.callbackUrl)) return null;
      const baseline = Number(intent.meta.slotsBaseline ?? 0);
      const patch = { remoteId, code: charge.invoice.request, uri: charge.invoice.uri ?? null };
      const paid = (slots: number): Observation => ({
        to: 'completed',
        patch,
        note: `paid (${slots} slots)`,
      });
      if (charge.slots > baseline) return paid(charge.slots);
      if (CLOSED_CHARGE.has(charge.status)) {
        return { to: 'expired', patch, note: `charge ${charge.status}` };
      }
      if (intent.expiresAt !== null && now >= intent.expiresAt) {
        // Our deadline passed: close the charge so no late payment lands on an expired fee.
        // Its own creation time is in the past on the service's clock, whatever the skew
        // between our clocks. The answer is the closed charge: a payment that arrived just
        // before shows in its slots, and none can arrive after.
        const closeAt = charge.createdAt ?? new Date(now - 60_000).toISOString();
        const closed = await api.staticCharges.update(remoteId, { expiresAt: closeAt });
        if (closed.slots > baseline) return paid(closed.slots);
        return { to: 'expired', patch, note: 'fee deadline passed; charge closed' };
      }
      return {
        to: null,
        patch,
        note: `charge ${charge.status}, ${charge.slots} slots`,
      };
    }
    case 'payment': {
      const payment = await api.payments.get(remoteId);
      if (foreign(payment.callbackUrl)) return null;
      const seen = { patch: { remoteId }, note: `payment ${payment.status}` };
      if (payment.status === 'completed') return { ...seen, to: 'completed' };
      if (payment.status === 'failed') return { ...seen, to: 'failed' };
      return { ...seen, to: null };
    }
    case 'spend':
      return resendDeplete(api, intent);
    case 'match':
      // A match is our own record: nothing at the service to read (server/match/ checks it).
      throw new Error('a match has no resource at the service');
  }
}

/** A deplete whose answer was lost: the same key makes the service apply it at most once. */
async function resendDeplete(api: PaymentsApi, intent: Intent): Promise<Observation> {
  const userId = intent.meta.userId;
  if (typeof userId !== 'string' || intent.idempotencyKey === null) {
    return { to: 'failed', patch: { error: 'spend intent without user or key' }, note: 'invalid' };
  }
  try {
    const transfer = await api.widgetUsers.deplete({
      user_id: userId,
      amount: Number(intent.amount),
      currency: intent.unit,
      idempotency_key: intent.idempotencyKey,
    });
    const to = transfer.status === 'COMPLETED' ? 'completed' : null;
    return { to, patch: { remoteId: transfer.transfer_id }, note: `transfer ${transfer.status}` };
  } catch (err) {
    if (err instanceof InsufficientPointsError) {
      return { to: 'failed', patch: { error: 'insufficient point balance' }, note: 'TX3017' };
    }
    throw err;
  }
}
