/**
 * What an intent is for, in the player's words (a kind says where the money goes, the purpose
 * why), so that a screen tells a match's refund from its prize. Pure.
 */
import type { Intent } from '../ledger/intent.js';
import { KINDS } from './kinds/index.js';
import type { RoomMap } from './kinds/kind.js';

/** `payout` is a match's winnings, `refund` a match's fee back; the others name their kind. */
export type EntryPurpose = 'reward' | 'payout' | 'refund' | 'fee' | 'spend' | 'payment';

/** What each room map's entries are for, unless a match says otherwise (below). */
const BY_MAP: Record<RoomMap, EntryPurpose> = {
  rewards: 'reward',
  entryFees: 'fee',
  payments: 'payment',
  pointSpends: 'spend',
};

/** A match's `matchRole` says payout or refund, whatever carries it; else the kind's room map. */
export function purposeOf(intent: Pick<Intent, 'kind' | 'meta'>): EntryPurpose {
  const role = intent.meta.matchRole;
  if (role === 'payout' || role === 'refund') return role;
  const map = KINDS[intent.kind].room;
  if (map === null) throw new Error(`a ${intent.kind} has no purpose of its own`);
  return BY_MAP[map];
}

/** The match an intent belongs to (its fee, payout or refund), '' when none. */
export function matchIdOf(intent: Pick<Intent, 'groupId' | 'meta'>): string {
  return typeof intent.meta.matchRole === 'string' && intent.groupId !== null ? intent.groupId : '';
}
