/**
 * The soak's money verdict: matches (their pots, payouts and refunds) and the journal, checked
 * once the storm is over against the ledger's intents, the journal the store kept beside them
 * (entries and balances, `books`), and the service's own records of what was paid in and out.
 *
 * - Each match: an ended one's escrow account is empty; every winner of a settled one holds
 *   its payout (claimable, claimed, or left to an operator), at most one attempt of it ever
 *   reached the player; every fee that is owed back (an aborted match's, a fee paid late or
 *   after the decision) was refunded, once, and no fee in a pot was; the pot is the paid fees
 *   the decision named, one per player, and pot = rake + payouts.
 * - The journal: every unit sums to zero; its entries add up to its balances (the store keeps
 *   balances as it writes, so this ties the two); the wallet account is what the service says
 *   came in and went out; every class and account holds what the intents' statuses say it
 *   should (`positionOf` of each intent, summed); each intent's entries are one chain from its
 *   source to where it sits now.
 *
 * Pure: no I/O; a few passes over the records. `books.error` (a store that keeps no journal)
 * makes every journal check fail with it.
 */
import { type Intent, isTerminal } from '../src/ledger/intent.js';
import {
  type AccountBalance,
  accountClass,
  fromPot,
  type JournalEntry,
} from '../src/ledger/journal.js';
import { positionOf } from '../src/server/kinds/index.js';
import type { MatchDecision, MatchMeta } from '../src/server/kinds/meta.js';
import { attemptOf, mayReissue, wasShown } from '../src/server/kinds/payout-position.js';
import type { Check } from './invariants.js';

/** What the store's journal said at the end (soak/books.ts reads it). */
export interface Books {
  /** Why the store gave no journal (a store that keeps none), or null. */
  error: string | null;
  /** `balances()`: per class and unit. */
  classes: AccountBalance[];
  /** `balances(names)`: every account the intents name, per unit. */
  accounts: AccountBalance[];
  /** Every entry, paged through in seq order. */
  entries: JournalEntry[];
  /** `journal({ intentId })` of every intent. */
  byIntent: Map<string, JournalEntry[]>;
  /** Pages list entries in the order of their transactions (PostgreSQL), not strictly by seq. */
  commitOrder?: boolean;
}

/** The service's records of money in and out (msats, as decimal strings). */
export interface ServiceMoney {
  staticCharges: { id: string; slots: number; amount: string }[];
  withdrawalRequests: { id: string; status: string; amount: string }[];
  payments: { id: string; status: string; amount: string }[];
}

/** Which moment a payout check looks at: before time jumped past the codes' deadlines, or at the end. */
export type Phase = 'before the deadlines' | 'at the end';

const ENDED_MATCH = new Set(['completed', 'failed']);

function meta(match: Intent): MatchMeta {
  return match.meta as unknown as MatchMeta;
}

function decisionOf(match: Intent): MatchDecision | undefined {
  return meta(match).decision;
}

/** Resolved by an operator (`lightning.operator.resolve`), as the history says. */
export function byOperator(intent: Intent): boolean {
  return intent.history.some((h) => h.note?.startsWith('resolved by operator') === true);
}

/** A fee whose money came in: paid, or paid after its deadline (the late payment was seen). */
function paidIn(fee: Intent): boolean {
  return (
    fee.status === 'completed' ||
    (fee.status === 'expired' && fee.meta.latePaymentReported === true)
  );
}

/** A payout or refund attempt whose money reached (or may have reached) its player. */
function reached(attempt: Intent): boolean {
  if (attempt.kind === 'payment') {
    return (
      attempt.status === 'completed' || attempt.status === 'pending' || attempt.status === 'unknown'
    );
  }
  return attempt.status === 'completed' || (wasShown(attempt) && attempt.status !== 'failed');
}

/** How a payout or refund ended up for its player, or null when that is not a right end. */
function held(attempt: Intent): string | null {
  if (attempt.status === 'completed') {
    return byOperator(attempt) ? 'paid (resolved by an operator)' : 'claimed or paid';
  }
  if (attempt.status === 'pending' && attempt.kind === 'reward') return 'claimable';
  if (isTerminal(attempt.status) && positionOf(attempt).account.startsWith('owed:')) {
    return 'refused every attempt: owed, for an operator';
  }
  // Only the service's own expiry ends a shown code expired: it lived to its deadline (in a long
  // run, before time jumps), in its player's hands.
  if (attempt.status === 'expired' && wasShown(attempt)) {
    return 'shown, never claimed (lapsed)';
  }
  return null;
}

