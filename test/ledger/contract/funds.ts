/**
 * The `funds` guard (CreateGuards.funds): a draw on a player's account, a tab, never takes it
 * below zero, decided in the create's atomic step. The ledger names no kind: the tab's own
 * kinds are the server's (docs/MATCHES.md); here a credit and a draw are intents with postings.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  BudgetExceededError,
  EarningCapError,
  InsufficientFundsError,
  WithdrawalCapError,
} from '../../../src/errors.js';
import {
  DuplicateIntentError,
  IllegalTransitionError,
  type Intent,
  InvalidIntentError,
  type LedgerStore,
  SETTLED_NOTE,
} from '../../../src/ledger/index.js';
import { accounts, type Posting } from '../../../src/ledger/journal.js';
import type { BudgetWindow } from '../../../src/ledger/store.js';
import { eachStore, type LedgerFactory, newIntent, rejection } from './support.js';

/** A credit of `amount` msats into the player's tab, settled at once, under `id` (its key). */
export function credit(
  store: LedgerStore,
  playerId: string,
  amount: string,
  id?: string,
  at?: { now: number; budgets: readonly BudgetWindow[] },
) {
  const move = { tag: 'created', debit: accounts.rewards, credit: accounts.tab(playerId) };
  const intent = newIntent({
    ...{ kind: 'credit', playerId, amount, nextCheckAt: 0 },
    ...(id ? { id } : {}),
  });
  return store.create(intent, at?.now, { settled: true, budgets: at?.budgets ?? [] }, [
    { ...move, amount, unit: 'msats', why: 'credited' },
  ]);
}

/** A draw of `amount` msats from the player's tab to their claim code, guarded by `funds`. */
export function draw(
  store: LedgerStore,
  playerId: string,
  amount: string,
  at?: { now: number; budgets: readonly BudgetWindow[] },
): Promise<Intent> {
  const tab = accounts.tab(playerId);
  const move: Posting = {
    tag: 'created',
    ...{ debit: tab, credit: accounts.claimable(playerId), amount },
    ...{ unit: 'msats', why: 'withdrawn' },
  };
  const intent = newIntent({ kind: 'withdrawal', playerId, amount });
  const guards = { funds: { account: tab }, budgets: at?.budgets ?? [] };
  return store.create(intent, at?.now, guards, [move]);
}

/** A player's earning caps: 10,000 msats an hour, 15,000 a day (as `tabs` sets them). */
export const EARNING: readonly BudgetWindow[] = [
  { scope: 'player', limitMsat: 10_000, windowMs: 3_600_000, over: 'credits' },
  { scope: 'player', limitMsat: 15_000, windowMs: 86_400_000, over: 'credits' },
];

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

    it("caps a player's credits over rolling windows, each refusal an EarningCapError with nothing written", async () => {
      const player = `player-${randomUUID()}`;
      const hour = 3_600_000;
      const at = (now: number) => ({ now, budgets: EARNING });
      await credit(store, player, '6000', undefined, at(1_000));
      await credit(store, player, '4000', undefined, at(2_000)); // the hour's 10,000 exactly
      const err = await rejection(
        credit(store, player, '1', undefined, at(3_000)),
        EarningCapError,
      );
      assert.equal(err.code, 'LN_EARNING_CAP');
      assert.deepEqual([err.limitMsat, err.earnedMsat, err.windowMs], ['10000', '10000', hour]);
      assert.equal(err.retryable, true);
      assert.equal(await tabOf(store, player), '10000');
      assert.equal((await store.journal({ playerId: player })).entries.length, 2);
      // Another player's credits, and payouts, count nothing here; a payout window skips credits.
      await credit(store, `player-${randomUUID()}`, '9000', undefined, at(3_000));
      await store.create(newIntent({ playerId: player, amount: '50000' }), 3_000, {
        budgets: EARNING,
      });
      const payouts = [{ scope: 'player' as const, limitMsat: 1, windowMs: hour }];
      await credit(store, `player-${randomUUID()}`, '5000', undefined, {
        now: 3_000,
        budgets: payouts,
      });
      // The hour rolls on: the day's 15,000 is the next line.
      await credit(store, player, '5000', undefined, at(1_000 + hour + 1_000));
      const day = await rejection(
        credit(store, player, '1', undefined, at(2_000 + hour + 1_000)),
        EarningCapError,
      );
      assert.deepEqual([day.earnedMsat, day.windowMs], ['15000', 86_400_000]);
      await credit(store, player, '1', undefined, at(2_000 + 86_400_000));
      assert.equal(await tabOf(store, player), '15001');
      await assertBalanced(store);
    });

    it('holds the earning cap under racing credits, exactly to the msat', async () => {
      const player = `player-${randomUUID()}`;
      const now = Date.now();
      const racing = await Promise.allSettled(
        Array.from({ length: 12 }, () =>
          credit(store, player, '3000', undefined, { now, budgets: EARNING }),
        ),
      );
      assert.equal(racing.filter((r) => r.status === 'fulfilled').length, 3);
      for (const r of racing) {
        if (r.status === 'rejected') assert.ok(r.reason instanceof EarningCapError, r.reason);
      }
      assert.equal(await tabOf(store, player), '9000');
    });

    it("caps a player's withdrawals over a window (WithdrawalCapError); one that expired gives it back", async () => {
      const player = `player-${randomUUID()}`;
      await credit(store, player, '50000');
      const day = [
        {
          scope: 'player' as const,
          limitMsat: 20_000,
          windowMs: 86_400_000,
          over: 'withdrawals' as const,
        },
      ];
      const first = await draw(store, player, '15000', { now: 1_000, budgets: day });
      const err = await rejection(
        draw(store, player, '5001', { now: 2_000, budgets: day }),
        WithdrawalCapError,
      );
      assert.equal(err.code, 'LN_WITHDRAWAL_CAP');
      assert.deepEqual([err.limitMsat, err.withdrawnMsat], ['20000', '15000']);
      assert.equal(await tabOf(store, player), '35000');
      // A withdrawal window counts withdrawals alone, and a payout window counts them too.
      await store.create(newIntent({ playerId: player, amount: '90000' }), 2_000, { budgets: day });
      const payouts = [{ scope: 'player' as const, limitMsat: 100_000, windowMs: 86_400_000 }];
      await rejection(
        draw(store, player, '1', { now: 2_000, budgets: payouts }),
        BudgetExceededError,
      );
      await store.transition(first.id, 'creating', 'failed', { now: 3_000 });
      await draw(store, player, '20000', { now: 4_000, budgets: day });
    });

    it("refuses a tab's window over a room or the game: a tab's windows are a player's", async () => {
      for (const scope of ['room', 'game'] as const) {
        const budgets = [{ scope, limitMsat: 1_000, windowMs: 1_000, over: 'credits' as const }];
        await rejection(
          credit(store, `player-${randomUUID()}`, '10', undefined, { now: 1, budgets }),
          InvalidIntentError,
        );
      }
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
