/**
 * The synced state a room puts in its own: one `LightningState` holding the room's money
 * entries, keyed by intent id, and its matches. Every entry map is tagged `.view()`: an entry
 * reaches only the clients whose StateView holds it, which the plugin grants to the entry's owner alone, since
 * a reward's `code` is a bearer secret. What a client decodes (checked by test/room/*.test.ts):
 * `state.lightning` is always there; each of its maps is `undefined` until the client owns an
 * entry of that kind, then holds that client's entries only. Another player's entries, codes
 * and amounts never reach its socket.
 *
 *   const ArenaState = schema({ lightning: LightningState, ... }, 'ArenaState');
 */
import { type SchemaType, schema, t } from '@colyseus/schema';
import type { IntentStatus } from '../ledger/intent.js';

/**
 * Fields every entry has. Amounts are decimal strings: msats can exceed 2^53.
 *
 * Seven synced fields at most per entry: from the eighth on, Colyseus's change tracker gives
 * each instance its own byte array of pending operations (about 200 B per entry, measured by
 * bench/scale.ts). So what the owner's screen does not need is kept on the server only
 * (`.noSync()`): the id (the entry's key in its map, which the client has), the owner's player
 * id (the client's own), and the update time. The creation time is the ledger's alone.
 */
const common = {
  /** Server only: on a client, the entry's key in its map. */
  id: t.string().noSync(),
  /** Synced as text, typed as the union: `status === 'complete'` does not compile. */
  status: t.string<IntentStatus>(),
  /** Server only: the owner (only the owner's client ever holds the entry). */
  playerId: t.string().noSync(),
  amount: t.string(),
  unit: t.string(),
  description: t.string(),
  /** epoch ms; 0 when there is none */
  expiresAt: t.float64(),
  /** epoch ms; server only (orders the readings of an intent) */
  updatedAt: t.float64().noSync(),
};

/**
 * A reward the owner claims by scanning `code` (LNURL-withdraw). No `uri` is synced: it would
 * be the same ~200 characters again in every entry (about 0.4 KB per open intent, measured by
 * bench/scale.ts); a client builds it as `lightning:${code}`.
 */
export const Reward = schema(
  { ...common, kind: t.string<'reward'>(), code: t.string() },
  'LightningReward',
);
export type Reward = SchemaType<typeof Reward>;

/** An entry fee the owner pays by scanning `code` (LNURL-pay); its link is `lightning:${code}`. */
export const EntryFee = schema(
  { ...common, kind: t.string<'entryFee'>(), code: t.string() },
  'LightningEntryFee',
);
export type EntryFee = SchemaType<typeof EntryFee>;

/** A payment to the owner's Lightning address: nothing to scan, only its progress to watch. */
export const AddressPayment = schema(
  { ...common, kind: t.string<'payment'>(), lnAddress: t.string() },
  'LightningAddressPayment',
);
export type AddressPayment = SchemaType<typeof AddressPayment>;

/** Points the owner spent. */
export const PointSpend = schema({ ...common, kind: t.string<'spend'>() }, 'LightningPointSpend');
export type PointSpend = SchemaType<typeof PointSpend>;

/**
 * A match of the room, seen by every client: the pot and the rake on screen. Players' codes
 * are in their own entries (fees, payouts and refunds), never here.
 */
export const Match = schema(
  {
    id: t.string(),
    /** open, settling, aborting, settled, aborted */
    status: t.string<'open' | 'settling' | 'aborting' | 'settled' | 'aborted'>(),
    entryFeeMsat: t.string(),
    /** Paid fees so far; once decided, the pot that was split. */
    potMsat: t.string(),
    /** The house's part once settled ('' before). */
    rakeMsat: t.string(),
    /** 0 to 0.5 */
    rake: t.float64(),
    /** How many players entered, and how many of them paid. */
    entered: t.uint16(),
    paid: t.uint16(),
    funded: t.boolean(),
    /** Why it was aborted ('' otherwise). */
    reason: t.string(),
    updatedAt: t.float64(),
  },
  'LightningMatch',
);
export type Match = SchemaType<typeof Match>;

export const LightningState = schema(
  {
    rewards: t.map(Reward).view(),
    entryFees: t.map(EntryFee).view(),
    pointSpends: t.map(PointSpend).view(),
    payments: t.map(AddressPayment).view(),
    matches: t.map(Match),
  },
  'LightningState',
);
export type LightningState = SchemaType<typeof LightningState>;

export type Entry = Reward | EntryFee | PointSpend | AddressPayment;

/** What `chargeEntryFee` resolves with. */
export interface ChargedEntryFee {
  /** The fee's entry, `pending`, with the code to pay. */
  entry: EntryFee;
  /** Resolves with the entry once it ended: gate play on `status === 'completed'`. */
  settled: Promise<EntryFee>;
}
