/**
 * The synced state a room puts in its own: one `LightningState` holding the room's money
 * entries, keyed by intent id. Every map is tagged `.view()`: an entry reaches only the
 * clients whose StateView holds it, which the plugin grants to the entry's owner alone, since
 * a reward's `code` is a bearer secret. What a client decodes (checked by test/room/*.test.ts):
 * `state.lightning` is always there; each of its maps is `undefined` until the client owns an
 * entry of that kind, then holds that client's entries only. Another player's entries, codes
 * and amounts never reach its socket.
 *
 *   const ArenaState = schema({ lightning: LightningState, ... }, 'ArenaState');
 */
import { type SchemaType, schema, t } from '@colyseus/schema';
import type { IntentStatus } from '../ledger/intent.js';

/** Fields every entry has. Amounts are decimal strings: msats can exceed 2^53. */
const common = {
  id: t.string(),
  /** Synced as text, typed as the union: `status === 'complete'` does not compile. */
  status: t.string<IntentStatus>(),
  playerId: t.string(),
  amount: t.string(),
  unit: t.string(),
  description: t.string(),
  /** epoch ms */
  createdAt: t.float64(),
  /** epoch ms; 0 when there is none */
  expiresAt: t.float64(),
  updatedAt: t.float64(),
};

/** A reward the owner claims by scanning `code` (LNURL-withdraw). */
export const Reward = schema(
  { ...common, kind: t.string<'reward'>(), code: t.string(), uri: t.string() },
  'LightningReward',
);
export type Reward = SchemaType<typeof Reward>;

/** An entry fee the owner pays by scanning `code` (LNURL-pay). */
export const EntryFee = schema(
  { ...common, kind: t.string<'entryFee'>(), code: t.string(), uri: t.string() },
  'LightningEntryFee',
);
export type EntryFee = SchemaType<typeof EntryFee>;

/** Points the owner spent. */
export const PointSpend = schema({ ...common, kind: t.string<'spend'>() }, 'LightningPointSpend');
export type PointSpend = SchemaType<typeof PointSpend>;

export const LightningState = schema(
  {
    rewards: t.map(Reward).view(),
    entryFees: t.map(EntryFee).view(),
    pointSpends: t.map(PointSpend).view(),
  },
  'LightningState',
);
export type LightningState = SchemaType<typeof LightningState>;

export type Entry = Reward | EntryFee | PointSpend;
