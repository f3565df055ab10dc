/** The LedgerStore contract, once-markers: run on every store (contract.ts). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { InvalidIntentError, type LedgerStore } from '../../../src/ledger/index.js';

import { eachStore, type LedgerFactory, rejection } from './support.js';

export function describeOnceContract(factory: LedgerFactory): void {
  describe('once-markers', () => {
    let store: LedgerStore;
    eachStore(factory, (made) => {
      store = made;
    });

    describe('recordEvent', () => {
      const day = 24 * 3600 * 1000;

      it('remembers an event id for good: a repeat years later, after other ids, is still a repeat', async () => {
        const t0 = Date.UTC(2026, 0, 1);
        const webhook = `ramp:${randomUUID()}`;
        const other = `widget:${randomUUID()}`;
        const once = `once:match.funded:${randomUUID()}`;
        assert.equal(await store.recordEvent(webhook, t0), true);
        assert.equal(await store.recordEvent(webhook, t0 + 1), false);
        // Ids seen long after the first: a store that forgot old ids would do it now.
        assert.equal(await store.recordEvent(other, t0 + 8 * day), true);
        assert.equal(await store.recordEvent(once, t0 + 400 * day), true);
        for (const at of [t0 + 8 * day, t0 + 400 * day, t0 + 100 * 365 * day]) {
          assert.equal(await store.recordEvent(webhook, at), false, `at +${(at - t0) / day} days`);
          assert.equal(await store.recordEvent(other, at), false);
          assert.equal(await store.recordEvent(once, at), false);
        }
        // A repeat stamped before the first sighting (a slower process's clock) is a repeat too.
        assert.equal(await store.recordEvent(webhook, t0 - day), false);
        assert.equal(await store.recordEvent(`ramp:${randomUUID()}`, t0 + 100 * 365 * day), true);
      });

      it('lets exactly one of many racing calls with one id win', async () => {
        const id = `widget:${randomUUID()}`;
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => store.recordEvent(id, 1_000 + i * day)),
        );
        assert.equal(results.filter(Boolean).length, 1);
      });

      it('refuses an empty or oversized id and a nonsense time, remembering nothing', async () => {
        for (const bad of ['', 'x'.repeat(513)]) {
          await rejection(store.recordEvent(bad), InvalidIntentError);
        }
        const id = `ramp:${randomUUID()}`;
        await rejection(store.recordEvent(id, -1), InvalidIntentError);
        await rejection(store.recordEvent(id, 1.5), InvalidIntentError);
        assert.equal(await store.recordEvent(id), true);
      });
    });
  });
}