function byAttempt(a: Intent, b: Intent): number {
  return attemptOf(a) - attemptOf(b) || a.createdAt - b.createdAt;
}

function groups(intents: readonly Intent[]): Map<string, Intent[]> {
  const map = new Map<string, Intent[]>();
  for (const i of intents) {
    if (i.groupId === null || i.kind === 'match') continue;
    const list = map.get(i.groupId);
    if (list) list.push(i);
    else map.set(i.groupId, [i]);
  }
  return map;
}

/** The attempts at one payout or refund, oldest first; checks at most one reached its player. */
function attemptsOk(
  attempts: Intent[],
  what: string,
  amount: string,
  _phase: Phase,
  violations: string[],
  roads: Record<string, number>,
): void {
  const last = attempts.at(-1);
  if (!last) {
    violations.push(`${what}: never issued`);
    return;
  }
  for (const a of attempts) {
    if (a.amount !== amount) violations.push(`${what}: ${a.id} is for ${a.amount}, owed ${amount}`);
  }
  const reaching = attempts.filter(reached);
  if (reaching.length > 1) {
    violations.push(
      `${what}: ${reaching.length} attempts reached the player (${reaching.map((a) => `${a.id} ${a.status}`)})`,
    );
  }
  const end = held(last);
  if (end === null) {
    violations.push(
      `${what}: its last attempt ${last.id} (${last.kind}) is ${last.status}${wasShown(last) ? ', shown' : ''}`,
    );
  } else {
    roads[end] = (roads[end] ?? 0) + 1;
  }
}

/** Every settled match's winners hold their payouts; the pot adds up. */
export function payoutsHeld(intents: readonly Intent[], phase: Phase): Check {
  const violations: string[] = [];
  const roads: Record<string, number> = {};
  const byGroup = groups(intents);
  let checked = 0;
  for (const match of intents) {
    if (match.kind !== 'match' || match.status !== 'completed') continue;
    const decision = decisionOf(match);
    if (decision?.kind !== 'settle') {
      violations.push(`match ${match.id} is settled without a settle decision`);
      continue;
    }
    const group = byGroup.get(match.id) ?? [];
    const payouts = decision.payouts.reduce((sum, p) => sum + BigInt(p.amountMsat), 0n);
    if (BigInt(decision.rakeMsat) + payouts !== BigInt(decision.potMsat)) {
      violations.push(
        `match ${match.id}: rake ${decision.rakeMsat} + payouts ${payouts} != pot ${decision.potMsat}`,
      );
    }
    for (const payout of decision.payouts) {
      checked++;
      const attempts = group
        .filter((i) => i.meta.matchRole === 'payout' && i.playerId === payout.playerId)
        .sort(byAttempt);
      attemptsOk(
        attempts,
        `match ${match.id}: payout of ${payout.amountMsat} to ${payout.playerId}`,
        payout.amountMsat,
        phase,
        violations,
        roads,
      );
    }
    const strays = group.filter(
      (i) =>
        i.meta.matchRole === 'payout' && !decision.payouts.some((p) => p.playerId === i.playerId),
    );
    for (const s of strays) violations.push(`match ${match.id}: payout ${s.id} to a non-winner`);
  }
  return {
    name: `every winner of a settled match holds its payout (${phase})`,
    checked,
    violations,
    note: Object.entries(roads)
      .map(([road, n]) => `${road} ${n}`)
      .join(', '),
  };
}

/**
 * Every fee owed back was refunded once (an aborted match's paid fees, a fee paid after its
 * deadline or after the decision); no fee in a pot was; a pot is its paid fees, one per player.
 */
