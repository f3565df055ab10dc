/** The LedgerStore contract, the rate bucket: run on every store (contract.ts). */
import assert from 'node:assert/strict';
import { InvalidIntentError, type LedgerStore } from '../../../src/ledger/index.js';
import { eventually } from '../../support/eventually.js';

import { eachStore, type LedgerFactory, rejection } from './support.js';

export function describeRateContract(factory: LedgerFactory): void {
  describe('the rate bucket', () => {
    let store: LedgerStore;
    eachStore(factory, (made) => {
      store = made;
    });

    describe('the outbound rate (takeToken, holdCalls)', () => {
      // Real time: a store shared by processes counts by its own clock, whatever `now` says.
      // Wide margins: a loaded machine may take a few hundred ms between two takes.
      const limit = { perSecond: 2, burst: 3 };
      const take = (keep?: number) => store.takeToken(limit, Date.now(), keep);
      const within = (wait: number, low: number, high: number) =>
        assert.ok(wait >= low && wait <= high, `waits ${wait} ms, not ${low} to ${high}`);

      it('hands out a full burst, then one token per 1/perSecond, and says how long to wait', async () => {
        for (let i = 0; i < 3; i++) assert.equal(await take(), 0);
        const wait = await take();
        within(wait, 1, 500);
        // Asking again takes nothing: the wait only shrinks with time.
        within(await take(), 1, wait);
        await eventually(async () => (await take()) === 0, 2_000, 'the next token');
        within(await take(), 1, 500);
      });

      it('holds every take until a hold ends, then starts from an empty bucket', async () => {
        assert.equal(await take(), 0);
        await store.holdCalls(Date.now() + 10_000, Date.now());
        within(await take(), 8_000, 10_000);
        // An earlier hold does not shorten the one in force.
        await store.holdCalls(Date.now() + 100, Date.now());
        within(await take(), 7_000, 10_000);
        // A later one extends it.
        await store.holdCalls(Date.now() + 30_000, Date.now());
        within(await take(), 28_000, 30_000);
      });

      it('with `keep`, takes a token only if that many more remain', async () => {
        assert.equal(await take(), 0);
        assert.equal(await take(), 0);
        // One left: a take that keeps one waits; a plain take gets the last.
        within(await take(1), 1, 500);
        assert.equal(await take(0), 0);
        within(await take(0), 1, 500);
        await rejection(take(3), InvalidIntentError);
        await rejection(take(0.5), InvalidIntentError);
      });

      it('refuses a limit or a time that is not one', async () => {
        for (const bad of [
          { perSecond: 0, burst: 1 },
          { perSecond: 5, burst: 0.5 },
          { perSecond: Number.NaN, burst: 1 },
          { perSecond: 5, burst: Number.POSITIVE_INFINITY },
        ]) {
          await rejection(store.takeToken(bad, Date.now()), InvalidIntentError);
        }
        await rejection(store.takeToken(limit, -1), InvalidIntentError);
        await rejection(store.holdCalls(1.5, Date.now()), InvalidIntentError);
      });
    });
  });
}
