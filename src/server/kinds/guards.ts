/** Narrows an intent to its kind's typed meta; apart from the kinds so that it imports no engine. */
import type { Intent, IntentOf } from '../../ledger/intent.js';

export type EntryFeeIntent = IntentOf<'entryFee'>;

/** Whether `intent` is an entry fee (in a match: one of the group's fees). */
export function isEntryFee(intent: Intent): intent is EntryFeeIntent {
  return intent.kind === 'entryFee';
}

/** Whether `intent` is a payment to a Lightning address. */
export function isPayment(intent: Intent): intent is IntentOf<'payment'> {
  return intent.kind === 'payment';
}
