/**
 * Balances as an operator reads them, from the journal's sums, in decimal strings of msats.
 *
 * Cost: two reads of the store's kept balances; no call to the service (the audit's last reading).
 */
import { type AccountBalance, accounts } from '../ledger/journal.js';
import type { LedgerStore } from '../ledger/store.js';

/** The service wallet as last read: its balance in msats, and when (epoch ms). */
export interface WalletReading {
  msat: string;
  at: number;
}

export interface Balances {
  /** Paid fees that matches hold, not yet paid out, refunded or raked. */
  escrowMsat: string;
  /** Claim codes players hold and have not claimed yet. */
  claimableMsat: string;
  /** Payouts that failed every attempt: to be paid by hand. */
  toPayByHandMsat: string;
  /** Players' tabs: credits not yet withdrawn (docs/MATCHES.md). */
  tabsMsat: string;
  /** claimable + to pay by hand + tabs: what the game owes its players. */
  owedToPlayersMsat: string;
  /** Sent or being sent, not settled (creates in flight, unknowns, payments on their way). */
  inFlightMsat: string;
  house: {
    /** Entry fees outside matches. */
    feesMsat: string;
    /** Matches' rake (with the dust of their splits). */
    rakeMsat: string;
    /** What the game's own rewards cost (claimed, claimable, in flight or in a tab). */
    rewardsMsat: string;
    /** Match payouts shown and never claimed. */
    unclaimedMsat: string;
    /** fees + rake + unclaimed - rewards. */
    netMsat: string;
  };
  /** What the journal says came into the wallet through the game, net of what left. */
  walletNetMsat: string;
  /** The last reading of the wallet at the service, or null before the first. */
  wallet: WalletReading | null;
  /** wallet - owed to players - escrow - in flight: null without a reading. Below 0: short. */
  coverMsat: string | null;
  /** Points, by currency (minor units): what spends took, and what is on its way. */
  points: Record<string, { spent: string; inFlight: string }>;
}

const NAMED = [
  accounts.wallet,
  accounts.inflight,
  accounts.rewards,
  accounts.fees,
  accounts.rake,
  accounts.unclaimed,
  accounts.housePoints,
] as const;

export async function readBalances(
  ledger: LedgerStore,
  wallet: WalletReading | null,
): Promise<Balances> {
  const [byClass, named] = await Promise.all([ledger.balances(), ledger.balances(NAMED)]);
  const msat = (rows: readonly AccountBalance[], pick: (row: AccountBalance) => boolean) =>
    rows.filter((r) => r.unit === 'msats' && pick(r)).reduce((s, r) => s + BigInt(r.balance), 0n);
  const ofClass = (cls: string) => msat(byClass, (r) => r.account === cls);
  const ofAccount = (account: string) => msat(named, (r) => r.account === account);
  const escrow = ofClass('escrow');
  const claimable = ofClass('claimable');
  const byHand = ofClass('owed');
  const tabs = ofClass('tab');
  const inflight = ofAccount(accounts.inflight);
  const fees = ofAccount(accounts.fees);
  const rake = ofAccount(accounts.rake);
  // An expense account is debited: its balance is minus what it cost.
  const rewards = -ofAccount(accounts.rewards);
  const unclaimed = ofAccount(accounts.unclaimed);
  const owed = claimable + byHand + tabs;
  const points: Balances['points'] = {};
  for (const row of named) {
    if (row.unit === 'msats') continue;
    const entry = points[row.unit] ?? { spent: '0', inFlight: '0' };
    points[row.unit] = entry;
    if (row.account === accounts.housePoints) entry.spent = row.balance;
    if (row.account === accounts.inflight) entry.inFlight = row.balance;
  }
  return {
    escrowMsat: escrow.toString(),
    claimableMsat: claimable.toString(),
    toPayByHandMsat: byHand.toString(),
    tabsMsat: tabs.toString(),
    owedToPlayersMsat: owed.toString(),
    inFlightMsat: inflight.toString(),
    house: {
      feesMsat: fees.toString(),
      rakeMsat: rake.toString(),
      rewardsMsat: rewards.toString(),
      unclaimedMsat: unclaimed.toString(),
      netMsat: (fees + rake + unclaimed - rewards).toString(),
    },
    // The wallet account is credited with what leaves: minus its balance came in.
    walletNetMsat: (-ofAccount(accounts.wallet)).toString(),
    wallet,
    coverMsat: wallet === null ? null : (BigInt(wallet.msat) - owed - escrow - inflight).toString(),
    points,
  };
}

/** Per unit, the sum of every class's balance: zero for a journal in balance. */
export function sumsByUnit(byClass: readonly AccountBalance[]): Map<string, bigint> {
  const sums = new Map<string, bigint>();
  for (const row of byClass) {
    sums.set(row.unit, (sums.get(row.unit) ?? 0n) + BigInt(row.balance));
  }
  return sums;
}
