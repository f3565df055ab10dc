/**
 * What stops the payout queue (issue 30): a pause stops it at once, in the draining process and
 * from another process sharing the ledger (the drain reads the pause after its token, not
 * before: the token may take seconds), and a player blocked while his reward waited in the queue
 * never gets it (it ends failed, with a line in the operator log).
 */

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { REQUEST_CHANNEL, type RequestEvent } from '../../src/api/diagnostics.js';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import type { Intent } from '../../src/ledger/intent.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import { createLightning, type Lightning } from '../../src/lightning.js';
import type { LightningOptions } from '../../src/server/options.js';
import { eventually } from '../support/eventually.js';
import { quietLogger } from '../support/game.js';

const RATE = { perSecond: 50, burst: 1 };
/**
 * Queued at once: the pause must land mid-drain, and 200 at 50 a second leave almost 4 s of
 * queue after the first 10 are sent. Each wait below reads every one of them from the ledger.
 */
const PAYOUTS = 200;

describe('the payout queue stops at once: a pause, a blocked player', function () {
  this.timeout(30_000);
  let emulator: Emulator;
  let dir: string;
  const closing: { close(): Promise<void> }[] = [];

  beforeEach(async () => {
    emulator = await startEmulator({ logger: quietLogger });
    emulator.control.setRateLimit({ perSecond: 60, burst: 5 });
    dir = mkdtempSync(join(tmpdir(), 'queue-stops-'));
  });

  afterEach(async () => {
    for (const c of closing.splice(0).reverse()) await c.close();
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A process of the game on the shared SQLite file. */
  async function gameProcess(options: Partial<LightningOptions> = {}): Promise<Lightning> {
    const ledger = new SqliteLedger({ path: join(dir, 'ledger.db') });
    closing.push(ledger);
    const lightning = createLightning({
      apiKey: emulator.apiKey,
      baseUrl: emulator.url,
      publicUrl: 'http://127.0.0.1:2010',
      logger: quietLogger,
      ledger,
      ...options,
    } as LightningOptions);
    closing.push(lightning);
    await lightning.ready();
    return lightning;
  }

  const posts = () => emulator.control.withdrawalRequests().length;

  /** When each payout moved to `creating`, if it did. */
  function movedAt(intent: Intent): number | undefined {
    return intent.history.find((h) => h.to === 'creating')?.at;
  }

  async function pauseWhileDraining(pauser: (drainer: Lightning) => Promise<Lightning>) {
    const drainer = await gameProcess({ rateLimit: RATE, reconciler: { intervalMs: 20 } });
    const other = await pauser(drainer);
    const { intents, refused } = await drainer.rewardMany(
      Array.from({ length: PAYOUTS }, (_, i) => ({
        playerId: `p${i}`,
        amountMsat: 10_000,
        description: 'leaderboard',
      })),
    );
    expect(refused).to.deep.equal([]);
    // The pause comes as the tenth create is answered, whatever the machine's load: the rest of
    // the queue is still to go (waiting for tokens, or not yet claimed).
    let answered = 0;
    let pausing: Promise<unknown> | undefined;
    const onRequest = (message: unknown) => {
      const event = message as RequestEvent;
      if (event.operation !== 'withdrawalRequests.create' || event.outcome !== 'ok') return;
      if (++answered === 10) pausing = other.operator.pause('ops', 'checking the wallet');
    };
    subscribe(REQUEST_CHANNEL, onRequest);
    try {
      await eventually(() => pausing, 10_000, 'the queue drains');
      await pausing;
    } finally {
      unsubscribe(REQUEST_CHANNEL, onRequest);
    }
    const pausedAt = Date.now();
    const read = () =>
      Promise.all(intents.map(async (i) => (await drainer.books.ledger.get(i.id)) ?? i));
    // The drainer goes on claiming while paused: wait until it has put some off (due again long
    // after the pause, not sent), and until every drain under way has ended: none is left
    // between its move and its answer, none holds a lease.
    let now: Intent[] = [];
    await eventually(
      async () => {
        now = await read();
        const at = Date.now();
        const putOff = now.some(
          (i) => i.status === 'queued' && (i.nextCheckAt ?? 0) > pausedAt + 5_000,
        );
        return (
          putOff &&
          now.every(
            (i) =>
              i.status !== 'creating' &&
              (i.status !== 'queued' || i.leaseOwner === null || (i.leaseUntil ?? 0) <= at),
          )
        );
      },
      10_000,
      'drains put off by the pause, and every drain under way ended',
    );
    const moved = now.filter((i) => movedAt(i) !== undefined);
    return { drainer, moved, pausedAt, intents: now };
  }

  it('a pause in the draining process: no payout moves to creating after pause() returned, nor is sent', async () => {
    const { drainer, moved, pausedAt, intents } = await pauseWhileDraining(async (d) => d);
    const late = moved.filter((i) => (movedAt(i) ?? 0) > pausedAt);
    expect(late.map((i) => i.id)).to.deep.equal([]);
    // What reached the service is exactly what had moved before the pause: each create once.
    expect(posts()).to.equal(moved.length);
    expect(intents.filter((i) => i.status === 'queued').length).to.equal(PAYOUTS - moved.length);
    expect(intents.filter((i) => i.status === 'failed')).to.deep.equal([]);

    // Resumed, the queue goes on.
    await drainer.operator.resume('ops');
    await eventually(() => posts() > moved.length, 20_000, 'the queue drains again');
  });

  it('a pause from another process sharing the ledger: the drainer sends nothing more', async () => {
    const { moved, pausedAt } = await pauseWhileDraining(() =>
      gameProcess({ reconciler: { enabled: false } }),
    );
    const late = moved.filter((i) => (movedAt(i) ?? 0) > pausedAt);
    // The drainer reads the ledger's pause after each token, just before its move: only a drain
    // that read it in the round trip before the pause was written may still move (one token at
    // a time: burst 1, 20 ms apart).
    expect(late.length).to.be.at.most(1);
    expect(posts()).to.equal(moved.length);
  });

  it('a player blocked while his reward is queued: it ends failed, never sent, with a line in the operator log', async () => {
    const game = await gameProcess({ rateLimit: RATE, reconciler: { enabled: false } });
    const { intents } = await game.rewardMany([
      { playerId: 'mallory', amountMsat: 10_000, description: 'prize' },
      { playerId: 'alice', amountMsat: 10_000, description: 'prize' },
    ]);
    await game.operator.block('mallory', 'ops', 'chargeback fraud');
    await game.operator.reconciler.runOnce();

    const [mallory, alice] = await Promise.all(intents.map((i) => game.books.ledger.get(i.id)));
    expect(mallory?.status).to.equal('failed');
    expect(mallory?.history.map((h) => h.to)).to.deep.equal(['queued', 'failed']);
    expect(alice?.status, alice?.error ?? '').to.equal('pending');
    expect(emulator.control.withdrawalRequests().map((w) => w.internalId)).to.deep.equal(['alice']);
    expect(await game.books.claims('mallory')).to.deep.equal([]);
    const log = await game.operator.log({ playerId: 'mallory' });
    expect(log.actions.map((a) => [a.action, a.intentId, a.before, a.after])).to.deep.equal([
      ['block', null, 'unblocked', 'blocked'],
      ['reject', mallory?.id, 'queued', 'failed'],
    ]);
    // The game's own reward went back to the game: nothing is left in flight.
    expect(await game.books.ledger.balances(['inflight', 'claimable:mallory'])).to.deep.equal([
      { account: 'inflight', unit: 'msats', balance: '0' },
      { account: 'claimable:mallory', unit: 'msats', balance: '0' },
    ]);
  });
});