export function refundsAndPots(
  intents: readonly Intent[],
  charges: ServiceMoney['staticCharges'],
  phase: Phase,
): Check[] {
  const refunds: Check = {
    name: `every fee owed back was refunded, once; none in a pot was (${phase})`,
    checked: 0,
    violations: [],
  };
  const pots: Check = {
    name: 'no fee paid twice into a pot: one paid fee per player, pot = its fees',
    checked: 0,
    violations: [],
  };
  const roads: Record<string, number> = {};
  const byGroup = groups(intents);
  const byId = new Map(intents.map((i) => [i.id, i]));
  for (const match of intents) {
    if (match.kind !== 'match') continue;
    const decision = decisionOf(match);
    const group = byGroup.get(match.id) ?? [];
    if (decision) {
      pots.checked++;
      const ids = decision.paidFeeIds;
      const fees = ids.map((id) => byId.get(id));
      if (new Set(ids).size !== ids.length)
        pots.violations.push(`match ${match.id}: a fee named twice in its pot`);
      const players = fees.map((f) => f?.playerId);
      if (new Set(players).size !== players.length)
        pots.violations.push(`match ${match.id}: a player paid twice into its pot (${players})`);
      let pot = 0n;
      for (const [k, fee] of fees.entries()) {
        if (fee?.kind !== 'entryFee' || fee.groupId !== match.id || fee.status !== 'completed') {
          pots.violations.push(`match ${match.id}: pot names ${ids[k]}, not a paid fee of it`);
          continue;
        }
        pot += BigInt(fee.amount);
      }
      if (pot.toString() !== decision.potMsat)
        pots.violations.push(`match ${match.id}: pot ${decision.potMsat}, its fees ${pot}`);
    }
    if (!ENDED_MATCH.has(match.status) || !decision) continue;
    for (const fee of group.filter((i) => i.kind === 'entryFee')) {
      const attempts = group
        .filter((i) => i.meta.matchRole === 'refund' && i.meta.feeId === fee.id)
        .sort(byAttempt);
      const owed =
        paidIn(fee) &&
        (decision.kind === 'abort' ||
          fee.status !== 'completed' ||
          !decision.paidFeeIds.includes(fee.id));
      if (!owed) {
        if (attempts.length > 0)
          refunds.violations.push(
            `fee ${fee.id} (${fee.status}) of match ${match.id} was refunded, owed nothing`,
          );
        continue;
      }
      refunds.checked++;
      attemptsOk(
        attempts,
        `match ${match.id}: refund of fee ${fee.id}`,
        fee.amount,
        phase,
        refunds.violations,
        roads,
      );
    }
  }
  for (const charge of charges) {
    pots.checked++;
    if (charge.slots > 1)
      pots.violations.push(`static charge ${charge.id} was paid ${charge.slots} times`);
  }
  refunds.note = Object.entries(roads)
    .map(([road, n]) => `${road} ${n}`)
    .join(', ');
  return [refunds, pots];
}

function add(map: Map<string, bigint>, key: string, amount: bigint): void {
  map.set(key, (map.get(key) ?? 0n) + amount);
}

/** `account|unit` -> balance, as the intents' positions say: each at its place, taken from its source. */
function expectedBalances(intents: readonly Intent[]): Map<string, bigint> {
  const expected = new Map<string, bigint>();
  for (const intent of intents) {
    const p = positionOf(intent);
    if (p.account === p.source || p.amount === '0') continue;
    add(expected, `${p.account}|${p.unit}`, BigInt(p.amount));
    add(expected, `${p.source}|${p.unit}`, -BigInt(p.amount));
  }
  return expected;
}

function classTotals(byAccount: Map<string, bigint>): Map<string, bigint> {
  const totals = new Map<string, bigint>();
  for (const [key, amount] of byAccount) {
    const [account, unit] = key.split('|') as [string, string];
    add(totals, `${accountClass(account)}|${unit}`, amount);
  }
  return totals;
}

function asMap(rows: readonly AccountBalance[]): Map<string, bigint> {
  const map = new Map<string, bigint>();
  for (const row of rows) add(map, `${row.account}|${row.unit}`, BigInt(row.balance));
  return map;
}

/** Differences between two account|unit maps (a missing key is 0). */
function differences(
  label: [string, string],
  a: Map<string, bigint>,
  b: Map<string, bigint>,
  only?: Set<string>,
): string[] {
  const found: string[] = [];
  for (const key of new Set([...a.keys(), ...b.keys()])) {
    if (only && !only.has(key.split('|')[0] as string)) continue;
    const x = a.get(key) ?? 0n;
    const y = b.get(key) ?? 0n;
    if (x !== y) found.push(`${key.replace('|', ' in ')}: ${label[0]} ${x}, ${label[1]} ${y}`);
  }
  return found;
}

