/**
 * The live audit: the journal sums to zero; every ended match's escrow is zero and every winner
 * holds a payout; no `unknown` past its deadline; no player's tab below zero; the wallet moved
 * by what the journal says (within fees and `walletSettleMs`); cover (which counts the tabs as
 * owed) is not below zero. Each finding is reported once, in every process. Cost per run: the
 * journal since the last run, two balance reads, one wallet read, the unknowns, for each match
 * that moved, its record, group and escrow, and one balance read per 1,000 tabs drawn from.
 */
import { createHash } from 'node:crypto';
import { type Intent, isTerminal } from '../ledger/intent.js';
import { accounts, type JournalEntry } from '../ledger/journal.js';
import { type Balances, readBalances, sumsByUnit, type WalletReading } from './balances.js';
import type { Looker } from './checks.js';
import type { Engine } from './engine.js';
import type { AuditFinding } from './findings.js';
import { isMatch, type MatchIntent } from './kinds/match.js';
import { rejectedByOperator, wasShown } from './kinds/payout-position.js';

/** `findings`: all this run found; `reported`: those it was the first to report. */
export interface AuditReport {
  /** epoch ms */
  at: number;
  findings: AuditFinding[];
  reported: AuditFinding[];
  balances: Balances;
}

/** Journal pages one run reads at most; the rest is read by the next run. */
const MAX_PAGES = 50;
/** Findings this process remembers having reported. */
const MEMORY = 10_000;

export class Auditor {
  readonly #engine: Engine;
  #after: string | undefined;
  /** Matches whose money moved, by id, with when their latest entry was written. */
  readonly #matches = new Map<string, number>();
  #wallet: WalletReading | null = null;
  #baseline: { walletMsat: bigint; journalIn: bigint; at: number; outflow: bigint } | null = null;
  #mismatchSince: number | null = null;
  /** Journal entries read so far by this process: the order the wallet's shortfalls are kept in. */
  #read = 0;
  /** Intents whose money may have left the wallet unseen (a code shown, a create in flight). */
  readonly #mayLeave = new Map<string, number>();
  /** The shortfalls of the last `walletSettleMs`, oldest first (wallet.ts's rule, below). */
  #shortfalls: Shortfall[] = [];
  readonly #reported = new Set<string>();
  /** Tabs drawn from since the last run, and those found below zero (looked at again each run). */
  readonly #drawnTabs = new Set<string>();
  readonly #negativeTabs = new Set<string>();
  #running: Promise<AuditReport> | undefined;
  readonly #looker: Looker;

  /** `matches`: who looks at an ended match whose escrow still holds money. */
  constructor(engine: Engine, matches: Looker) {
    this.#engine = engine;
    this.#looker = matches;
  }

  /** The last reading of the wallet at the service. */
  get wallet(): WalletReading | null {
    return this.#wallet;
  }

