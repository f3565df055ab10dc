/**
 * Issue 25, finding 5: `funded` means the roster paid. A match opened for `seats: 2` is not
 * funded when the first player pays before the second player's fee is even recorded (the old
 * rule, "every fee recorded so far is paid", started that round with one payer); a match opened
 * for `players` refuses anyone else with a typed error, before anything is charged; a match
 * opened without a roster cannot be waited on with `onFunded`.
 */
import { expect } from 'chai';
import { ConfigurationError, InvalidArgumentError, MatchSeatError } from '../../src/errors.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { type Arena, serverClient, startArena } from './support.js';

type ClientMatch = { paid: number; entered: number; seats: number; funded: boolean };

function matchOn(sdkRoom: { state: unknown }, id: string): ClientMatch | undefined {
  return (
    sdkRoom.state as { lightning?: { matches?: Map<string, ClientMatch> } }
  ).lightning?.matches?.get(id);
}

describe('room: a match is funded when its roster paid (issue 25, finding 5)', function () {
  this.timeout(20_000);
  let game: Game;
  afterEach(async () => game?.stop());

  async function pay(feeId: string) {
    const fee = await game.lightning.books.ledger.get(feeId);
    expect(game.emulator.control.payStaticCharge(fee?.remoteId as string).status).to.equal('OK');
  }

  it('seats: 2 waits for the second player, whose fee was not recorded when the first paid', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const bob = await game.colyseus.connectTo(room, { playerId: 'bob' });
    const match = await room.plugins.lightning.openMatch({ entryFeeMsat: 50_000, seats: 2 });
    const events: string[] = [];
    game.lightning.on('match.funded', (m) => events.push(m.id));
    let started = 0;
    match.onFunded(() => started++);

    const a = await match.enter(serverClient(room, alice));
    await pay(a.entry.id);
    expect((await a.settled).status).to.equal('completed');
    await eventually(() => matchOn(bob, match.id)?.paid === 1, 5_000, 'one paid on screen');
    // Alice alone paid, and every fee recorded so far is paid: the round must not start.
    expect(matchOn(bob, match.id)).to.include({ entered: 1, paid: 1, seats: 2, funded: false });
    expect((await game.lightning.matches.get(match.id)).funded).to.equal(false);
    expect(started).to.equal(0);

    const b = await match.enter(serverClient(room, bob));
    await eventually(() => matchOn(alice, match.id)?.entered === 2, 5_000, 'bob entered');
    expect(started).to.equal(0);
    await pay(b.entry.id);
    await eventually(() => started === 1, 5_000, 'onFunded once both paid');
    await eventually(() => matchOn(alice, match.id)?.funded === true, 5_000, 'funded on screen');
    expect(events).to.deep.equal([match.id]);

    // Every seat is taken: a third player is refused, nothing charged.
    const carol = await game.colyseus.connectTo(room, { playerId: 'carol' });
    const charges = game.emulator.control.staticCharges().length;
    const full = await match.enter(serverClient(room, carol)).catch((e: unknown) => e);
    expect(full).to.be.instanceOf(MatchSeatError);
    expect(full).to.include({ code: 'LN_MATCH_SEAT', reason: 'full', playerId: 'carol' });
    expect(game.emulator.control.staticCharges()).to.have.length(charges);
    expect(started).to.equal(1);
  });

  it('players: [...] refuses anyone else with MatchSeatError, and is funded once each of them paid', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const funded: string[] = [];
    game.lightning.on('match.funded', (m) => funded.push(m.id));
    const match = await game.lightning.matches.open({
      entryFeeMsat: 20_000,
      players: ['alice', 'bob'],
    });
    expect(match).to.include({ seats: 2, funded: false });
    expect(match.roster).to.deep.equal(['alice', 'bob']);
    const refused = await game.lightning.matches
      .enter({ matchId: match.id, playerId: 'mallory' })
      .catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(MatchSeatError);
    expect(refused).to.include({ reason: 'not-in-roster', playerId: 'mallory' });
    expect(game.emulator.control.staticCharges()).to.have.length(0);

    const alice = await game.lightning.matches.enter({ matchId: match.id, playerId: 'alice' });
    await pay(alice.id);
    await eventually(
      async () => (await game.lightning.matches.get(match.id)).paid === 1,
      5_000,
      'alice paid',
    );
    expect((await game.lightning.matches.get(match.id)).funded).to.equal(false);
    const bob = await game.lightning.matches.enter({ matchId: match.id, playerId: 'bob' });
    await pay(bob.id);
    await eventually(() => funded.length === 1, 5_000, 'the funded event');
    expect(await game.lightning.matches.get(match.id)).to.include({
      funded: true,
      paid: 2,
      entered: 2,
    });
  });

  it('a match without a roster has no funded: onFunded says how to open one', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const match = await room.plugins.lightning.openMatch({ entryFeeMsat: 20_000 });
    expect(match.view.seats).to.equal(0);
    expect(() => match.onFunded(() => {})).to.throw(ConfigurationError, /seats: n/);
    const both = await room.plugins.lightning
      .openMatch({ entryFeeMsat: 20_000, seats: 2, players: ['a', 'b'] })
      .catch((e: unknown) => e);
    expect(both).to.be.instanceOf(InvalidArgumentError);
    expect((both as Error).message).to.include('players or seats, not both');
  });
});
