/**
 * The payout queue's own share of the reconciler's claim (issue 30): a crowd's open codes keep
 * coming due for re-reads, and before this share every claim took the oldest due intents first,
 * re-reads that only a small part of the claim could serve, so payouts queued after them were
 * not claimed while the re-reads lasted (the load test's tournament drained at 3 or 4 a second
 * of 100). Now queued payouts are claimed in a share of their own, beside the re-reads.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import { createLightning, type Lightning } from '../../src/lightning.js';
import { eventually } from '../support/eventually.js';
import { quietLogger } from '../support/game.js';

/** More due re-reads than one claim takes (a tick's worth of the rate, plus one check). */
const CROWD = 110;

describe('the payout queue is claimed in its own share, beside the re-reads due before it', function () {
  this.timeout(30_000);
  let emulator: Emulator;
  let dir: string;
  let game: Lightning;
  let ledger: SqliteLedger;

  beforeEach(async () => {
    emulator = await startEmulator({ logger: quietLogger });
    dir = mkdtempSync(join(tmpdir(), 'queue-share-'));
    ledger = new SqliteLedger({ path: join(dir, 'ledger.db') });
    game = createLightning({
      apiKey: emulator.apiKey,
      baseUrl: emulator.url,
      publicUrl: 'http://127.0.0.1:2011',
      logger: quietLogger,
      ledger,
      rateLimit: { perSecond: 100, burst: 100 },
      // Stepped by hand; every code is due for a re-read 1 ms after it is made.
      reconciler: { enabled: false, firstCheckMs: 1, checksPerSecond: 1 },
    });
    await game.ready();
  });

  afterEach(async () => {
    await game.close();
    await ledger.close();
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('one pass sends the queued payouts although more re-reads were due before them', async () => {
    const codes = [];
    for (let i = 0; i < CROWD; i++) {
      codes.push(
        await game.reward({ playerId: `crowd-${i}`, amountMsat: 10_000, description: 'a code' }),
      );
    }
    // Every code is due before the queue is recorded.
    const last = codes.at(-1)?.nextCheckAt ?? Number.POSITIVE_INFINITY;
    await eventually(() => Date.now() > last);
    const { intents } = await game.rewardMany(
      Array.from({ length: 5 }, (_, i) => ({
        playerId: `winner-${i}`,
        amountMsat: 10_000,
        description: 'tournament prize',
      })),
    );
    expect(intents.map((i) => i.status)).to.deep.equal(Array(5).fill('queued'));

    await game.operator.reconciler.runOnce();

    const after = await Promise.all(intents.map((i) => game.books.ledger.get(i.id)));
    expect(after.map((i) => i?.status)).to.deep.equal(Array(5).fill('pending'));
    const sent = emulator.control.withdrawalRequests().map((w) => w.internalId);
    for (let i = 0; i < 5; i++) expect(sent).to.include(`winner-${i}`);
  });
});