  /** Balances now, with the last wallet reading (read once if there is none yet). */
  async balances(): Promise<Balances> {
    if (this.#wallet === null) await this.#readWallet();
    return readBalances(this.#engine.ledger, this.#wallet);
  }

  /** One audit now; a run in progress is shared, not started twice. */
  run(): Promise<AuditReport> {
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #run(): Promise<AuditReport> {
    const engine = this.#engine;
    const now = engine.now();
    const findings: AuditFinding[] = [];
    const outflow = await this.#readJournal(now);
    const wallet = await this.#readWallet();
    const balances = await readBalances(engine.ledger, this.#wallet);

    for (const [unit, sum] of sumsByUnit(await engine.ledger.balances())) {
      if (sum === 0n) continue;
      findings.push({
        type: 'journal-unbalanced',
        unit,
        sum: sum.toString(),
        message: `the journal does not sum to zero in ${unit}: ${sum}`,
      });
    }
    findings.push(...(await this.#checkMatches(now)));
    findings.push(...(await this.#checkTabs()));
    const unknowns = await engine.ledger.unknowns(1000);
    findings.push(...this.#checkUnknowns(unknowns, now));
    if (wallet !== null) {
      const unknownMsat = unknowns
        .filter((i) => i.unit === 'msats')
        .reduce((sum, i) => sum + BigInt(i.amount), 0n);
      findings.push(...this.#checkWallet(wallet, balances, outflow, unknownMsat, now));
      findings.push(...this.#checkCover(balances));
    }

    const reported: AuditFinding[] = [];
    for (const finding of findings) {
      if (await this.#firstReport(finding)) reported.push(finding);
    }
    for (const finding of reported) engine.logger.error(`audit: ${finding.message}`);
    if (reported.length > 0) engine.emit('audit', reported);
    return { at: now, findings, reported, balances };
  }

  /** Reads the entries since the last run: which matches' money moved, and what left the wallet. */
  async #readJournal(now: number): Promise<bigint> {
    const { lookbackMs } = this.#engine.settings.audit;
    let outflow = 0n;
    for (let page = 0; page < MAX_PAGES; page++) {
      const query =
        this.#after === undefined
          ? { since: Math.max(0, now - lookbackMs), limit: 1000 }
          : { after: this.#after, limit: 1000 };
      const { entries, next } = await this.#engine.ledger.journal(query);
      for (const entry of entries) outflow += this.#note(entry);
      const last = entries.at(-1);
      // Until the first entry is seen, each run reads from the look-back window again.
      if (last) this.#after = String(last.seq);
      if (next === null) break;
    }
    return outflow;
  }

  #note(entry: JournalEntry): bigint {
    const escrow = [entry.debit, entry.credit].find((a) => a.startsWith('escrow:'));
    const matchId = entry.matchId ?? escrow?.slice('escrow:'.length);
    if (matchId !== undefined) this.#matches.set(matchId, entry.at);
    if (entry.unit !== 'msats') return 0n;
    // A tab can only go below zero when drawn from.
    if (entry.debit.startsWith(TAB)) this.#drawnTabs.add(entry.debit);
    const order = ++this.#read;
    const shownAt = this.#mayLeave.get(entry.intentId);
    if (shownAt !== undefined && mayLeave(entry.debit)) this.#mayLeave.delete(entry.intentId);
    if (mayLeave(entry.credit)) {
      this.#mayLeave.set(entry.intentId, order);
      if (this.#mayLeave.size > MEMORY * 10) {
        this.#mayLeave.delete(this.#mayLeave.keys().next().value as string);
      }
    }
    if (entry.credit !== accounts.wallet) return 0n;
    const amount = BigInt(entry.amount);
    // A late record of money that had already left when a shortfall was seen explains it.
    for (const shortfall of this.#shortfalls) {
      if (shownAt !== undefined && shownAt <= shortfall.read) shortfall.explained += amount;
    }
    return amount;
  }

  async #checkMatches(now: number): Promise<AuditFinding[]> {
    const { ledger, settings } = this.#engine;
    const findings: AuditFinding[] = [];
    for (const [matchId, lastAt] of [...this.#matches]) {
      if (lastAt > now - settings.audit.settleMs) continue;
      const match = await ledger.get(matchId);
      if (!isMatch(match)) {
        this.#matches.delete(matchId);
        continue;
      }
      if (!isTerminal(match.status)) continue;
      this.#matches.delete(matchId);
      let left = await this.#escrowOf(matchId);
      if (left !== 0n) {
        // What a stopped process left unpaid: its look pays it; only what stays is a finding.
        await this.#looker
          .check(match)
          .catch((err: unknown) =>
            this.#engine.logger.warn(`audit: match ${matchId}: ${(err as Error).message}`),
          );
        left = await this.#escrowOf(matchId);
        if (left !== 0n) this.#matches.set(matchId, now);
      }
      if (left !== 0n) {
        findings.push({
          type: 'escrow-left',
          matchId,
          escrowMsat: left.toString(),
          message: `match ${matchId} ended with ${left} msats left in its escrow`,
        });
      }
      if (match.status === 'completed') findings.push(...(await this.#checkWinners(match)));
    }
    return findings;
  }

  /** Every tab drawn from since the last run, and every one below zero at it, read again. */
  async #checkTabs(): Promise<AuditFinding[]> {
    const names = [...new Set([...this.#negativeTabs, ...this.#drawnTabs])];
    this.#drawnTabs.clear();
    const findings: AuditFinding[] = [];
    for (let i = 0; i < names.length; i += 1000) {
      const rows = await this.#engine.ledger.balances(names.slice(i, i + 1000));
      for (const { account, unit, balance } of rows) {
        if (unit !== 'msats') continue;
        if (BigInt(balance) >= 0n) {
          this.#negativeTabs.delete(account);
          continue;
        }
        if (this.#negativeTabs.size < MEMORY) this.#negativeTabs.add(account);
        const playerId = account.slice(TAB.length);
        findings.push({
          type: 'tab-negative',
          playerId,
          balanceMsat: balance,
          message: `player ${playerId}'s tab is below zero: ${balance} msats (more was withdrawn than credited)`,
        });
      }
    }
    return findings;
  }

  async #escrowOf(matchId: string): Promise<bigint> {
    const [escrow] = await this.#engine.ledger.balances([accounts.escrow(matchId)]);
    return BigInt(escrow?.balance ?? '0');
  }

  async #checkWinners(match: MatchIntent): Promise<AuditFinding[]> {
    const decision = match.meta.decision;
    if (decision?.kind !== 'settle') return [];
    const group = await this.#engine.ledger.byGroup(match.id);
    const findings: AuditFinding[] = [];
    for (const { playerId } of decision.payouts) {
      const last = group
        .filter((i) => i.meta.matchRole === 'payout' && i.playerId === playerId)
        .at(-1);
      if (last !== undefined && holdsPayout(last)) continue;
      findings.push({
        type: 'winner-unpaid',
        matchId: match.id,
        playerId,
        intentId: last?.id ?? null,
        status: last?.status ?? null,
        message: `match ${match.id} settled, but its winner ${playerId} holds no claimable or paid payout (${last ? `${last.id} is ${last.status}` : 'none was made'})`,
      });
    }
    return findings;
  }

  #checkUnknowns(unknowns: readonly Intent[], now: number): AuditFinding[] {
    const { settings } = this.#engine;
    const findings: AuditFinding[] = [];
    for (const intent of unknowns) {
      if (this.#engine.rulesOf(intent.kind).lostAnswer !== 'deadline') continue;
      if (intent.expiresAt === null) continue;
      const deadline = intent.expiresAt + settings.reconciler.expiryMarginMs;
      if (now <= deadline + settings.audit.settleMs) continue;
      findings.push({
        type: 'unknown-overdue',
        intentId: intent.id,
        kind: intent.kind,
        deadline,
        message: `${intent.kind} ${intent.id} is still unknown ${Math.round((now - deadline) / 1000)} s after its deadline`,
      });
    }
    return findings;
  }

  /**
   * The wallet against the journal since the first reading. Above it for `walletSettleMs`: a
   * finding. Below it, only money that may have left excuses it: unknowns, and for
   * `walletSettleMs` outflows recorded later of codes and payments already out when it was seen.
   */
  #checkWallet(
    wallet: bigint,
    balances: Balances,
    outflow: bigint,
    unknownMsat: bigint,
    now: number,
  ): AuditFinding[] {
    const journalIn = BigInt(balances.walletNetMsat);
    if (this.#baseline === null) {
      this.#baseline = { walletMsat: wallet, journalIn, at: now, outflow: 0n };
      return [];
    }
    const base = this.#baseline;
    base.outflow += outflow;
    const { walletToleranceMsat, feeToleranceBps, walletSettleMs } = this.#engine.settings.audit;
    const expected = base.walletMsat + (journalIn - base.journalIn);
    const difference = wallet - expected;
    const tolerance =
      BigInt(walletToleranceMsat) + (base.outflow * BigInt(feeToleranceBps)) / 10_000n;
    const short = -difference - unknownMsat;
    let since: number | null = null;
    if (difference > tolerance) {
      this.#shortfalls = [];
      this.#mismatchSince ??= now;
      if (now - this.#mismatchSince >= walletSettleMs) since = this.#mismatchSince;
    } else {
      this.#mismatchSince = null;
      if (short <= tolerance) this.#shortfalls = [];
      else {
        this.#shortfalls.push({ at: now, read: this.#read, shortMsat: short, explained: 0n });
        // The latest shortfall seen at least walletSettleMs ago, and what came after it.
        const due = this.#shortfalls.findLastIndex((s) => s.at <= now - walletSettleMs);
        const seen = this.#shortfalls[due];
        if (seen !== undefined) {
          this.#shortfalls = this.#shortfalls.slice(due);
          if (seen.shortMsat - seen.explained > tolerance) since = seen.at;
        }
      }
    }
    if (since === null) return [];
    // Reported once; later moves are measured from here (a deposit is one finding, not many).
    this.#baseline = { walletMsat: wallet, journalIn, at: now, outflow: 0n };
    this.#mismatchSince = null;
    this.#shortfalls = [];
    return [
      {
        type: 'wallet-mismatch',
        walletMsat: wallet.toString(),
        expectedMsat: expected.toString(),
        differenceMsat: difference.toString(),
        since,
        message: `the wallet holds ${wallet} msats where the journal says ${expected} (${difference > 0n ? '+' : ''}${difference}) since ${new Date(since).toISOString()}: money moved at the service without a record here`,
      },
    ];
  }

  #checkCover(balances: Balances): AuditFinding[] {
    const cover = BigInt(balances.coverMsat ?? '0');
    if (cover >= 0n) return [];
    return [
      {
        type: 'cover-short',
        coverMsat: cover.toString(),
        message: `the wallet does not cover what the game owes: short by ${-cover} msats (owed to players ${balances.owedToPlayersMsat}, of which tabs ${balances.tabsMsat}, escrow ${balances.escrowMsat}, in flight ${balances.inFlightMsat})`,
      },
    ];
  }

  /** The wallet at the service, in msats; null when it cannot be read now (logged). */
  async #readWallet(): Promise<bigint | null> {
    try {
      const msat = await this.#engine.port.readWallet();
      this.#wallet = { msat: msat.toString(), at: this.#engine.now() };
      return msat;
    } catch (err) {
      this.#engine.logger.warn(`audit: the wallet could not be read: ${(err as Error).message}`);
      return null;
    }
  }

  /** True the first time any process reports this finding. */
  async #firstReport(finding: AuditFinding): Promise<boolean> {
    const key = findingKey(finding);
    if (this.#reported.has(key)) return false;
    this.#reported.add(key);
    if (this.#reported.size > MEMORY) {
      this.#reported.delete(this.#reported.values().next().value as string);
    }
    try {
      return await this.#engine.ledger.recordEvent(`once:audit:${key}`);
    } catch {
      return true;
    }
  }
}

/** A shortfall of the wallet seen by one audit run (see `#checkWallet`). */
interface Shortfall {
  at: number;
  /** How many journal entries this process had read then. */
  read: number;
  /** Below what the journal allows, beyond the unknowns, in msats. */
  shortMsat: bigint;
  /** Outflows recorded since, of codes and payments already out then. */
  explained: bigint;
}

const TAB = accounts.tab('');

/** Whether money in this account may leave the wallet before the journal hears of it. */
function mayLeave(account: string): boolean {
  return account === accounts.inflight || account.startsWith('claimable:');
}

/** A winner's payout that counts: claimable, claimed, shown and expired, or an operator's call. */
function holdsPayout(payout: Intent): boolean {
  if (payout.status === 'pending' || payout.status === 'completed') return true;
  if (payout.status === 'expired' && wasShown(payout)) return true;
  if (payout.status === 'failed' && rejectedByOperator(payout)) return true;
  return payout.history.some((h) => h.note?.startsWith('resolved by operator') === true);
}

/** A finding's fields, hashed: the same finding in every process, with a short key. */
function findingKey(finding: AuditFinding): string {
  const { message: _message, ...fields } = finding;
  return createHash('sha256').update(JSON.stringify(fields)).digest('base64url');
}
