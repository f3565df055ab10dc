import { expect } from 'chai';
import { NotSignedInError } from '../../src/errors.js';
import type { Reward } from '../../src/room/state.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { type Arena, caughtUp, framesOf, sawText, serverClient, startArena } from './support.js';

type ClientEntry = { status: string; code: string; amount: string; purpose: string };

function rewardsOf(sdkRoom: { state: unknown }) {
  const state = sdkRoom.state as {
    lightning?: { rewards?: Map<string, ClientEntry> & { size: number } };
  };
  return state.lightning?.rewards;
}

describe('room: reward', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it('only the winner receives the code, and sees pending then completed', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const winner = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const other = await game.colyseus.connectTo(room, { playerId: 'bob' });

    const amountMsat = 73_219_000;
    const entry: Reward = await room.plugins.lightning.reward(serverClient(room, winner), {
      amountMsat,
      description: 'Round winner',
    });
    expect(entry).to.include({ status: 'pending', playerId: 'alice', amount: String(amountMsat) });
    expect(entry.code).to.match(/^lnurl1/i);

    const seen: string[] = [];
    const mine = await eventually(() => rewardsOf(winner)?.get(entry.id), 3000, 'winner entry');
    seen.push(mine.status);
    expect(mine).to.include({ code: entry.code, amount: String(amountMsat), purpose: 'reward' });
    // Only synced what the screen needs: the id is the entry's key, the owner is the client,
    // the kind is the map (`purpose` says more, issue 25).
    expect([...(rewardsOf(winner)?.keys() ?? [])]).to.deep.equal([entry.id]);
    expect(mine).to.not.have.any.keys('id', 'playerId', 'createdAt', 'updatedAt', 'kind');

    const [remote] = game.emulator.control.withdrawalRequests();
    expect(game.emulator.control.claimWithdrawal(remote?.id as string)).to.include({
      status: 'OK',
    });
    await eventually(() => rewardsOf(winner)?.get(entry.id)?.status === 'completed', 3000);
    seen.push(rewardsOf(winner)?.get(entry.id)?.status as string);
    expect(seen).to.deep.equal(['pending', 'completed']);

    await caughtUp(room, other);
    expect(framesOf(other).length).to.be.greaterThan(0);
    expect(sawText(other, entry.code)).to.equal(false);
    expect(sawText(other, entry.code.toLowerCase())).to.equal(false);
    expect(sawText(other, String(amountMsat))).to.equal(false);
    expect(sawText(other, entry.id)).to.equal(false);
    expect(rewardsOf(other)?.size ?? 0).to.equal(0);
    // The winner's stream did carry them, so the search above would have found them.
    expect(sawText(winner, entry.code)).to.equal(true);
    expect(sawText(winner, String(amountMsat))).to.equal(true);
  });
});

describe('room: a money helper for a player with no stable id (issue 23, finding 5)', () => {
  let game: Game | undefined;
  afterEach(async () => game?.stop());

  it('warns once, naming the fix, when a player is known only by their session id', async () => {
    const warnings: string[] = [];
    const logger = { info: () => {}, warn: (m: string) => void warnings.push(m), error: () => {} };
    game = await startArena({ reconciler: { enabled: false }, logger });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    await room.plugins.lightning.reward(serverClient(room, alice), {
      amountMsat: 20_000,
      description: 'named',
    });
    const about = () => warnings.filter((w) => w.includes('is not signed in'));
    expect(about(), 'a player with an id').to.deep.equal([]);

    const guests = [await game.colyseus.connectTo(room), await game.colyseus.connectTo(room)];
    for (const guest of guests) {
      await room.plugins.lightning.reward(serverClient(room, guest), {
        amountMsat: 20_000,
        description: 'anonymous',
      });
    }
    expect(about()).to.have.length(1);
    // The fix is the server's sign-in, never join options (which anyone can fill in).
    expect(about()[0])
      .to.include(guests[0]?.sessionId)
      .and.include("room's onAuth")
      .and.include('Never take the id from join options')
      .and.not.include('options.playerId');
  });

  it('refuses in production with NotSignedInError, nothing recorded, a fee of a match too', async () => {
    const warnings: string[] = [];
    const logger = { info: () => {}, warn: (m: string) => void warnings.push(m), error: () => {} };
    game = await startArena({ reconciler: { enabled: false }, logger });
    const started = game;
    const room = await game.colyseus.createRoom<Arena>('arena');
    const guest = serverClient(room, await game.colyseus.connectTo(room));
    const match = await room.plugins.lightning.openMatch({ entryFeeMsat: 10_000, seats: 2 });
    const previous = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      const refused = await Promise.all([
        room.plugins.lightning
          .reward(guest, { amountMsat: 20_000, description: 'anonymous' })
          .catch((e: unknown) => e),
        match.enter(guest).catch((e: unknown) => e),
      ]);
      for (const err of refused) {
        expect(err).to.be.instanceOf(NotSignedInError);
        expect((err as NotSignedInError).code).to.equal('LN_NOT_SIGNED_IN');
        expect((err as Error).message)
          .to.include(guest.sessionId)
          .and.include("room's onAuth")
          .and.include('client.auth');
      }
    } finally {
      if (previous === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = previous;
    }
    expect(await started.lightning.books.ledger.openByPlayer(guest.sessionId)).to.deep.equal([]);
    const control = started.lightning.service.emulator?.control;
    expect(control?.withdrawalRequests() ?? []).to.deep.equal([]);
    expect(control?.staticCharges() ?? []).to.deep.equal([]);
    expect((await match.refresh()).entered).to.equal(0);
    expect(warnings.filter((w) => w.includes('client.auth'))).to.deep.equal([]);
  });
});
