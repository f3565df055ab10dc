/**
 * The operator's seat (issue 24): each action is a compare-and-set through the engine (its
 * events fire once, the room's entry follows), is one line in the ledger's operator log with
 * who, before -> after and why, and is refused with a typed error, recording nothing, when it
 * does not apply. Played against the emulator with a real room (test/room/support.ts).
 */
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { ManualClock, startEmulator } from '../../src/emulator/index.js';
import {
  InvalidArgumentError,
  OperatorRefusedError,
  PayoutsPausedError,
  PlayerBlockedError,
} from '../../src/errors.js';
import type { Intent } from '../../src/ledger/intent.js';
import type { OperatorAction } from '../../src/ledger/operator-log.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import type { PayoutPause } from '../../src/server/events.js';
import { type Arena, serverClient, startArena } from '../room/support.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';

class Empty extends Room {}

/** A line as a test compares it: what an operator reads, without seq and time. */
function gist(line: OperatorAction) {
  const { seq: _seq, at: _at, ...rest } = line;
  return rest;
}

async function refusal<E extends Error>(
  call: Promise<unknown>,
  type: abstract new (...args: never[]) => E,
): Promise<E> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected a ${type.name}`).to.be.instanceOf(type);
  return err as E;
}

describe('the operator: actions through the engine, each a line in the operator log', function () {
  this.timeout(30_000);
  let game: Game | undefined;
  const owned: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    await game?.stop();
    game = undefined;
    for (const thing of owned.splice(0)) await thing.close();
  });

  async function arena(options: Parameters<typeof startArena>[0] = {}) {
    game = await startArena({ reconciler: { enabled: false }, ...options });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const settled: Intent[] = [];
    game.lightning.on('settled', (intent) => settled.push(intent));
    return { game, room, alice, settled };
  }

  it('resolve: an unknown reward ends as the operator says, settled once, the room follows, one line', async () => {
    const { game, room, alice, settled } = await arena({
      api: { timeoutMs: 300, maxRetries: 0 },
    });
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      mode: 'process-then-destroy',
      times: 1,
    });
    await room.plugins.lightning
      .reward(serverClient(room, alice), { amountMsat: 30_000, description: 'win' })
      .catch(() => {});
    const [unknown] = await game.lightning.operator.unknowns();
    const id = unknown?.id as string;
    expect(unknown?.status).to.equal('unknown');
    const before = room.state.lightning.rewards.get(id)?.status;

    const resolved = await game.lightning.operator.resolve(
      id,
      'failed',
      'voided on the dashboard',
      'ann',
    );
    expect(resolved.status).to.equal('failed');
    expect(resolved.history.at(-1)?.note).to.equal(
      'resolved by operator ann: voided on the dashboard',
    );
    expect(settled.map((i) => [i.id, i.status])).to.deep.equal([[id, 'failed']]);
    await eventually(
      () => room.state.lightning.rewards.get(id)?.status === 'failed',
      5_000,
      `the room's entry (was ${before}) follows`,
    );
    const log = await game.lightning.operator.log();
    expect(log.actions.map(gist)).to.deep.equal([
      {
        by: 'ann',
        action: 'resolve',
        intentId: id,
        playerId: 'alice',
        before: 'unknown',
        after: 'failed',
        note: 'voided on the dashboard',
      },
    ]);

    // Not unknown any more: refused, nothing recorded, nothing fired.
    const again = await refusal(
      game.lightning.operator.resolve(id, 'completed', 'second thoughts', 'ann'),
      OperatorRefusedError,
    );
    expect(again).to.be.instanceOf(InvalidArgumentError);
    expect(again.code).to.equal('LN_OPERATOR_REFUSED');
    await refusal(game.lightning.operator.resolve(id, 'failed', 'x', ' '), InvalidArgumentError);
    expect((await game.lightning.operator.log()).actions).to.have.length(1);
    expect(settled).to.have.length(1);
  });

  it('resolve keeps its old signature, recorded as an unnamed operator', async () => {
    const { game } = await arena({ api: { timeoutMs: 300, maxRetries: 0 } });
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      mode: 'process-then-destroy',
      times: 1,
    });
    await game.lightning
      .reward({ playerId: 'bob', amountMsat: 30_000, description: 'x' })
      .catch(() => {});
    const [unknown] = await game.lightning.operator.unknowns();
    const resolved = await game.lightning.operator.resolve(
      unknown?.id as string,
      'expired',
      'gone',
    );
    expect(resolved.history.at(-1)?.note).to.equal('resolved by operator: gone');
    const [line] = (await game.lightning.operator.log({ intentId: unknown?.id })).actions;
    expect(line?.by).to.equal('unnamed operator');
  });

  it("pause and resume: the operator's pause says so, refuses payouts, fires once, and each is one line", async () => {
    const { game, room, alice } = await arena();
    const pauses: PayoutPause[] = [];
    game.lightning.on('paused', (p) => pauses.push(p));

    const paused = await game.lightning.operator.pause('ann', 'wallet top-up');
    expect(gist(paused)).to.deep.equal({
      by: 'ann',
      action: 'pause',
      intentId: null,
      playerId: null,
      before: 'running',
      after: 'paused',
      note: 'wallet top-up',
    });
    expect(game.lightning.operator.paused).to.include({
      cause: 'operator',
      by: 'ann',
      reason: 'wallet top-up',
    });
    expect(pauses.map((p) => p.cause)).to.deep.equal(['operator']);
    await refusal(
      room.plugins.lightning.reward(serverClient(room, alice), {
        amountMsat: 21_000,
        description: 'x',
      }),
      PayoutsPausedError,
    );
    expect(game.emulator.control.withdrawalRequests()).to.deep.equal([]);
    await refusal(game.lightning.operator.pause('bo', 'again'), OperatorRefusedError);
    expect(pauses).to.have.length(1);

    const resumed = await game.lightning.operator.resume('bo');
    expect(gist(resumed)).to.include({ by: 'bo', before: 'paused (operator)', after: 'running' });
    expect(game.lightning.operator.paused).to.equal(null);
    await refusal(game.lightning.operator.resume('bo'), OperatorRefusedError);
    await refusal(game.lightning.operator.pause('', 'x'), InvalidArgumentError);
    const reward = await room.plugins.lightning.reward(serverClient(room, alice), {
      amountMsat: 21_000,
      description: 'x',
    });
    expect(reward.status).to.equal('pending');
    expect((await game.lightning.operator.log()).actions.map((a) => a.action)).to.deep.equal([
      'pause',
      'resume',
    ]);
    // The old resume() still lifts a pause: at once here, and the ledger's after it, its line
    // naming no one.
    await game.lightning.operator.pause('ann', 'again');
    game.lightning.operator.resume();
    expect(game.lightning.operator.paused).to.equal(null);
    await eventually(
      async () => (await game.lightning.books.ledger.payoutPause()) === null,
      5_000,
      "the ledger's pause lifted",
    );
    expect((await game.lightning.operator.log()).actions.map(gist).at(-1)).to.include({
      action: 'resume',
      by: 'unnamed operator',
    });
  });

  it("an operator's pause is the game's: every process sharing the ledger pauses, and resumes", async () => {
    const store = new SqliteLedger({ path: ':memory:' });
    owned.push(store);
    const emulator = await startEmulator({});
    owned.push(emulator);
    const one = await startGame({ empty: Empty }, { ledger: store, emulator });
    owned.push({ close: () => one.stop() });
    const two = await startGame({ empty: Empty }, { ledger: store, emulator });
    owned.push({ close: () => two.stop() });
    const pauses: PayoutPause[] = [];
    two.lightning.on('paused', (p) => pauses.push(p));

    await one.lightning.operator.pause('ann', 'incident');
    await eventually(
      () => two.lightning.operator.paused !== null,
      5_000,
      'the other process pauses',
    );
    expect(two.lightning.operator.paused).to.include({
      cause: 'operator',
      by: 'ann',
      reason: 'incident',
    });
    expect(pauses).to.have.length(1);
    await refusal(
      two.lightning.reward({ playerId: 'alice', amountMsat: 21_000, description: 'x' }),
      PayoutsPausedError,
    );
    // Another operator, in the other process: refused, the pause holds.
    await refusal(two.lightning.operator.pause('bo', 'me too'), OperatorRefusedError);
    // A process that starts now starts paused.
    const three = await startGame({ empty: Empty }, { ledger: store, emulator });
    owned.push({ close: () => three.stop() });
    expect(three.lightning.operator.paused).to.include({ cause: 'operator', by: 'ann' });

    await two.lightning.operator.resume('bo');
    await eventually(
      () => one.lightning.operator.paused === null,
      5_000,
      'the first process resumes',
    );
    await eventually(
      () => three.lightning.operator.paused === null,
      5_000,
      'the third process resumes',
    );
    expect(emulator.control.withdrawalRequests()).to.deep.equal([]);
    const reward = await one.lightning.reward({
      playerId: 'alice',
      amountMsat: 21_000,
      description: 'x',
    });
    expect(reward.status).to.equal('pending');
    expect((await one.lightning.operator.log()).actions.map((a) => [a.action, a.by])).to.deep.equal(
      [
        ['pause', 'ann'],
        ['resume', 'bo'],
      ],
    );
  });

  it('reissue: a shown payout that expired unclaimed is issued again once, from house:unclaimed, into the room', async () => {
    const clock = new ManualClock(Date.now());
    const emulator = await startEmulator({ clock });
    owned.push(emulator);
    const { game, room, alice, settled } = await arena({
      emulator,
      clock,
      reconciler: { intervalMs: 20 },
    });
    const match = await room.plugins.lightning.openMatch({
      entryFeeMsat: 25_000,
      claimExpiresIn: 600,
      seats: 1,
    });
    const entered = await match.enter(serverClient(room, alice));
    const fee = await game.lightning.books.ledger.get(entered.entry.id);
    expect(emulator.control.payStaticCharge(fee?.remoteId as string).status).to.equal('OK');
    await eventually(
      async () => (await game.lightning.matches.get(match.id)).funded,
      5_000,
      'the fee paid',
    );
    const decided = await match.settle({ alice: 1 });
    const payoutId = decided.payouts[0]?.intentId as string;
    await eventually(
      () => room.state.lightning.rewards.get(payoutId)?.status === 'pending',
      5_000,
      'the code on screen',
    );
    // Never reissued while it can still be claimed.
    await refusal(game.lightning.operator.reissue(payoutId, 'ann'), OperatorRefusedError);

    clock.advance(601_000); // the service expires the request; its callback ends the payout
    await eventually(
      async () => (await game.lightning.books.ledger.get(payoutId))?.status === 'expired',
      5_000,
      'the payout expired',
    );
    expect(await game.lightning.books.ledger.balances(['house:unclaimed'])).to.deep.equal([
      { account: 'house:unclaimed', unit: 'msats', balance: '25000' },
    ]);
    const settledBefore = settled.length;

    const attempt = await game.lightning.operator.reissue(payoutId, 'ann');
    expect(attempt.id).to.equal(`${payoutId}:2`);
    expect(attempt).to.include({ status: 'pending', playerId: 'alice', amount: '25000' });
    await eventually(
      () => room.state.lightning.rewards.get(attempt.id)?.status === 'pending',
      5_000,
      'the new code in the room',
    );
    expect(settled.length, 'nothing settled by the reissue').to.equal(settledBefore);
    expect(
      await game.lightning.books.ledger.balances(['house:unclaimed', `escrow:${match.id}`]),
    ).to.deep.equal([
      { account: 'house:unclaimed', unit: 'msats', balance: '0' },
      { account: `escrow:${match.id}`, unit: 'msats', balance: '0' },
    ]);
    expect((await game.lightning.books.claims('alice')).map((c) => c.intentId)).to.deep.equal([
      attempt.id,
    ]);
    const log = await game.lightning.operator.log({ playerId: 'alice' });
    expect(log.actions.map(gist)).to.deep.equal([
      {
        by: 'ann',
        action: 'reissue',
        intentId: payoutId,
        playerId: 'alice',
        before: 'expired',
        after: attempt.id,
        note: `payout issued again as ${attempt.id}`,
      },
    ]);

    // Once: neither the old attempt again, nor the new one when it expires in turn.
    await refusal(game.lightning.operator.reissue(payoutId, 'bo'), OperatorRefusedError);
    clock.advance(601_000);
    await eventually(
      async () => (await game.lightning.books.ledger.get(attempt.id))?.status === 'expired',
      5_000,
      'the new code expired',
    );
    const second = await refusal(
      game.lightning.operator.reissue(attempt.id, 'bo'),
      OperatorRefusedError,
    );
    expect(second.message).to.match(/once already/);
    expect((await game.lightning.operator.log()).actions).to.have.length(1);
  });

  it('reissue refuses a claimed payout, a code never shown, and what is no payout', async () => {
    const clock = new ManualClock(Date.now());
    const emulator = await startEmulator({ clock });
    owned.push(emulator);
    const { game } = await arena({
      emulator,
      clock,
      reconciler: { intervalMs: 20 },
      api: { timeoutMs: 300, maxRetries: 0 },
    });
    const match = await game.lightning.matches.open({
      entryFeeMsat: 25_000,
      claimExpiresIn: 600,
      players: ['alice', 'bob'],
    });
    for (const playerId of ['alice', 'bob']) {
      const fee = await game.lightning.matches.enter({ matchId: match.id, playerId });
      expect(emulator.control.payStaticCharge(fee.remoteId as string).status).to.equal('OK');
    }
    await eventually(
      async () => (await game.lightning.matches.get(match.id)).funded,
      5_000,
      'the fees paid',
    );
    // Alice's payout's create answer is lost: it ends expired with its code never shown, and
    // the match issues it again by itself.
    emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      mode: 'process-then-destroy',
      times: 1,
    });
    const decided = await game.lightning.matches.settle(match.id, { alice: 1, bob: 1 });
    const [lost, bobs] = decided.payouts;
    expect(lost?.status).to.equal('unknown');
    const bobPayout = await game.lightning.books.ledger.get(bobs?.intentId as string);
    expect(emulator.control.claimWithdrawal(bobPayout?.remoteId as string).status).to.equal('OK');
    clock.advance(601_000);
    await eventually(
      async () => (await game.lightning.matches.get(match.id)).payouts.length === 3,
      5_000,
      "alice's payout issued again by the match",
    );
    await eventually(
      async () =>
        (await game.lightning.books.ledger.get(bobPayout?.id as string))?.status === 'completed',
      5_000,
      "bob's code claimed",
    );

    const unshown = await refusal(
      game.lightning.operator.reissue(lost?.intentId as string, 'ann'),
      OperatorRefusedError,
    );
    expect(unshown.message).to.match(/never shown/);
    const claimed = await refusal(
      game.lightning.operator.reissue(bobPayout?.id as string, 'ann'),
      OperatorRefusedError,
    );
    expect(claimed.message).to.match(/completed/);
    await refusal(game.lightning.operator.reissue(match.id, 'ann'), OperatorRefusedError);
    await refusal(game.lightning.operator.reissue('no-such-intent', 'ann'), OperatorRefusedError);
    await refusal(game.lightning.operator.reissue(match.id, ''), InvalidArgumentError);
    expect((await game.lightning.operator.log()).actions).to.deep.equal([]);
  });

  it('block: every money helper of the player refuses before anything is recorded or sent, in the room too, until unblock', async () => {
    const { game, room, alice } = await arena();
    const bob = await game.colyseus.connectTo(room, { playerId: 'bob' });
    const held = await room.plugins.lightning.reward(serverClient(room, alice), {
      amountMsat: 21_000,
      description: 'before the block',
    });

    const line = await game.lightning.operator.block('alice', 'ann', 'chargebacks');
    expect(gist(line)).to.deep.equal({
      by: 'ann',
      action: 'block',
      intentId: null,
      playerId: 'alice',
      before: 'unblocked',
      after: 'blocked',
      note: 'chargebacks',
    });
    const requests = game.emulator.control.withdrawalRequests().length;
    const charges = game.emulator.control.staticCharges().length;
    const match = await game.lightning.matches.open({ entryFeeMsat: 25_000 });
    const calls: [string, Promise<unknown>][] = [
      [
        'room reward',
        room.plugins.lightning.reward(serverClient(room, alice), {
          amountMsat: 21_000,
          description: 'x',
        }),
      ],
      [
        'room fee',
        room.plugins.lightning.chargeEntryFee(serverClient(room, alice), {
          amountMsat: 21_000,
          description: 'x',
        }),
      ],
      [
        'reward',
        game.lightning.reward({ playerId: 'alice', amountMsat: 21_000, description: 'x' }),
      ],
      [
        'fee',
        game.lightning.chargeEntryFee({ playerId: 'alice', amountMsat: 21_000, description: 'x' }),
      ],
      [
        'spend',
        game.lightning.spendPoints({
          playerId: 'alice',
          userId: 'u-1',
          amount: 1,
          currency: 'USDZ',
          description: 'x',
        }),
      ],
      [
        'address',
        game.lightning.payAddress({
          playerId: 'alice',
          lnAddress: 'alice@emulator.test',
          amountMsat: 21_000,
        }),
      ],
      ['enter', game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' })],
    ];
    for (const [what, call] of calls) {
      const err = await refusal(call, PlayerBlockedError);
      expect(err.code, what).to.equal('LN_PLAYER_BLOCKED');
      expect(err.playerId, what).to.equal('alice');
    }
    expect(game.emulator.control.withdrawalRequests()).to.have.length(requests);
    expect(game.emulator.control.staticCharges()).to.have.length(charges);
    expect(
      (await game.lightning.books.ledger.openByPlayer('alice')).map((i) => i.id),
    ).to.deep.equal([held.id]);
    // Her open code stays valid; bob is not blocked.
    const heldIntent = await game.lightning.books.ledger.get(held.id);
    expect(game.emulator.control.claimWithdrawal(heldIntent?.remoteId as string).status).to.equal(
      'OK',
    );
    await eventually(
      () => room.state.lightning.rewards.get(held.id)?.status === 'completed',
      5_000,
      'her held code claimed',
    );
    const bobs = await room.plugins.lightning.reward(serverClient(room, bob), {
      amountMsat: 21_000,
      description: 'x',
    });
    expect(bobs.status).to.equal('pending');

    await refusal(game.lightning.operator.block('alice', 'bo', 'twice'), OperatorRefusedError);
    await refusal(game.lightning.operator.block('', 'ann', 'nobody'), InvalidArgumentError);
    await refusal(game.lightning.operator.block('carol', '', 'no name'), InvalidArgumentError);
    await refusal(game.lightning.operator.block('carol', 'ann', ''), InvalidArgumentError);

    const lifted = await game.lightning.operator.unblock('alice', 'bo');
    expect(gist(lifted)).to.include({
      action: 'unblock',
      before: 'blocked',
      after: 'unblocked',
      by: 'bo',
    });
    await refusal(game.lightning.operator.unblock('alice', 'bo'), OperatorRefusedError);
    const again = await room.plugins.lightning.reward(serverClient(room, alice), {
      amountMsat: 21_000,
      description: 'after',
    });
    expect(again.status).to.equal('pending');
    const log = await game.lightning.operator.log({ playerId: 'alice' });
    expect(log.actions.map((a) => [a.action, a.by])).to.deep.equal([
      ['block', 'ann'],
      ['unblock', 'bo'],
    ]);
  });

  it('operator.log pages oldest first and refuses a bad query', async () => {
    const { game } = await arena();
    for (const player of ['p1', 'p2', 'p3'])
      await game.lightning.operator.block(player, 'ann', 'test');
    const first = await game.lightning.operator.log({ limit: 2 });
    expect(first.actions.map((a) => a.playerId)).to.deep.equal(['p1', 'p2']);
    const rest = await game.lightning.operator.log({ limit: 2, after: first.next as string });
    expect(rest).to.deep.include({ next: null });
    expect(rest.actions.map((a) => a.playerId)).to.deep.equal(['p3']);
    for (const bad of [{ limit: 0 }, { after: 'x' }, { extra: 1 }, 'all']) {
      await refusal(game.lightning.operator.log(bad as never), InvalidArgumentError);
    }
  });
});
