/**
 * Typed views of `room.state.lightning`: the player's entries and the room's matches as plain
 * objects a page can keep, compare and render. Pure reads, on any object of the synced shape.
 */
import { satsOf } from './amount.js';
import {
  ENTRY_MAPS,
  type EntryMapName,
  type SyncedEntry,
  type SyncedLightning,
  type SyncedMatch,
  type SyncedPrice,
  type SyncedTab,
} from './synced.js';

const PURPOSES = ['reward', 'payout', 'refund', 'fee', 'spend', 'payment'] as const;
const STATUSES = [
  'creating',
  'pending',
  'held',
  'queued',
  'unknown',
  'completed',
  'expired',
  'failed',
] as const;
const ENDED: readonly EntryStatus[] = ['completed', 'expired', 'failed'];
const MATCH_STATUSES = ['open', 'settling', 'aborting', 'settled', 'aborted'] as const;

/** What an entry is for the player. */
export type EntryPurpose = (typeof PURPOSES)[number];

/**
 * Where an entry is. `held`: a payout waiting for an operator's approval; `queued`: waiting its
 * turn to be sent; `unknown`: its outcome not confirmed yet, or a status this kit does not know.
 */
export type EntryStatus = (typeof STATUSES)[number];

/** One of the player's entries, read. */
export interface EntryView {
  /** The entry's id (its key in the synced map). */
  id: string;
  purpose: EntryPurpose;
  /** The match it belongs to; '' when none. */
  matchId: string;
  status: EntryStatus;
  /** Not ended yet: creating, pending, held, queued or unknown. */
  open: boolean;
  /** What the player does with `code` now: pay it (a fee), claim it, or nothing. */
  action: 'pay' | 'claim' | null;
  /** msats as a decimal string; null for points. */
  amountMsat: string | null;
  /** sats as an exact decimal string (`'21'`, `'21.5'`); null for points. */
  sats: string | null;
  /** The amount as synced, in `unit` (`msats`, or the points currency's minor units). */
  amount: string;
  unit: string;
  description: string;
  /** epoch ms; null when there is none. */
  expiresAt: number | null;
  /** The LNURL to pay or claim; '' when there is nothing to scan. */
  code: string;
  /** A payment's Lightning address; '' otherwise. */
  lnAddress: string;
}

export type MatchStatus = (typeof MATCH_STATUSES)[number];

/** A match of the room, read: the pot and the rake every player sees. */
export interface MatchView {
  id: string;
  status: MatchStatus;
  entryFeeMsat: string;
  /** Paid fees so far; once decided, the pot that was split. */
  potMsat: string;
  /** The house's part once settled; '0' before. */
  rakeMsat: string;
  /** 0 to 0.5 */
  rake: number;
  /** How many players entered, and how many of them paid. */
  entered: number;
  paid: number;
  /** Once decided: its payouts and refunds made so far, of `total`. */
  made: number;
  total: number;
  /** Every player of the roster paid. */
  funded: boolean;
  /** Why it was aborted; '' otherwise. */
  reason: string;
}

/**
 * The player's tab: what their credits added up to, not yet withdrawn. Fiat as any amount:
 * `formatAmount(tab.balanceMsat, { price })`.
 */
export interface TabView {
  /** msats as a decimal string. */
  balanceMsat: string;
  /** sats as an exact decimal string (`'21'`, `'21.5'`). */
  sats: string;
}

/** The BTC price for fiat amounts, once the server knows it (`currency` is never ''). */
export type PriceView = SyncedPrice;

/** What the player does with an open entry's code, by its purpose: pay a fee, claim the rest. */
const ACTION: Readonly<Record<EntryPurpose, 'pay' | 'claim' | null>> = {
  fee: 'pay',
  reward: 'claim',
  payout: 'claim',
  refund: 'claim',
  spend: null,
  payment: null,
};
/** A server before `purpose` was synced: what each map holds. */
const PURPOSE_OF_MAP: Record<EntryMapName, EntryPurpose> = {
  entryFees: 'fee',
  rewards: 'reward',
  payments: 'payment',
  pointSpends: 'spend',
};

/** One synced entry, read; `map` is the map it is in, `id` its key there. */
export function entryView(entry: SyncedEntry, id: string, map: EntryMapName): EntryView {
  const purpose = PURPOSES.find((p) => p === entry.purpose) ?? PURPOSE_OF_MAP[map];
  const status = STATUSES.find((s) => s === entry.status) ?? 'unknown';
  const msats = entry.unit === 'msats' && /^\d+$/.test(entry.amount);
  const code = entry.code ?? '';
  const open = !ENDED.includes(status);
  return {
    id,
    purpose,
    matchId: entry.matchId ?? '',
    status,
    open,
    action: status !== 'pending' || code === '' ? null : ACTION[purpose],
    amountMsat: msats ? entry.amount : null,
    sats: msats ? satsOf(entry.amount) : null,
    amount: entry.amount,
    unit: entry.unit,
    description: entry.description,
    expiresAt: entry.expiresAt > 0 ? entry.expiresAt : null,
    code,
    lnAddress: entry.lnAddress ?? '',
  };
}

/** The player's entries, maps in the order fees, rewards, payments, spends; missing maps empty. */
export function entriesOf(lightning: SyncedLightning | undefined): EntryView[] {
  const views: EntryView[] = [];
  if (!lightning) return views;
  for (const map of ENTRY_MAPS) {
    lightning[map]?.forEach((entry, id) => {
      views.push(entryView(entry, id, map));
    });
  }
  return views;
}

/** One synced match, read; `key` is its key in `matches` (its id when the match has none). */
export function matchView(match: SyncedMatch, key: string): MatchView {
  return {
    id: match.id || key,
    // An unknown status is shown as open: still in play, nothing decided.
    status: MATCH_STATUSES.find((s) => s === match.status) ?? 'open',
    entryFeeMsat: match.entryFeeMsat,
    potMsat: match.potMsat || '0',
    rakeMsat: match.rakeMsat || '0',
    rake: match.rake,
    entered: match.entered,
    paid: match.paid,
    made: match.made ?? 0,
    total: match.total ?? 0,
    funded: match.funded,
    reason: match.reason,
  };
}

/** The room's matches. */
export function matchesOf(lightning: SyncedLightning | undefined): MatchView[] {
  const views: MatchView[] = [];
  lightning?.matches?.forEach((match, key) => {
    views.push(matchView(match, key));
  });
  return views;
}

/** One match by id, or undefined. */
export function matchOf(lightning: SyncedLightning | undefined, id: string): MatchView | undefined {
  if (id === '') return undefined;
  return matchesOf(lightning).find((m) => m.id === id);
}

/** One synced tab, read (a balance that is not digits reads as 0). */
export function tabView(tab: SyncedTab): TabView {
  const balanceMsat = /^\d+$/.test(tab.balance) ? tab.balance : '0';
  return { balanceMsat, sats: satsOf(balanceMsat) };
}

/**
 * The player's tab, or null before their first credit in this room (the server syncs a
 * player's own tab only, so the one there is theirs).
 */
export function tabOf(lightning: SyncedLightning | undefined): TabView | null {
  let view: TabView | null = null;
  lightning?.tabs?.forEach((tab) => {
    view ??= tabView(tab);
  });
  return view;
}

/** The BTC price, or null while the game shows no fiat or the price is not known yet. */
export function priceOf(lightning: SyncedLightning | undefined): PriceView | null {
  const price = lightning?.price;
  if (!price || price.currency === '' || !(price.btcPrice > 0)) return null;
  return { currency: price.currency, btcPrice: price.btcPrice, at: price.at };
}
