/**
 * The `funds` guard (CreateGuards.funds): a draw on a player's account, a tab, never takes it
 * below zero, decided in the create's atomic step. The ledger names no kind: the tab's own
 * kinds are the server's (docs/TABS.md); here a credit and a draw are intents with postings.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { InsufficientFundsError } from '../../../src/errors.js';
import {
  DuplicateIntentError,
  IllegalTransitionError,
  type Intent,
  InvalidIntentError,
  type LedgerStore,
  SETTLED_NOTE,
} from '../../../src/ledger/index.js';
import { accounts, type Posting } from '../../../src/ledger/journal.js';
import { eachStore, type LedgerFactory, newIntent, rejection } from './support.js';

/** A credit of `amount` msats into the player's tab, settled at once, under `id` (its key). */
export function credit(store: LedgerStore, playerId: string, amount: string, id?: string) {
  const move = { tag: 'created', debit: accounts.rewards, credit: accounts.tab(playerId) };
  const intent = newIntent({ playerId, amount, nextCheckAt: 0, ...(id ? { id } : {}) });
  return store.create(intent, undefined, { settled: true }, [
    { ...move, amount, unit: 'msats', why: 'credited' },
  ]);
}

/** A draw of `amount` msats from the player's tab to their claim code, guarded by `funds`. */
export function draw(store: LedgerStore, playerId: string, amount: string): Promise<Intent> {
  const tab = accounts.tab(playerId);
  const move: Posting = {
    tag: 'created',
    ...{ debit: tab, credit: accounts.claimable(playerId), amount },
    ...{ unit: 'msats', why: 'withdrawn' },
  };
  return store.create(newIntent({ playerId, amount }), undefined, { funds: { account: tab } }, [
    move,
  ]);
}

export async function tabOf(store: LedgerStore, playerId: string): Promise<string> {
  const [row] = await store.balances([accounts.tab(playerId)]);
  return row?.balance ?? 'none';
}

/** Every unit's balances over every class sum to zero. */
export async function assertBalanced(store: LedgerStore): Promise<void> {
  const sums = new Map<string, bigint>();
  for (const b of await store.balances()) {
    sums.set(b.unit, (sums.get(b.unit) ?? 0n) + BigInt(b.balance));
  }
  for (const [unit, sum] of sums) assert.equal(sum, 0n, `${unit} balances sum to zero`);
}

