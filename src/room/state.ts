/**
 * The synced state a room puts in its own: one `LightningState` holding the room's money
 * entries by intent id, its matches, and the BTC price. Entry maps are `.view()`: an entry
 * reaches only its owner's client, since a reward's `code` is a bearer secret.
 *
 *   const ArenaState = schema({ lightning: LightningState, ... }, 'ArenaState');
 */
import { type SchemaType, schema, t } from '@colyseus/schema';
import type { IntentKind, IntentStatus } from '../ledger/intent.js';
import type { EntryPurpose } from '../server/purpose.js';

export type { EntryPurpose } from '../server/purpose.js';

/**
 * Fields every entry has; amounts are decimal strings (msats can exceed 2^53). At most eight
 * synced: from the ninth on, @colyseus/schema gives each instance its own array of pending
 * operations, so what the owner's screen does not need is `.noSync()`.
 */
const common = {
  /** Server only: on a client, the entry's key in its map. */
  id: t.string().noSync(),
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
  /** reward, payout (a match's winnings), refund (a match's fee back), fee, spend, payment */
  purpose: t.string<EntryPurpose>(),
  /** The match the entry belongs to (its fee, payout or refund); '' when none. */
  matchId: t.string(),
};

/** A reward the owner claims by scanning `code`; its link is `lightning:${code}` (not synced). */
export const Reward = schema(
  { ...common, kind: t.string<IntentKind>().noSync(), code: t.string() },
  'LightningReward',
);
export type Reward = SchemaType<typeof Reward>;

/** An entry fee the owner pays by scanning `code` (LNURL-pay); its link is `lightning:${code}`. */
export const EntryFee = schema(
  { ...common, kind: t.string<IntentKind>().noSync(), code: t.string() },
  'LightningEntryFee',
);
export type EntryFee = SchemaType<typeof EntryFee>;

/** A payment to the owner's Lightning address: nothing to scan, only its progress to watch. */
export const AddressPayment = schema(
  { ...common, kind: t.string<IntentKind>().noSync(), lnAddress: t.string() },
  'LightningAddressPayment',
);
export type AddressPayment = SchemaType<typeof AddressPayment>;

/** Points the owner spent. */
export const PointSpend = schema(
  { ...common, kind: t.string<IntentKind>().noSync() },
  'LightningPointSpend',
);
export type PointSpend = SchemaType<typeof PointSpend>;

/** A match of the room, seen by every client; players' codes are in their own entries. */
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
    /** How many players entered (their latest fee open or paid), and how many paid. */
    entered: t.uint16(),
    paid: t.uint16(),
    /** Once decided: payouts and refunds made, of `total` (capped at 65,535). */
    made: t.uint16(),
    total: t.uint16(),
    /** How many players it waits for (its roster's size, or `seats`); 0 without a roster. */
    seats: t.uint16(),
    /** The roster has paid (never without one). */
    funded: t.boolean(),
    /** Why it was aborted ('' otherwise). */
    reason: t.string(),
    updatedAt: t.float64(),
  },
  'LightningMatch',
);
export type Match = SchemaType<typeof Match>;

/** The price of one bitcoin, read every `fiat.refreshMs`; fiat off: '' and zeros. */
export const Price = schema(
  {
    /** 'USD', or '' when the game did not turn fiat on. */
    currency: t.string().default(''),
    /** The price of 1 BTC in `currency`; 0 until known. */
    btcPrice: t.float64().default(0),
    /** When the service priced it, epoch ms; 0 until known. */
    at: t.float64().default(0),
  },
  'LightningPrice',
);
export type Price = SchemaType<typeof Price>;

/**
 * A player's tab: the msats their credits added up to, not yet withdrawn (docs/MATCHES.md), as the
 * journal held them at the room's last read. Seen by its owner only, as their entries are.
 */
export const Tab = schema(
  {
    /** msats, a decimal string. */
    balance: t.string().default('0'),
    /** Server only: the owner. */
    playerId: t.string().noSync(),
  },
  'LightningTab',
);
export type Tab = SchemaType<typeof Tab>;

export const LightningState = schema(
  {
    rewards: t.map(Reward).view(),
    entryFees: t.map(EntryFee).view(),
    pointSpends: t.map(PointSpend).view(),
    payments: t.map(AddressPayment).view(),
    matches: t.map(Match),
    price: Price,
    /** Each player's tab, keyed by an id of the room's own (never the player's). */
    tabs: t.map(Tab).view(),
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
