/**
 * A settle whose payouts go to the queue is recorded by one process (issue 30): the settle closes
 * the match's open fees, and another process sharing the PostgreSQL ledger that moves one of
 * them (its reconciler found the fee due) does not record the same payouts beside the settle. A
 * second recorder made every create twice, refused as duplicates, and raced the drains.
 */
import { expect } from 'chai';
import type { Intent } from '../../src/ledger/intent.js';
import type { Posting } from '../../src/ledger/journal.js';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import type { CreateGuards } from '../../src/ledger/store.js';
import { createLightning, type Lightning } from '../../src/lightning.js';
import { eventually } from '../support/eventually.js';
import { quietLogger } from '../support/game.js';
import { type HoldingProxy, startHoldingProxy } from '../support/holding-proxy.js';
import { openPaidMatch } from '../support/paid-match.js';
import { freshSchema } from '../support/postgres.js';
import { postgresWorld } from '../support/postgres-world.js';

/** The real ledger, counting the payouts this process asked it to record and its group reads. */
class CountingLedger extends PostgresLedger {
  payoutCreates = 0;
  groupReads = 0;

  override create(
    intent: Parameters<PostgresLedger['create']>[0],
    now?: number,
    guards?: CreateGuards,
    postings?: readonly Posting[],
  ): Promise<Intent> {
    if (intent.meta?.matchRole === 'payout') this.payoutCreates++;
    return super.create(intent, now, guards, postings);
  }

  override byGroup(groupId: string): Promise<Intent[]> {
    this.groupReads++;
    return super.byGroup(groupId);
  }
}

describe('a queued settle: one process records its payouts', function () {
  this.timeout(30_000);
  let proxy: HoldingProxy;
  const world = postgresWorld(() => proxy.release());
  beforeEach(async () => {
    proxy = await startHoldingProxy(world.emulator.url);
  });
  afterEach(async () => proxy.close());

  function processOn(
    schema: string,
    baseUrl: string,
    intervalMs: number,
  ): { lightning: Lightning; ledger: CountingLedger } {
    const ledger = new CountingLedger(world.pg.url, { schema, durability: 'none' });
    world.closing.push(ledger);
    const lightning = createLightning({
      apiKey: world.emulator.apiKey,
      baseUrl,
      publicUrl: 'http://127.0.0.1:2567',
      logger: quietLogger,
      ledger,
      reconciler: { intervalMs },
      payoutQueue: { fromWinners: 5 },
    });
    world.closing.push(lightning);
    return { lightning, ledger };
  }

  it('another process that closes one of its open fees leaves the recording to the settle', async () => {
    const schema = freshSchema();
    // The settler reaches the service through the proxy; both drain the queue.
    const settler = processOn(schema, proxy.url, 60_000);
    await settler.lightning.ready();
    const paid = await openPaidMatch(settler.lightning, world.emulator, 20, 'one');
    const late = await settler.lightning.matches.enter({
      matchId: paid.matchId,
      playerId: 'late',
    });
    const other = processOn(schema, world.emulator.url, 50);
    await other.lightning.ready();

    // The settle's close of the open fee reads its charge: held there, past the fee's deadline.
    proxy.hold('GET', `/v0/static-charges/${late.remoteId}`);
    const settled = settler.lightning.matches.settle(paid.matchId, paid.shares);
    await proxy.held();
    // The other process reads the fee meanwhile (a callback, its reconciler): it closes it, and
    // follows its move to the match.
    const reads = other.ledger.groupReads;
    expect((await other.lightning.books.refresh(late.id))?.status).to.equal('expired');
    await eventually(() => other.ledger.groupReads > reads, 10_000, 'the other read the match');
    proxy.release();

    expect((await settled).total).to.equal(20);
    await eventually(
      async () => (await other.lightning.matches.get(paid.matchId)).status === 'settled',
      20_000,
      'the queue drained and the match settled',
    );
    const requests = world.emulator.control.withdrawalRequests();
    expect(requests.map((w) => w.internalId).sort()).to.deep.equal(Object.keys(paid.shares).sort());
    // Each payout recorded once, by the settle: no create refused as a duplicate.
    expect(other.ledger.payoutCreates).to.equal(0, 'payouts the other process recorded');
    expect(settler.ledger.payoutCreates).to.equal(20);
  });
});
