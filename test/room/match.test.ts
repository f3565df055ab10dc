/**
 * A match in a room (issue 14), with real SDK clients: the pot and the rake reach every client,
 * fees and payouts only their owners; onFunded fires once every entered player has paid; a
 * settled match pays its winner once under duplicated and dropped callbacks; an abort refunds
 * each paid player, whose claim code only they see; a disposed room aborts its open match.
 */
import { expect } from 'chai';
import { InvalidArgumentError } from '../../src/errors.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { type Arena, caughtUp, sawText, serverClient, startArena } from './support.js';

type ClientMatch = { status: string; potMsat: string; rakeMsat: string; paid: number };
type ClientEntry = { status: string; code: string; amount: string; playerId: string };

function stateOf(sdkRoom: { state: unknown }) {
  return (
    sdkRoom.state as {
      lightning?: {
        matches?: Map<string, ClientMatch>;
        rewards?: Map<string, ClientEntry>;
        entryFees?: Map<string, ClientEntry>;
      };
    }
  ).lightning;
}

describe('room: matches', function () {
  this.timeout(20_000);
  let game: Game;
  afterEach(async () => game?.stop());

  /** Pays a fee as the player's wallet would, at the emulator. */
  function pay(feeId: string) {
    return game.lightning.books.ledger.get(feeId).then((fee) => {
      expect(game.emulator.control.payStaticCharge(fee?.remoteId as string).status).to.equal('OK');
    });
  }

  it('plays a funded match: the pot on every screen, the payout to the winner alone, once', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    // Every callback is sent three times: the payout must still be made and claimed once.
    game.emulator.control.callbacks.set({ duplicate: 3 });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const bob = await game.colyseus.connectTo(room, { playerId: 'bob' });
    const match = await room.plugins.lightning.openMatch({
      entryFeeMsat: 100_000,
      rake: 0.1,
      seats: 2,
    });
    let funded = 0;
    match.onFunded(() => funded++);

    const a = await match.enter(serverClient(room, alice));
    const b = await match.enter(serverClient(room, bob));
    const again = await match.enter(serverClient(room, alice));
    expect(again.entry.id).to.equal(a.entry.id);
    expect(game.emulator.control.staticCharges()).to.have.length(2);
    await pay(a.entry.id);
    await a.settled;
    await eventually(() => stateOf(bob)?.matches?.get(match.id)?.paid === 1, 5_000, 'one paid');
    expect(funded).to.equal(0);
    await pay(b.entry.id);
    await eventually(() => funded === 1, 5_000, 'onFunded');
    await eventually(
      () => stateOf(bob)?.matches?.get(match.id)?.potMsat === '200000',
      5_000,
      'the pot on screen',
    );

    const settled = await match.settle({ alice: 1 });
    expect(settled.payouts[0]).to.include({ playerId: 'alice', amountMsat: '180000' });
    const payout = await eventually(
      () => [...(stateOf(alice)?.rewards?.values() ?? [])].find((r) => r.amount === '180000'),
      5_000,
      'the payout on the winner screen',
    );
    await eventually(
      () => stateOf(bob)?.matches?.get(match.id)?.status === 'settled',
      5_000,
      'settled on screen',
    );
    expect(stateOf(bob)?.matches?.get(match.id)?.rakeMsat).to.equal('20000');
    await caughtUp(room, alice, bob);
    expect(sawText(bob, payout.code)).to.equal(false);
    expect(stateOf(bob)?.rewards?.size ?? 0).to.equal(0);

    const request = game.emulator.control
      .withdrawalRequests()
      .find((w) => w.internalId === 'alice');
    game.emulator.control.claimWithdrawal(request?.id as string);
    await eventually(
      () => [...(stateOf(alice)?.rewards?.values() ?? [])].some((r) => r.status === 'completed'),
      5_000,
      'the payout claimed on screen',
    );
    await match.settle({ alice: 1 });
    expect(game.emulator.control.withdrawalRequests()).to.have.length(1);
    expect(funded).to.equal(1);
  });

  it('an aborted match refunds the paid player, whose refund code only they see', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const bob = await game.colyseus.connectTo(room, { playerId: 'bob' });
    const match = await room.plugins.lightning.openMatch({ entryFeeMsat: 30_000 });
    const a = await match.enter(serverClient(room, alice));
    const b = await match.enter(serverClient(room, bob));
    await pay(a.entry.id);
    await a.settled;

    const aborted = await match.abort('bob did not pay in time');
    expect(aborted.status).to.equal('aborted');
    expect((await b.settled).status).to.equal('expired');
    const refund = await eventually(
      () => [...(stateOf(alice)?.rewards?.values() ?? [])].find((r) => r.amount === '30000'),
      5_000,
      'the refund on alice screen',
    );
    expect(refund.code).to.match(/^lnurl/i);
    await eventually(
      () => stateOf(bob)?.matches?.get(match.id)?.status === 'aborted',
      5_000,
      'aborted on every screen',
    );
    await caughtUp(room, alice, bob);
    expect(sawText(bob, refund.code)).to.equal(false);
    expect(game.emulator.control.withdrawalRequests()).to.have.length(1);
  });

  it('a room disposed with an open match aborts it, refunding who paid', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const aborted: string[] = [];
    game.lightning.on('match.aborted', (m) => aborted.push(m.reason ?? ''));
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const match = await room.plugins.lightning.openMatch({ entryFeeMsat: 30_000 });
    const a = await match.enter(serverClient(room, alice));
    await pay(a.entry.id);
    await a.settled;
    await room.disconnect();
    await eventually(() => aborted.length === 1, 5_000, 'the abort of the disposed room');
    expect(aborted[0]).to.equal('room disposed');
    const [claim] = await game.lightning.books.claims('alice');
    expect(claim).to.include({ amountMsat: '30000', matchId: match.id });
  });

  it('refuses an entry whose options are not a plain object (null, a Set, a Date): nothing charged', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const match = await room.plugins.lightning.openMatch({ entryFeeMsat: 30_000 });
    const enter = match.enter.bind(match) as (
      client: unknown,
      options: unknown,
    ) => Promise<unknown>;
    for (const options of [null, new Set(), new Date(), ['alice@emulator.test'], 'x']) {
      const err = await enter(serverClient(room, alice), options).catch((e: unknown) => e);
      expect(err, String(options)).to.be.instanceOf(InvalidArgumentError);
    }
    expect(game.emulator.control.staticCharges()).to.deep.equal([]);
    expect((await match.refresh()).players).to.deep.equal([]);
  });
});