export function describeFundsContract(factory: LedgerFactory): void {
  describe('funds: a draw never takes a tab below zero', () => {
    let store: LedgerStore;
    eachStore(factory, (s) => {
      store = s;
    });

    it('records a settled create completed at once, with its postings: never open, never due', async () => {
      const player = `player-${randomUUID()}`;
      const made = await credit(store, player, '5000');
      assert.equal(made.status, 'completed');
      // Its history: recorded, and completed in the same step.
      assert.deepEqual(made.history, [
        { at: made.createdAt, from: null, to: 'creating' },
        { at: made.createdAt, from: 'creating', to: 'completed', note: SETTLED_NOTE },
      ]);
      assert.equal(made.nextCheckAt, null, 'a settled record is never due');
      assert.deepEqual(await store.get(made.id), made);
      assert.equal(await tabOf(store, player), '5000');
      assert.equal((await store.openByPlayer(player)).length, 0);
      assert.equal(await store.openCount(), 0);
      assert.deepEqual(await store.claimDue(Date.now() + 86_400_000, 10, 'checker', 1000), []);
      // Ended: no move leaves it, and its entry is written once.
      await rejection(store.transition(made.id, 'completed', 'failed'), IllegalTransitionError);
      assert.equal((await store.journal({ intentId: made.id })).entries.length, 1);
    });

    it('refuses a settled create with a hold, the queue or a seat', async () => {
      const cases = [{ hold: { aboveMsat: 1 } }, { queue: true }, { seat: { seats: 2 } }];
      for (const guard of cases) {
        const intent = newIntent({ kind: 'payment', groupId: `match-${randomUUID()}` });
        await rejection(
          store.create(intent, undefined, { settled: true, ...guard }),
          InvalidIntentError,
        );
      }
      assert.equal(await store.openCount(), 0);
    });

    it('records a credit once under a repeated key (its id): one entry, one balance', async () => {
      const player = `player-${randomUUID()}`;
      const id = randomUUID();
      await credit(store, player, '5000', id);
      const again = await rejection(credit(store, player, '5000', id), DuplicateIntentError);
      assert.equal(again.code, 'LN_LEDGER_DUPLICATE');
      assert.equal(await tabOf(store, player), '5000');
      assert.equal((await store.journal({ playerId: player })).entries.length, 1);
    });

    it('refuses a draw past the balance with InsufficientFundsError, writing nothing', async () => {
      const player = `player-${randomUUID()}`;
      await credit(store, player, '3000');
      await credit(store, player, '4000');
      const err = await rejection(draw(store, player, '7001'), InsufficientFundsError);
      assert.equal(err.code, 'LN_INSUFFICIENT_FUNDS');
      assert.deepEqual([err.balance, err.amount], ['7000', '7001']);
      assert.equal(await tabOf(store, player), '7000');
      assert.equal((await store.openByPlayer(player)).length, 0, 'no draw recorded');
      assert.equal((await store.journal({ playerId: player })).entries.length, 2);
      // A draw on a tab that never moved is refused the same way.
      const none = `player-${randomUUID()}`;
      const empty = await rejection(draw(store, none, '1'), InsufficientFundsError);
      assert.equal(empty.balance, '0');
      assert.equal((await store.openByPlayer(none)).length, 0);
    });

    it('draws exactly the balance, then nothing more', async () => {
      const player = `player-${randomUUID()}`;
      await credit(store, player, '7000');
      const drawn = await draw(store, player, '7000');
      assert.equal(drawn.status, 'creating');
      assert.equal(await tabOf(store, player), '0');
      await rejection(draw(store, player, '1'), InsufficientFundsError);
      await assertBalanced(store);
    });

    it('lets exactly one of two draws racing for one balance win', async () => {
      const player = `player-${randomUUID()}`;
      await credit(store, player, '10000');
      const racing = await Promise.allSettled([
        draw(store, player, '6000'),
        draw(store, player, '6000'),
      ]);
      assert.equal(racing.filter((r) => r.status === 'fulfilled').length, 1);
      const lost = racing.find((r) => r.status === 'rejected');
      assert.ok(lost?.status === 'rejected' && lost.reason instanceof InsufficientFundsError);
      assert.equal(await tabOf(store, player), '4000');
      await assertBalanced(store);
    });

    it('returns an expired draw to the tab, where it may be drawn again', async () => {
      const player = `player-${randomUUID()}`;
      await credit(store, player, '5000');
      const drawn = await draw(store, player, '5000');
      await store.transition(drawn.id, 'creating', 'pending');
      const back: Posting = {
        tag: 'expired',
        ...{ debit: accounts.claimable(player), credit: accounts.tab(player) },
        ...{ amount: '5000', unit: 'msats', why: 'unclaimed: back to the tab' },
      };
      const expired = await store.transition(drawn.id, 'pending', 'expired', { postings: [back] });
      assert.equal(expired?.status, 'expired');
      assert.equal(await tabOf(store, player), '5000');
      await draw(store, player, '5000');
      assert.equal(await tabOf(store, player), '0');
      await assertBalanced(store);
    });

    it("refuses a guard on an account the postings do not debit, or on the game's own", async () => {
      const player = `player-${randomUUID()}`;
      await credit(store, player, '5000');
      const tab = accounts.tab(player);
      const p: Posting = {
        tag: 'created',
        ...{ debit: tab, credit: accounts.claimable(player), amount: '10' },
        ...{ unit: 'msats', why: 'withdrawn' },
      };
      const cases: [string, Posting[]][] = [
        [accounts.tab('someone-else'), [p]],
        [accounts.rewards, [{ ...p, debit: accounts.rewards }]],
        [tab, []],
      ];
      for (const [account, postings] of cases) {
        const made = store.create(
          newIntent({ playerId: player }),
          undefined,
          {
            funds: { account },
          },
          postings,
        );
        await rejection(made, InvalidIntentError);
      }
      assert.equal(await tabOf(store, player), '5000');
    });
    it("lists a class's accounts richest first, a page at a time, none at zero", async () => {
      const run = randomUUID().slice(0, 8);
      const name = (n: string) => `${run}-${n}`;
      // b and c tie: by name. e is drawn to zero: left out of the tabs, in claimable.
      const amounts: [string, string][] = [
        ['a', '3000'],
        ['c', '9000'],
        ['b', '9000'],
        ['d', '1000'],
        ['e', '4000'],
      ];
      for (const [who, amount] of amounts) await credit(store, name(who), amount);
      await draw(store, name('e'), '4000');
      const listed: string[] = [];
      let after: string | undefined;
      let pages = 0;
      for (;;) {
        const page = await store.accounts({ class: 'tab', limit: 2, ...(after ? { after } : {}) });
        pages++;
        assert.ok(page.accounts.length <= 2);
        for (const row of page.accounts) {
          assert.equal(row.unit, 'msats');
          if (row.account.startsWith(`tab:${run}-`)) listed.push(`${row.account}=${row.balance}`);
        }
        if (page.next === null) break;
        after = page.next;
      }
      assert.ok(pages >= 2, 'paged');
      assert.deepEqual(listed, [
        `tab:${name('b')}=9000`,
        `tab:${name('c')}=9000`,
        `tab:${name('a')}=3000`,
        `tab:${name('d')}=1000`,
      ]);
      const claimable = await store.accounts({ class: 'claimable' });
      assert.ok(claimable.accounts.some((r) => r.account === `claimable:${name('e')}`));
      await rejection(store.accounts({ class: 'house' }), InvalidIntentError);
      await rejection(store.accounts({ class: 'tab', after: 'tab:x' }), InvalidIntentError);
      await rejection(store.accounts({ class: 'tab', limit: 0 }), InvalidIntentError);
    });
  });
}
