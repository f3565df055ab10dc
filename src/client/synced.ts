/**
 * What a client decodes in `room.state.lightning`, as structural types (a decoded Schema or a
 * plain object; no import of @colyseus/schema). Fields an older server lacks are optional.
 */

/** What a synced map offers on a client: `MapSchema` has it, and so does a `Map`. */
export interface SyncedMap<V> {
  forEach(callback: (value: V, key: string) => void): void;
}

/** One of the player's entries, as synced (its id is its key in the map). */
export interface SyncedEntry {
  status: string;
  /** msats when `unit` is `msats`, else minor units of the points currency. */
  amount: string;
  unit: string;
  description: string;
  /** epoch ms; 0 when there is none */
  expiresAt: number;
  kind?: string;
  purpose?: string;
  /** The match the entry belongs to; '' when none. */
  matchId?: string;
  /** An LNURL to pay (fee) or to claim (reward, payout, refund). */
  code?: string;
  /** A payment's destination. */
  lnAddress?: string;
}

/** A match of the room, seen by every client. */
export interface SyncedMatch {
  id: string;
  status: string;
  entryFeeMsat: string;
  potMsat: string;
  rakeMsat: string;
  rake: number;
  entered: number;
  paid: number;
  made?: number;
  total?: number;
  funded: boolean;
  reason: string;
}

/** The BTC price the server reads for fiat amounts. */
export interface SyncedPrice {
  /** 'USD', or '' when the game shows no fiat. */
  currency: string;
  /** The price of 1 BTC in `currency`; 0 until known. */
  btcPrice: number;
  /** When the price was read, epoch ms. */
  at: number;
}

/** The player's tab (only their own reaches their client). */
export interface SyncedTab {
  /** msats, a decimal string. */
  balance: string;
}

/** `room.state.lightning`. */
export interface SyncedLightning {
  rewards?: SyncedMap<SyncedEntry> | undefined;
  entryFees?: SyncedMap<SyncedEntry> | undefined;
  payments?: SyncedMap<SyncedEntry> | undefined;
  pointSpends?: SyncedMap<SyncedEntry> | undefined;
  matches?: SyncedMap<SyncedMatch> | undefined;
  price?: SyncedPrice | undefined;
  tabs?: SyncedMap<SyncedTab> | undefined;
}

/** The entry maps, in the order the views list them. */
export const ENTRY_MAPS = ['entryFees', 'rewards', 'payments', 'pointSpends'] as const;
export type EntryMapName = (typeof ENTRY_MAPS)[number];
