/**
 * Issue 34, its first part: a player's tab through the face, against the emulator. Credits are
 * recorded in the ledger alone (no service call), once per key; a withdrawal is one withdrawal
 * request the player claims; more than the tab holds is refused with nothing sent; a code that
 * expires unclaimed returns its amount to the tab; the journal sums to zero (docs/MATCHES.md).
 */
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { ManualClock, startEmulator } from '../../src/emulator/index.js';
import { InsufficientFundsError, InvalidArgumentError } from '../../src/errors.js';
import type { Intent } from '../../src/ledger/intent.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

describe('player tabs: credits and withdrawals (issue 34)', function () {
  this.timeout(30_000);
  const games: Game[] = [];
  const owned: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const game of games.splice(0).reverse()) await game.stop();
    for (const thing of owned.splice(0)) await thing.close();
  });

  async function start(options: Parameters<typeof startGame>[1] = {}): Promise<Game> {
    const game = await startGame(
      { empty: EmptyRoom },
      { reconciler: { enabled: false }, ...options },
    );
    games.push(game);
    return game;
  }

  async function tabOf(game: Game, playerId: string): Promise<string> {
    const [row] = await game.lightning.books.ledger.balances([`tab:${playerId}`]);
    return row?.balance ?? 'none';
  }

  async function withdrawalRequests(game: Game): Promise<number> {
    const page = await game.lightning.books.journal({ playerId: 'alice' });
    return page.entries.filter((e) => e.debit === 'tab:alice').length;
  }

  async function assertBalanced(game: Game): Promise<void> {
    const sum = (await game.lightning.books.ledger.balances())
      .filter((b) => b.unit === 'msats')
      .reduce((total, b) => total + BigInt(b.balance), 0n);
    expect(sum).to.equal(0n);
  }

  it('credits a tab with no service call, once per key, and withdraws it as one claim code', async () => {
    const game = await start();
    // Every create at the service is a POST; reads in the background are not.
    const calls = () => game.emulator.control.count('POST', /./);
    const before = calls();
    const first = await game.lightning.tabs.credit({
      playerId: 'alice',
      amountMsat: 10_000,
      description: 'round won',
      key: 'round-1',
    });
    expect(first.status).to.equal('completed');
    const again = await game.lightning.tabs.credit({
      playerId: 'alice',
      amountMsat: 10_000,
      description: 'round won',
      key: 'round-1',
    });
    expect(again.id).to.equal(first.id);
    await game.lightning.tabs.credit({
      playerId: 'alice',
      amountMsat: 5_000,
      description: 'survived',
    });
    await game.lightning.tabs.credit({
      playerId: 'bob',
      amountMsat: 7_000,
      description: 'survived',
    });
    expect(calls()).to.equal(before, 'no credit calls the service');
    expect(await tabOf(game, 'alice')).to.equal('15000');
    expect(await tabOf(game, 'bob')).to.equal('7000');
    // What the tabs hold is owed to players, and the house's rewards cost it.
    const balances = await game.lightning.books.balances();
    expect(balances).to.include({ tabsMsat: '22000', owedToPlayersMsat: '22000' });
    expect(balances.house.rewardsMsat).to.equal('22000');

    const wallet = game.emulator.control.wallet();
    const withdrawal = await game.lightning.tabs.withdraw({
      playerId: 'alice',
      amountMsat: 15_000,
      description: 'cash out',
    });
    expect(withdrawal.status).to.equal('pending');
    expect(withdrawal.code).to.be.a('string');
    expect(calls()).to.equal(before + 1, 'one withdrawal request');
    expect(await tabOf(game, 'alice')).to.equal('0');
    game.emulator.control.claimWithdrawal(withdrawal.remoteId as string);
    await eventually(
      async () => (await game.lightning.books.refresh(withdrawal.id))?.status === 'completed',
      5_000,
      'the withdrawal claimed',
    );
    expect(game.emulator.control.wallet()).to.equal(wallet - 15_000);
    expect(await tabOf(game, 'bob')).to.equal('7000');
    await assertBalanced(game);
  });

  it('refuses a withdrawal past the tab with InsufficientFundsError, sending nothing', async () => {
    const game = await start();
    await game.lightning.tabs.credit({ playerId: 'alice', amountMsat: 10_000, description: 'won' });
    const posts = () => game.emulator.control.count('POST', /./);
    const before = posts();
    const err = await game.lightning.tabs
      .withdraw({ playerId: 'alice', amountMsat: 10_001, description: 'too much' })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).to.be.instanceOf(InsufficientFundsError);
    expect((err as InsufficientFundsError).code).to.equal('LN_INSUFFICIENT_FUNDS');
    expect(posts()).to.equal(before);
    expect(await withdrawalRequests(game)).to.equal(0);
    expect(await tabOf(game, 'alice')).to.equal('10000');
    const bad = await game.lightning.tabs
      .credit({ playerId: 'alice', amountMsat: -1, description: 'bad' })
      .catch((e: unknown) => e);
    expect(bad).to.be.instanceOf(InvalidArgumentError);
  });

  it('lets one of two withdrawals racing for one tab through, with one request sent', async () => {
    const game = await start();
    await game.lightning.tabs.credit({ playerId: 'alice', amountMsat: 20_000, description: 'won' });
    const sent = () => game.emulator.control.count('POST', '/v0/withdrawal-requests');
    const before = sent();
    const racing = await Promise.allSettled(
      [1, 2].map(() =>
        game.lightning.tabs.withdraw({
          playerId: 'alice',
          amountMsat: 12_000,
          description: 'cash out',
        }),
      ),
    );
    const won = racing.filter((r) => r.status === 'fulfilled');
    const lost = racing.filter((r) => r.status === 'rejected');
    expect(won).to.have.length(1);
    expect(lost.map((r) => r.reason)[0]).to.be.instanceOf(InsufficientFundsError);
    expect(sent()).to.equal(before + 1);
    expect(await tabOf(game, 'alice')).to.equal('8000');
    await assertBalanced(game);
  });

  it('returns a withdrawal the service refuses (under its 10-sat minimum) to the tab', async () => {
    // A minimum of our own under the service's: the service's refusal is what is tested.
    const game = await start({ tabs: { minWithdrawalMsat: 1 } });
    await game.lightning.tabs.credit({ playerId: 'alice', amountMsat: 9_000, description: 'won' });
    const refused = await game.lightning.tabs
      .withdraw({ playerId: 'alice', amountMsat: 9_000, description: 'too small' })
      .catch((e: unknown) => e);
    expect(refused).to.have.property('code', 'LN_INVALID_REQUEST');
    const [failed] = (await game.lightning.books.journal({ playerId: 'alice' })).entries.filter(
      (e) => e.credit === 'tab:alice' && e.debit === 'inflight',
    );
    expect(failed?.tag).to.equal('failed');
    expect(await tabOf(game, 'alice')).to.equal('9000');
    await assertBalanced(game);
  });

  it('returns a withdrawal that expired unclaimed to the tab', async () => {
    const clock = new ManualClock(Date.now());
    const emulator = await startEmulator({ clock });
    owned.push(emulator);
    const game = await start({ emulator, clock });
    await game.lightning.tabs.credit({ playerId: 'alice', amountMsat: 20_000, description: 'won' });
    const withdrawal: Intent = await game.lightning.tabs.withdraw({
      playerId: 'alice',
      amountMsat: 12_000,
      description: 'cash out',
      expiresIn: 60,
    });
    expect(await tabOf(game, 'alice')).to.equal('8000');
    clock.advance(61_000);
    await eventually(
      async () => (await game.lightning.books.refresh(withdrawal.id))?.status === 'expired',
      5_000,
      'the withdrawal expired',
    );
    expect(await tabOf(game, 'alice')).to.equal('20000');
    await assertBalanced(game);
  });
});