/** Every match ended, and each ended one's escrow account is empty. */
export function escrowsEmpty(intents: readonly Intent[], books: Books): Check {
  const check: Check = {
    name: 'every ended match: its escrow account balances to 0',
    checked: 0,
    violations: [],
  };
  if (books.error) return { ...check, violations: [`no journal: ${books.error}`] };
  const balances = asMap(books.accounts);
  for (const match of intents) {
    if (match.kind !== 'match' || !ENDED_MATCH.has(match.status)) continue;
    check.checked++;
    for (const [key, amount] of balances) {
      if (key.startsWith(`escrow:${match.id}|`) && amount !== 0n)
        check.violations.push(
          `match ${match.id} (${match.status}) holds ${amount} ${key.split('|')[1]} in escrow`,
        );
    }
  }
  return check;
}

/** The journal's own consistency, its agreement with the intents and with the service. */
export function journalChecks(
  intents: readonly Intent[],
  books: Books,
  service: ServiceMoney,
): Check[] {
  const names = {
    zero: 'the journal sums to zero in every unit',
    entries: "the journal's entries add up to its balances (accounts and classes)",
    wallet: "the wallet account = the service's money in minus out",
    intents: "every class and account holds what the intents' statuses say",
    chains: "each intent's entries are one chain from its source to its position",
  };
  if (books.error) {
    return Object.values(names).map((name) => ({
      name,
      checked: 0,
      violations: [`no journal: ${books.error}`],
    }));
  }
  const classes = asMap(books.classes);
  const accounts = asMap(books.accounts);

  // 1. Zero in every unit.
  const perUnit = new Map<string, bigint>();
  for (const [key, amount] of classes) add(perUnit, key.split('|')[1] as string, amount);
  const zero: Check = {
    name: names.zero,
    checked: perUnit.size,
    violations: [...perUnit]
      .filter(([, sum]) => sum !== 0n)
      .map(([unit, sum]) => `${unit} sums to ${sum}`),
    note: [...perUnit.keys()].join(', '),
  };

  // 2. Entries: ordered, unique, named after their intent and tag; their sums are the balances.
  const entries: Check = { name: names.entries, checked: books.entries.length, violations: [] };
  const scanned = new Map<string, bigint>();
  const ids = new Set<string>();
  // Pages list entries in seq order, except on PostgreSQL, where writes that ran at once are
  // listed in the order their transactions took ids and seq may step back (JournalEntry.seq):
  // there a seq must be unique, and one intent's entries in order (checked by the chains below).
  const seqs = new Set<number>();
  let lastSeq = Number.NEGATIVE_INFINITY;
  for (const e of books.entries) {
    if (seqs.has(e.seq) || (!books.commitOrder && e.seq <= lastSeq))
      entries.violations.push(`entry ${e.id} has seq ${e.seq} after ${lastSeq}`);
    seqs.add(e.seq);
    lastSeq = e.seq;
    if (ids.has(e.id)) entries.violations.push(`entry ${e.id} twice`);
    ids.add(e.id);
    if (e.id !== `${e.intentId}:${e.tag}`)
      entries.violations.push(`entry ${e.id} of ${e.intentId} tagged ${e.tag}`);
    if (!(BigInt(e.amount) > 0n) || e.debit === e.credit)
      entries.violations.push(`entry ${e.id}: ${e.amount} from ${e.debit} to ${e.credit}`);
    add(scanned, `${e.credit}|${e.unit}`, BigInt(e.amount));
    add(scanned, `${e.debit}|${e.unit}`, -BigInt(e.amount));
  }
  const named = new Set(books.accounts.map((a) => a.account));
  entries.violations.push(
    ...differences(['entries', 'balance'], scanned, accounts, named),
    ...differences(['entries', 'class balance'], classTotals(scanned), classes),
  );
  const perIntent = [...books.byIntent.values()].reduce((n, list) => n + list.length, 0);
  if (perIntent !== books.entries.length)
    entries.violations.push(`${books.entries.length} entries in all, ${perIntent} found by intent`);
  entries.note = `${books.entries.length} entries, ${named.size} accounts`;

  // 3. The wallet against the service: in = paid static charges, out = claimed and paid.
  const inMsat = service.staticCharges.reduce((s, c) => s + BigInt(c.slots) * BigInt(c.amount), 0n);
  const outMsat =
    service.withdrawalRequests
      .filter((w) => w.status === 'completed')
      .reduce((s, w) => s + BigInt(w.amount), 0n) +
    service.payments
      .filter((p) => p.status === 'completed')
      .reduce((s, p) => s + BigInt(p.amount), 0n);
  const wallet = accounts.get('wallet|msats') ?? 0n;
  const wallets: Check = {
    name: names.wallet,
    checked: 1,
    violations:
      wallet === outMsat - inMsat
        ? []
        : [
            `wallet ${wallet} msats; the service took in ${inMsat} and paid out ${outMsat} (wallet should be ${outMsat - inMsat})`,
          ],
    note: `in ${inMsat}, out ${outMsat} msats`,
  };

  // 4. Balances as the intents' statuses say (every account named, every class).
  const expected = expectedBalances(intents);
  const byStatus: Check = {
    name: names.intents,
    checked: classes.size + named.size,
    violations: [
      ...differences(['intents say', 'class balance'], classTotals(expected), classes),
      ...differences(['intents say', 'balance'], expected, accounts, named),
    ],
  };

  // 5. Each intent's entries: a chain source -> ... -> its position, stamped with the intent.
  const chains: Check = { name: names.chains, checked: intents.length, violations: [] };
  for (const intent of intents) {
    const list = books.byIntent.get(intent.id) ?? [];
    const p = positionOf(intent);
    const what = `${intent.kind} ${intent.id} (${intent.status})`;
    for (const e of list) {
      if (
        e.intentId !== intent.id ||
        e.playerId !== intent.playerId ||
        e.matchId !== intent.groupId
      )
        chains.violations.push(
          `${what}: entry ${e.id} stamped ${e.intentId}/${e.playerId}/${e.matchId}`,
        );
      if (e.unit !== p.unit)
        chains.violations.push(`${what}: entry ${e.id} in ${e.unit}, the intent in ${p.unit}`);
    }
    if (list.length === 0) {
      if (p.account !== p.source && p.amount !== '0')
        chains.violations.push(`${what}: no entries, yet it sits at ${p.account}`);
      continue;
    }
    let at = list[0]?.debit;
    if (at !== p.source)
      chains.violations.push(`${what}: its first entry leaves ${at}, its source is ${p.source}`);
    for (const e of list) {
      if (e.debit !== at)
        chains.violations.push(`${what}: entry ${e.id} leaves ${e.debit}, the money was at ${at}`);
      at = e.credit;
    }
    if (at !== p.account)
      chains.violations.push(`${what}: its entries end at ${at}, it sits at ${p.account}`);
  }
  return [zero, entries, wallets, byStatus, chains];
}

