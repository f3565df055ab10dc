/**
 * A settle with many winners records its queue of payouts once, in its own process: the
 * processes that drain the queue meanwhile record none of them (their look after a payout made
 * only ends the match, or tells its progress), and no reconciler starts recording the same
 * payouts beside a settle that is still at it. Each of them had every other process record the
 * whole queue again beside the settle (a refused create and a read per payout), which is what
 * kept a match of a thousand winners from settling until long after its last payout was sent
 * (bench/README.md, 7). Driven on one clock, step by step: after each payout the settle records,
 * time moves half the decision's grace and the other process runs a reconciler pass.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.js';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import type { Intent, NewIntent } from '../../src/ledger/intent.js';
import type { Posting } from '../../src/ledger/journal.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import type { CreateGuards } from '../../src/ledger/store.js';
import { createLightning, type Lightning } from '../../src/lightning.js';
import { eventually } from '../support/eventually.js';
import { quietLogger } from '../support/game.js';
import { openPaidMatch } from '../support/paid-match.js';

/**
 * A ledger that counts the payouts it records and runs `afterQueued` after each queued one; once
 * `shut()`, its queued creates wait at a gate until `letThrough()` (`most`: how many at once).
 */
class CountingLedger extends SqliteLedger {
  readonly payouts: string[] = [];
  afterQueued: ((intent: Intent) => Promise<void>) | null = null;
  waiting = 0;
  most = 0;
  #gate: Promise<void> | null = null;
  #release = () => {};
  shut(): void {
    this.#gate = new Promise((resolve) => {
      this.#release = resolve;
    });
  }
  letThrough(): void {
    this.#release();
    this.#gate = null;
  }

  override async create(
    intent: NewIntent,
    now?: number,
    guards?: CreateGuards,
    postings?: readonly Posting[],
  ): Promise<Intent> {
    if (guards?.queue === true && this.#gate) {
      this.waiting++;
      this.most = Math.max(this.most, this.waiting);
      await this.#gate;
      this.waiting--;
    }
    const made = await super.create(intent, now, guards, postings);
    if (made.meta.matchRole === 'payout') this.payouts.push(made.id);
    if (made.status === 'queued') await this.afterQueued?.(made);
    return made;
  }
}

const GRACE_MS = 4_000;
const WINNERS = 12;

describe('the payout queue: recorded once, by the settle, whatever drains it', function () {
  this.timeout(30_000);
  let emulator: Emulator;
  let dir: string;
  const closing: { close(): Promise<void> }[] = [];

  beforeEach(async () => {
    emulator = await startEmulator({ logger: quietLogger });
    dir = mkdtempSync(join(tmpdir(), 'queue-records-'));
  });
  afterEach(async () => {
    for (const c of closing.splice(0).reverse()) await c.close();
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A process of the game on the ledger file; its reconciler's timer all but idle. */
  function gameProcess(ledger: SqliteLedger, clock: ManualClock, port: number): Lightning {
    closing.push(ledger);
    const lightning = createLightning({
      apiKey: emulator.apiKey,
      baseUrl: emulator.url,
      publicUrl: `http://127.0.0.1:${port}`,
      logger: quietLogger,
      ledger,
      clock,
      reconciler: { intervalMs: 600_000, creatingGraceMs: GRACE_MS },
    });
    closing.push(lightning);
    return lightning;
  }

  it('the draining process records none of the payouts while the settle records them, each once', async () => {
    const clock = new ManualClock(Date.now());
    const path = join(dir, 'ledger.sqlite');
    const settling = new CountingLedger({ path });
    const draining = new CountingLedger({ path });
    const a = gameProcess(settling, clock, 2110);
    const b = gameProcess(draining, clock, 2111);
    await a.ready();
    await b.ready();
    const paid = await openPaidMatch(a, emulator, WINNERS, 'records');
    const told: number[] = [];
    b.on('match.progress', (view) => told.push(view.made));

    // After each payout the settle records: half the grace passes (the other process's look
    // after the payouts it made falls due), and the other process's reconciler takes its turn.
    settling.afterQueued = async () => {
      clock.advance(GRACE_MS / 2);
      await b.operator.reconciler.runOnce();
    };
    const settled = await a.matches.settle(paid.matchId, paid.shares);
    settling.afterQueued = null;
    expect(settled.status).to.equal('settling');
    expect(settled.total).to.equal(WINNERS);
    expect(draining.payouts, 'payouts recorded by the draining process').to.deep.equal([]);
    expect(settling.payouts).to.have.length(WINNERS);
    expect(told.length, 'the draining process told the progress').to.be.greaterThan(0);

    // It drains the rest, and its look after the last one made settles the match.
    const view = await eventually(
      async () => {
        clock.advance(1_000);
        await b.operator.reconciler.runOnce();
        const seen = await b.matches.get(paid.matchId);
        return seen.status === 'settled' && seen;
      },
      10_000,
      'the match settled',
    );
    expect(view.made).to.equal(WINNERS);
    expect(draining.payouts).to.deep.equal([]);
    const requests = emulator.control.withdrawalRequests();
    for (const playerId of Object.keys(paid.shares)) {
      expect(
        requests.filter((w) => w.internalId === playerId),
        playerId,
      ).to.have.length(1);
    }
  });

  it('the settle records several payouts of its queue at once, not one ledger round trip after the other', async () => {
    const ledger = new CountingLedger({ path: join(dir, 'gated.sqlite') });
    const a = gameProcess(ledger, new ManualClock(Date.now()), 2112);
    await a.ready();
    const paid = await openPaidMatch(a, emulator, WINNERS, 'lanes');
    ledger.shut();
    const settling = a.matches.settle(paid.matchId, paid.shares);
    // One after the other, a single create would wait at the gate, whatever the wait.
    await eventually(
      () => ledger.waiting >= 4,
      10_000,
      () => `4 creates waiting (${ledger.waiting})`,
    );
    ledger.letThrough();
    const settled = await settling;
    expect(ledger.most).to.be.at.least(4);
    expect(settled.status).to.equal('settling');
    const queued = await Promise.all(settled.payouts.map((p) => ledger.get(p.intentId)));
    expect(queued.map((i) => i?.history[0]?.to)).to.deep.equal(Array(WINNERS).fill('queued'));
  });
});
