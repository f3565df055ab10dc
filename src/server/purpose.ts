/**
 * What an intent is for, in the player's words: the `purpose` of a room's entry and of a
 * lobby's claim. A kind says where the money goes (a claim code, a charge, an address); the
 * purpose says why, so that a screen tells a match's refund from its prize without reading the
 * description. Pure: nothing read, nothing kept.
 */
import type { Intent } from '../ledger/intent.js';
import { KINDS } from './kinds/index.js';
import type { RoomMap } from './kinds/kind.js';

/**
 * `reward` (a plain reward), `payout` (a match's winnings), `refund` (a match's fee back), `fee`
 * (an entry fee), `spend` (points spent), `payment` (a payment to the player's address).
 */
export type EntryPurpose = 'reward' | 'payout' | 'refund' | 'fee' | 'spend' | 'payment';

/** What each room map's entries are for, unless a match says otherwise (below). */
const BY_MAP: Record<RoomMap, EntryPurpose> = {
  rewards: 'reward',
  entryFees: 'fee',
  payments: 'payment',
  pointSpends: 'spend',
};

/**
 * A match's payout and refund are a claim code (a reward) or a payment to an address: the
 * `matchRole` the match gave them (server/match/matches.ts) says which of the two they are,
 * whatever carries them. Any other intent is what its kind's room map holds.
 */
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