/** Every account the intents can have moved money in: `balances(names)` is asked for these. */
export function accountsOf(intents: readonly Intent[]): string[] {
  const names = new Set([
    'wallet',
    'inflight',
    'house:rewards',
    'house:fees',
    'house:rake',
    'house:unclaimed',
    'house:points',
  ]);
  for (const intent of intents) {
    const p = positionOf(intent);
    names.add(p.account);
    names.add(p.source);
    if (intent.kind === 'match') names.add(`escrow:${intent.id}`);
    const payout = ['reward', 'payment', 'withdrawal'].includes(intent.kind);
    if (fromPot(intent) || payout) {
      names.add(`claimable:${intent.playerId}`);
      names.add(`owed:${intent.playerId}`);
    }
  }
  return [...names];
}

/**
 * Attempts at a payout or refund that ended unpaid and are to be issued again, and are not yet:
 * the game is still at work (the process that saw the attempt end issues the next one).
 */
export function reissuesDue(intents: readonly Intent[]): Intent[] {
  const next = new Set(
    intents
      .filter((i) => fromPot(i) && attemptOf(i) > 1)
      .map((i) => `${String(i.meta.payKey)}#${attemptOf(i) - 1}`),
  );
  return intents.filter(
    (i) => mayReissue(i) && !next.has(`${String(i.meta.payKey)}#${attemptOf(i)}`),
  );
}
