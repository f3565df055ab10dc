/**
 * The behaviour every LedgerStore promises, one suite per job (contract/): intents and their
 * journal, leases and the queue, the operator log, the rate bucket, once-markers; any store
 * runs them all through `describeLedgerContract('sqlite :memory:', async () => ({ store,
 * cleanup }))`. Each test gets a fresh store from the factory, on an empty ledger (no intents,
 * no journal: the journal tests read every balance).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { systemClock } from '../../src/clock.js';
import { EarningCapError, LimitExceededError } from '../../src/errors.js';
import type { Intent, IntentStatus, LedgerStore } from '../../src/ledger/index.js';
import type { Posting } from '../../src/ledger/journal.js';

import { OutboundScheduler } from '../../src/server/outbound.js';
import { eventually } from '../support/eventually.js';

import { credit, describeFundsContract, draw, EARNING, tabOf } from './contract/funds.js';
import { describeIntentContract } from './contract/intents.js';
import { describeLeaseContract } from './contract/leases.js';
import { describeOnceContract } from './contract/once.js';
import { describeOperatorLogContract } from './contract/operator-log.js';
import { describeRateContract } from './contract/rate.js';
import { type LedgerFactory, newIntent, rejection } from './contract/support.js';

export * from './contract/support.js';

export function describeLedgerContract(
  name: string,
  factory: LedgerFactory,
  options: { everyParseCase?: boolean } = {},
): void {
  describe(`LedgerStore contract: ${name}`, () => {
    describeIntentContract(factory, options.everyParseCase ?? true);
    describeFundsContract(factory);
    describeLeaseContract(factory);
    describeOperatorLogContract(factory);
    describeRateContract(factory);
    describeOnceContract(factory);
  });
}

/**
 * What a store that several processes share must show beyond the contract: instances with
 * their own connections to one storage never both win a move or a lease, an expired lease
 * passes to another instance, and each sees the other's writes at once. `storage()` is called
 * once per test and returns a function that opens one more instance on that test's storage;
 * the caller closes every instance it opened (afterEach).
 */
