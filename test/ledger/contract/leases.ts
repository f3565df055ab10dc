/** The LedgerStore contract, leases and the queue: run on every store (contract.ts). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { BudgetExceededError } from '../../../src/errors.js';
import {
  IllegalTransitionError,
  type Intent,
  type IntentStatus,
  InvalidIntentError,
  type LedgerStore,
  type NewIntent,
} from '../../../src/ledger/index.js';
import { afterWrite, postingsFor } from '../../../src/ledger/journal.js';
import { positionOf } from '../../../src/server/kinds/index.js';

import {
  asCreated,
  assertIncludes,
  eachStore,
  type LedgerFactory,
  newIntent,
  rejection,
  walkTo,
} from './support.js';

export function describeLeaseContract(factory: LedgerFactory): void {
  describe('leases and the queue', () => {
    let store: LedgerStore;
    eachStore(factory, (made) => {
      store = made;
    });

    const intentIn = (status: IntentStatus, overrides: Partial<NewIntent> = {}) =>
      walkTo(store, status, overrides);

    describe('claimDue and release', () => {
      async function due(nextCheckAt: number, status: IntentStatus = 'pending'): Promise<Intent> {
        const created = await store.create(newIntent({ nextCheckAt }), 1);
        if (status === 'creating') return created;
        const moved = await store.transition(created.id, 'creating', status, { now: 2 });
        if (!moved) assert.fail('transition refused');
        return moved;
      }

      it('leases due open intents, ordered by nextCheckAt, up to the limit', async () => {
        const c = await due(300);
        const a = await due(100, 'creating');
        const b = await due(200, 'unknown');
        await due(400); // not yet due
        await store.transition((await due(50)).id, 'pending', 'completed');
        await store.create(newIntent({ nextCheckAt: null }));

        const claimed = await store.claimDue(300, 2, 'worker-1', 1_000);
        assert.deepEqual(
          claimed.map((i) => i.id),
          [a.id, b.id],
        );
        // A lease says who is looking, not that the intent changed: everything else stays.
        assert.deepEqual(claimed, [
          { ...a, leaseOwner: 'worker-1', leaseUntil: 1_300 },
          { ...b, leaseOwner: 'worker-1', leaseUntil: 1_300 },
        ]);
        for (const intent of claimed) assert.deepEqual(await store.get(intent.id), intent);
        const rest = await store.claimDue(300, 10, 'worker-1', 1_000);
        assert.deepEqual(
          rest.map((i) => i.id),
          [c.id],
        );
      });

      it('never hands out an intent while its lease runs', async () => {
        const intent = await due(100);
        assert.equal((await store.claimDue(100, 10, 'worker-1', 1_000)).length, 1);
        assert.deepEqual(await store.claimDue(500, 10, 'worker-2', 1_000), []);
        assert.deepEqual(await store.claimDue(1_099, 10, 'worker-1', 1_000), []);
        assert.equal((await store.get(intent.id))?.leaseOwner, 'worker-1');
      });

      it('hands out an intent again once its lease has expired', async () => {
        const intent = await due(100);
        await store.claimDue(100, 10, 'worker-1', 1_000);
        const [again] = await store.claimDue(1_100, 10, 'worker-2', 1_000);
        assertIncludes(again, { id: intent.id, leaseOwner: 'worker-2', leaseUntil: 2_100 });
      });

      it('gives concurrent claimers disjoint sets', async () => {
        const ids = new Set<string>();
        for (let i = 0; i < 30; i++) ids.add((await due(i)).id);
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) => store.claimDue(100, 7, `worker-${i}`, 1_000)),
        );
        const seen = results.flat().map((i) => i.id);
        assert.equal(new Set(seen).size, seen.length);
        assert.deepEqual(new Set(seen), ids);
      });

      it('returns nothing for a limit of 0 and rejects nonsense arguments', async () => {
        await due(1);
        assert.deepEqual(await store.claimDue(100, 0, 'worker-1', 1_000), []);
        await rejection(store.claimDue(100, -1, 'worker-1', 1_000), InvalidIntentError);
        await rejection(store.claimDue(100, 1, '', 1_000), InvalidIntentError);
        await rejection(store.claimDue(100, 1, 'worker-1', 0), InvalidIntentError);
        assert.equal((await store.claimDue(100, 1, 'worker-1', 1_000)).length, 1);
      });

      it('releases a lease held by its owner, and only by its owner', async () => {
        const intent = await due(100);
        await store.claimDue(100, 10, 'worker-1', 1_000);
        await store.release(intent.id, 'worker-2');
        assert.equal((await store.get(intent.id))?.leaseOwner, 'worker-1');
        await store.release(intent.id, 'worker-1');
        const released = await store.get(intent.id);
        assertIncludes(released, { leaseOwner: null, leaseUntil: null, updatedAt: 2 });
        const [again] = await store.claimDue(200, 10, 'worker-2', 1_000);
        assert.equal(again?.id, intent.id);
        await store.release(randomUUID(), 'worker-2');
      });
    });

    describe('the payout queue', () => {
      const queue = { queue: true };

      it('records a payout queued: due as given, open, counted, claimed by one owner', async () => {
        const playerId = `player-${randomUUID()}`;
        const before = await store.openCount();
        const queued = await store.create(
          newIntent({ playerId, amount: '5000', nextCheckAt: 1_000 }),
          1_000,
          queue,
        );
        assert.equal(queued.status, 'queued');
        assert.equal(queued.nextCheckAt, 1_000);
        assert.deepEqual(queued.history, [{ at: 1_000, from: null, to: 'queued' }]);
        assert.equal((await store.get(queued.id))?.status, 'queued');
        assert.deepEqual(
          (await store.openByPlayer(playerId)).map((i) => i.id),
          [queued.id],
        );
        assert.equal(await store.openCount(), before + 1);
        // Not a payout: the queue does not apply.
        const fee = await store.create(
          newIntent({ playerId, kind: 'entryFee', nextCheckAt: 1_000 }),
          1_000,
          queue,
        );
        assert.equal(fee.status, 'creating');
        // Due at once, leased to one owner: another claim passes over it.
        const first = await store.claimDue(1_000, 100, 'a', 30_000);
        assert.ok(first.some((i) => i.id === queued.id));
        const second = await store.claimDue(1_000, 100, 'b', 30_000);
        assert.ok(!second.some((i) => i.id === queued.id));
      });

      it('claims queued payouts in a share of their own, whatever re-reads were due before them', async () => {
        // Re-reads due before the queue (a crowd's unpaid charges) fill any single limit first.
        const reads: Intent[] = [];
        for (let i = 0; i < 6; i++) {
          const created = await store.create(newIntent({ nextCheckAt: 100 + i }), 1);
          const moved = await store.transition(created.id, 'creating', 'pending', { now: 2 });
          if (!moved) assert.fail('transition refused');
          reads.push(moved);
        }
        const queued: Intent[] = [];
        for (let i = 0; i < 4; i++) {
          queued.push(await store.create(newIntent({ nextCheckAt: 500 + i }), 500, queue));
        }
        // A share of 3 for the queue: its 3 oldest, beside the 2 oldest re-reads.
        const claimed = await store.claimDue(1_000, 2, 'a', 30_000, 3);
        assert.deepEqual(
          claimed.map((i) => i.id),
          [reads[0]?.id, reads[1]?.id, queued[0]?.id, queued[1]?.id, queued[2]?.id],
        );
        // A share of 0: no queued payout, however many others the limit leaves room for.
        const noQueue = await store.claimDue(1_000, 3, 'b', 30_000, 0);
        assert.deepEqual(
          noQueue.map((i) => i.id),
          [reads[2]?.id, reads[3]?.id, reads[4]?.id],
        );
        // Without a share, queued payouts wait their turn among the others (by nextCheckAt).
        const rest = await store.claimDue(1_000, 5, 'c', 30_000);
        assert.deepEqual(
          rest.map((i) => i.id),
          [reads[5]?.id, queued[3]?.id],
        );
        await rejection(store.claimDue(1_000, 1, 'c', 30_000, -1), InvalidIntentError);
      });

      it('moves queued -> creating once (of racing writers one wins), then on; history kept', async () => {
        const queued = await store.create(newIntent({ nextCheckAt: 100 }), 100, queue);
        const racers = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            store.transition(queued.id, 'queued', 'creating', {
              now: 200 + i,
              patch: { nextCheckAt: 30_200 },
            }),
          ),
        );
        assert.equal(racers.filter((r) => r !== null).length, 1);
        const sent = await store.transition(queued.id, 'creating', 'pending', { now: 300 });
        assert.deepEqual(
          sent?.history.map((h) => [h.from, h.to]),
          [
            [null, 'queued'],
            ['queued', 'creating'],
            ['creating', 'pending'],
          ],
        );
        assert.deepEqual(
          (await store.get(queued.id))?.history.map((h) => h.to),
          ['queued', 'creating', 'pending'],
        );
        const dropped = await store.create(newIntent(), 100, queue);
        assert.equal(
          (await store.transition(dropped.id, 'queued', 'failed', { now: 400 }))?.status,
          'failed',
        );
        const third = await store.create(newIntent(), 100, queue);
        await rejection(store.transition(third.id, 'queued', 'pending'), IllegalTransitionError);
        await rejection(store.transition(third.id, 'creating', 'queued'), IllegalTransitionError);
      });

      it('moves out of any open status named among all five (queued included)', async () => {
        const open = ['held', 'queued', 'creating', 'pending', 'unknown'] as const;
        for (const status of ['queued', 'unknown'] as const) {
          const intent = await intentIn(status);
          const ended = await store.transition(intent.id, [...open], 'failed', { now: 500 });
          assert.equal(ended?.status, 'failed', `from ${status}`);
        }
      });

      it('lets the hold win: a payout both would take is held', async () => {
        const both = await store.create(newIntent({ amount: '900', nextCheckAt: 5 }), 5, {
          queue: true,
          hold: { aboveMsat: 100 },
        });
        assert.equal(both.status, 'held');
        assert.equal(both.nextCheckAt, null);
        const under = await store.create(newIntent({ amount: '90', nextCheckAt: 5 }), 5, {
          queue: true,
          hold: { aboveMsat: 100 },
        });
        assert.equal(under.status, 'queued');
      });

      it('journals a queued payout as a create in flight; its move to creating adds nothing', async () => {
        const input = { ...newIntent({ amount: '700' }), id: randomUUID() };
        const draft = asCreated(input, 10);
        const queued = await store.create(input, 10, queue, postingsFor(null, draft, positionOf));
        assert.equal(queued.status, 'queued');
        const [entry] = (await store.journal({ intentId: queued.id })).entries;
        assert.equal(entry?.credit, 'inflight');
        assert.equal(entry?.debit, 'house:rewards');
        const moved = afterWrite(queued, 'creating', {}, 20);
        assert.deepEqual(postingsFor(queued, moved, positionOf), []);
      });

      it('checks budgets and limits on a queued payout as on any create', async () => {
        const playerId = `player-${randomUUID()}`;
        const guards = {
          queue: true,
          budgets: [{ scope: 'player' as const, limitMsat: 1_000, windowMs: 60_000 }],
        };
        await store.create(newIntent({ playerId, amount: '800' }), 1_000, guards);
        await rejection(
          store.create(newIntent({ playerId, amount: '300' }), 1_001, guards),
          BudgetExceededError,
        );
        assert.equal((await store.openByPlayer(playerId)).length, 1);
      });
    });

    describe('unknowns and advanceChecks', () => {
      it('lists the unknown intents, oldest first, up to the limit, and no others', async () => {
        const first = await store.create(newIntent(), 10);
        const second = await store.create(newIntent(), 20);
        const third = await store.create(newIntent(), 30);
        await store.create(newIntent(), 5); // stays creating
        for (const intent of [third, first, second]) {
          await store.transition(intent.id, 'creating', 'unknown', { now: 40 });
        }
        await intentIn('pending');
        await intentIn('failed');
        assert.deepEqual(
          (await store.unknowns()).map((i) => i.id),
          [first.id, second.id, third.id],
        );
        assert.deepEqual(
          (await store.unknowns(2)).map((i) => i.id),
          [first.id, second.id],
        );
        assert.deepEqual(await store.unknowns(0), []);
        assert.deepEqual((await store.unknowns())[0], await store.get(first.id));
      });

      it('forgets an unknown once it is resolved, and lists one that became unknown later', async () => {
        const a = await intentIn('unknown');
        const b = await intentIn('unknown');
        await store.transition(a.id, 'unknown', 'expired', { note: 'deadline passed' });
        await store.transition(b.id, 'unknown', 'pending');
        assert.deepEqual(await store.unknowns(), []);
        const c = await intentIn('unknown');
        assert.deepEqual(
          (await store.unknowns()).map((i) => i.id),
          [c.id],
        );
      });

      it('refuses a nonsense limit', async () => {
        await rejection(store.unknowns(-1), InvalidIntentError);
        await rejection(store.unknowns(1.5), InvalidIntentError);
      });

      it('brings every later check of an open intent forward, and nothing else', async () => {
        const later = await store.create(newIntent({ nextCheckAt: 5_000 }), 1);
        const unknown = await store.create(newIntent({ nextCheckAt: 9_000 }), 1);
        await store.transition(unknown.id, 'creating', 'unknown', { now: 2 });
        const sooner = await store.create(newIntent({ nextCheckAt: 500 }), 1);
        const never = await store.create(newIntent({ nextCheckAt: null }), 1);
        const match = await store.create(
          newIntent({ kind: 'match', movesMoney: false, nextCheckAt: 8_000 }),
          1,
        );
        const done = await store.create(newIntent({ nextCheckAt: 7_000 }), 1);
        await store.transition(done.id, 'creating', 'failed', { now: 2 });
        await store.claimDue(500, 10, 'worker-1', 10_000);

        assert.equal(await store.advanceChecks(1_000), 2);
        assertIncludes(await store.get(later.id), {
          nextCheckAt: 1_000,
          updatedAt: 1,
          status: 'creating',
        });
        assertIncludes(await store.get(unknown.id), {
          nextCheckAt: 1_000,
          updatedAt: 2,
          status: 'unknown',
        });
        // Already due sooner: left alone, and so is its lease.
        assertIncludes(await store.get(sooner.id), { nextCheckAt: 500, leaseOwner: 'worker-1' });
        assertIncludes(await store.get(never.id), { nextCheckAt: null });
        assertIncludes(await store.get(match.id), { nextCheckAt: 8_000 });
        assertIncludes(await store.get(done.id), { nextCheckAt: null, status: 'failed' });

        // The brought-forward intents are due in claimDue's order at once.
        const claimed = await store.claimDue(1_000, 10, 'worker-2', 1_000);
        assert.deepEqual(
          claimed.map((i) => i.id),
          [later.id, unknown.id],
        );
        assert.equal(await store.advanceChecks(1_000), 0);
      });
    });
  });
}