export function describeSharedStorage(
  name: string,
  storage: () => () => LedgerStore,
  options: { rounds: number; sharesRate: boolean },
): void {
  describe(name, () => {
    it(
      options.sharesRate
        ? 'draw from one outbound bucket, and honour a hold another instance wrote'
        : 'keep an outbound bucket per instance (in process)',
      async () => {
        const open = storage();
        const a = open();
        const b = open();
        const limit = { perSecond: 0.1, burst: 2 };
        const takes = await Promise.all(
          Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).takeToken(limit, Date.now())),
        );
        assert.equal(takes.filter((wait) => wait === 0).length, options.sharesRate ? 2 : 4);
        await a.holdCalls(Date.now() + 5_000, Date.now());
        const held = await a.takeToken(limit, Date.now());
        assert.ok(held > 4_000 && held <= 5_000, `waits ${held} ms`);
        const other = await b.takeToken(limit, Date.now());
        if (options.sharesRate) assert.ok(other > 4_000 && other <= 5_000, `waits ${other} ms`);
        else assert.ok(other > 5_000, `waits ${other} ms (its own bucket, empty, no hold)`);
      },
    );

    if (options.sharesRate) {
      it("count the bucket by the store's clock: one process whose clock is 60 s ahead stalls nobody", async () => {
        const open = storage();
        const limit = { perSecond: 20, burst: 3 };
        const ahead = { now: () => Date.now() + 60_000 };
        const skewed = new OutboundScheduler({
          store: open(),
          limit,
          clock: ahead,
          logger: { info() {}, warn() {}, error() {} },
        });
        const b = open();
        const right = new OutboundScheduler({
          store: b,
          limit,
          clock: systemClock,
          logger: { info() {}, warn() {}, error() {} },
        });
        try {
          // The process ahead spends the bucket.
          for (let i = 0; i < limit.burst; i++) await skewed.acquire('payout');
          // The next token is at most one token's time away for everyone, not 60 s (here or
          // already there: the store's clock moved on while the process ahead took its burst).
          const wait = await b.takeToken(limit, Date.now());
          assert.ok(wait <= 1000 / limit.perSecond, `waits ${wait} ms`);
          await eventually(
            async () => (await b.takeToken(limit, Date.now())) === 0,
            5_000,
            'a token for the process on the right clock',
          );
          // And through its scheduler, the next one too.
          let served = false;
          void right.acquire('payout').then(() => {
            served = true;
          });
          await eventually(() => served, 5_000, 'the scheduler on the right clock is served');
        } finally {
          skewed.close();
          right.close();
        }
      });
    }
    it("give a group's last seat to one create of many, across instances, over many rounds", async () => {
      const open = storage();
      const writers = [open(), open(), open()];
      for (let round = 0; round < options.rounds; round++) {
        const groupId = `match-${randomUUID()}`;
        const seat = { seat: { seats: 2 } };
        const first = writers[0] as LedgerStore;
        await first.create(newIntent({ kind: 'entryFee', groupId }), undefined, seat);
        const racing = await Promise.allSettled(
          Array.from({ length: 6 }, (_, i) =>
            (writers[i % 3] as LedgerStore).create(
              newIntent({ kind: 'entryFee', groupId }),
              undefined,
              seat,
            ),
          ),
        );
        assert.equal(racing.filter((r) => r.status === 'fulfilled').length, 1, `round ${round}`);
        assert.equal((await first.byGroup(groupId)).length, 2, `round ${round}`);
      }
    });

    it("let one draw of many win a tab's balance, across instances, over many rounds", async () => {
      const open = storage();
      const writers = [open(), open(), open()];
      for (let round = 0; round < options.rounds; round++) {
        const player = `player-${randomUUID()}`;
        const first = writers[0] as LedgerStore;
        await credit(first, player, '9000');
        const racing = await Promise.allSettled(
          Array.from({ length: 6 }, (_, i) => draw(writers[i % 3] as LedgerStore, player, '5000')),
        );
        assert.equal(racing.filter((r) => r.status === 'fulfilled').length, 1, `round ${round}`);
        assert.equal(await tabOf(first, player), '4000', `round ${round}`);
      }
    });

    it("hold a player's earning cap together: credits racing from every instance never pass it", async () => {
      const open = storage();
      const writers = [open(), open(), open()];
      for (let round = 0; round < options.rounds; round++) {
        const player = `player-${randomUUID()}`;
        const now = Date.now();
        const racing = await Promise.allSettled(
          Array.from({ length: 9 }, (_, i) =>
            credit(writers[i % 3] as LedgerStore, player, '4000', undefined, {
              now,
              budgets: EARNING,
            }),
          ),
        );
        // 10,000 an hour: two credits of 4,000 fit, a third would pass it.
        assert.equal(racing.filter((r) => r.status === 'fulfilled').length, 2, `round ${round}`);
        for (const r of racing) {
          if (r.status === 'rejected') assert.ok(r.reason instanceof EarningCapError, r.reason);
        }
        assert.equal(await tabOf(writers[1] as LedgerStore, player), '8000', `round ${round}`);
      }
    });

    it('let exactly one of many racing transitions win, over many rounds', async () => {
      const open = storage();
      const a = open();
      const b = open();
      for (let round = 0; round < options.rounds; round++) {
        const created = await a.create(newIntent());
        await b.transition(created.id, 'creating', 'pending');
        const targets: IntentStatus[] = ['completed', 'expired', 'failed'];
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? a : b).transition(created.id, 'pending', targets[i % 3] as IntentStatus, {
              note: `writer ${i}`,
            }),
          ),
        );
        const winners = results.filter((r): r is Intent => r !== null);
        assert.equal(winners.length, 1, `round ${round}`);
        const stored = await a.get(created.id);
        assert.deepEqual(stored, winners[0]);
        assert.equal(stored?.history.length, 3);
      }
    });

    it('hand out disjoint leases to racing claimers, and every due intent once', async () => {
      const open = storage();
      const a = open();
      const b = open();
      const ids = new Set<string>();
      const made = await Promise.all(
        Array.from({ length: 200 }, (_, i) => a.create(newIntent({ nextCheckAt: i }), 1)),
      );
      for (const intent of made) ids.add(intent.id);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? a : b).claimDue(1_000, 13, `worker-${i}`, 60_000),
        ),
      );
      const seen = results.flat().map((intent) => intent.id);
      assert.equal(new Set(seen).size, seen.length, 'an intent was leased twice');
      assert.deepEqual(new Set(seen), ids);
      for (const [i, claimed] of results.entries()) {
        for (const intent of claimed) assert.equal(intent.leaseOwner, `worker-${i}`);
      }
      assert.deepEqual(await a.claimDue(1_000, 100, 'late', 60_000), []);
    });

    it('pass an expired lease to the other instance, as when a process dies mid-check', async () => {
      const open = storage();
      const dead = open();
      const alive = open();
      const intent = await dead.create(newIntent({ nextCheckAt: 100 }), 1);
      assert.equal((await dead.claimDue(100, 10, 'dead', 5_000)).length, 1);
      await dead.close();
      assert.deepEqual(await alive.claimDue(5_099, 10, 'alive', 5_000), []);
      const [again] = await alive.claimDue(5_100, 10, 'alive', 5_000);
      assert.equal(again?.id, intent.id);
      assert.equal(again?.leaseOwner, 'alive');
      // The dead owner's late release must not free the new owner's lease.
      await open().release(intent.id, 'dead');
      assert.equal((await alive.get(intent.id))?.leaseOwner, 'alive');
    });

    it('journal one racing step once: one entry, whichever instance wins', async () => {
      const open = storage();
      const a = open();
      const b = open();
      const step = (tag: string, debit: string, credit: string): Posting => ({
        tag,
        debit,
        credit,
        amount: '21000',
        unit: 'msats',
        why: tag,
      });
      for (let round = 0; round < options.rounds; round++) {
        const created = await a.create(newIntent(), 1, undefined, [
          step('created', 'house:rewards', 'inflight'),
        ]);
        const claimable = `claimable:${created.playerId}`;
        await b.transition(created.id, 'creating', 'pending', {
          postings: [step('pending', 'inflight', claimable)],
        });
        // Many writers make the same move with the same posting: one wins, one entry.
        const moves = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            (i % 2 ? a : b).transition(created.id, 'pending', 'completed', {
              note: `writer ${i}`,
              postings: [step('completed', claimable, 'wallet')],
            }),
          ),
        );
        assert.equal(moves.filter((r) => r !== null).length, 1, `round ${round}`);
        // Many updates carry one posting id: one is written, with its patch, the rest are not.
        const updates = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            (i % 2 ? a : b).update(created.id, 'completed', { meta: { writer: i } }, 2, [
              step('late', 'wallet', 'house:fees'),
            ]),
          ),
        );
        const won = updates.filter((r): r is Intent => r !== null);
        assert.equal(won.length, 1, `round ${round}`);
        assert.deepEqual(await b.get(created.id), won[0]);
        const entries = (await a.journal({ intentId: created.id })).entries;
        assert.deepEqual(
          entries.map((e) => e.id),
          ['created', 'pending', 'completed', 'late'].map((tag) => `${created.id}:${tag}`),
        );
        for (const row of await b.balances([claimable, 'inflight'])) {
          assert.deepEqual(row, { account: row.account, unit: 'msats', balance: '0' });
        }
      }
      const sums = new Map<string, bigint>();
      for (const row of await b.balances()) {
        sums.set(row.unit, (sums.get(row.unit) ?? 0n) + BigInt(row.balance));
      }
      assert.deepEqual([...sums], [['msats', 0n]]);
      const fees = await a.balances(['house:fees']);
      assert.deepEqual(fees, [
        { account: 'house:fees', unit: 'msats', balance: String(21_000 * options.rounds) },
      ]);
    });

    it('hold the game’s cap together: racing creates and ends never pass it', async () => {
      // A small cap, and one well above the creates in flight at first (see the contract's own).
      for (const max of [10, 45]) {
        const open = storage();
        const a = open();
        const b = open();
        const cap = { maxOpenPerGame: max };
        const first = await Promise.allSettled(
          Array.from({ length: max + 20 }, (_, i) => (i % 2 ? a : b).create(newIntent(), 1, cap)),
        );
        const made = first.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        assert.equal(made.length, max);
        // One instance ends four while both create: at most four get in.
        const second = await Promise.allSettled([
          ...made.slice(0, 4).map((i) => a.transition(i.id, 'creating', 'failed')),
          ...Array.from({ length: 16 }, (_, i) => (i % 2 ? a : b).create(newIntent(), 1, cap)),
        ]);
        const added = second.slice(4).filter((r) => r.status === 'fulfilled').length;
        assert.ok(added <= 4, `${added} created into 4 free places`);
        for (let i = added; i < 4; i++) await b.create(newIntent(), 1, cap);
        await rejection(a.create(newIntent(), 1, cap), LimitExceededError);
        await rejection(b.create(newIntent(), 1, cap), LimitExceededError);
      }
    });

    it('see each other’s writes at once: indexes are shared', async () => {
      const open = storage();
      const a = open();
      const b = open();
      const created = await a.create(newIntent());
      await a.transition(created.id, 'creating', 'pending', { patch: { remoteId: 'wr-9' } });
      assert.equal((await b.byCallbackToken(created.callbackToken as string))?.id, created.id);
      assert.equal((await b.byRemoteId('reward', 'wr-9'))?.id, created.id);
      assert.equal((await b.openByRoom(created.roomId as string)).length, 1);
      await b.transition(created.id, 'pending', 'completed');
      assert.deepEqual(await a.openByPlayer(created.playerId), []);
    });
  });
}
