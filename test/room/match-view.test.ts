/**
 * Issue 25, finding 4: one match, one shape. The server's `MatchView` (`lightning.matches.get(id)`,
 * `match.view`) and the match every client decodes from `state.lightning.matches` name the same
 * facts with the same fields: `entered` and `paid` (and `seats`, `funded`, `potMsat`, `status`)
 * hold the same values on both sides.
 */
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { type Arena, serverClient, startArena } from './support.js';

type Decoded = Record<string, unknown> & { paid?: number; toJSON(): Record<string, unknown> };

function matchOn(sdkRoom: { state: unknown }, id: string): Decoded | undefined {
  return (
    sdkRoom.state as { lightning?: { matches?: Map<string, Decoded> } }
  ).lightning?.matches?.get(id);
}

describe('room: the synced match and MatchView share their fields (issue 25, finding 4)', function () {
  this.timeout(20_000);
  let game: Game;
  afterEach(async () => game?.stop());

  it('entered and paid mean the same on the server and on every screen', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const bob = await game.colyseus.connectTo(room, { playerId: 'bob' });
    const match = await room.plugins.lightning.openMatch({ entryFeeMsat: 40_000 });
    const a = await match.enter(serverClient(room, alice));
    await match.enter(serverClient(room, bob));
    const fee = await game.lightning.books.ledger.get(a.entry.id);
    expect(game.emulator.control.payStaticCharge(fee?.remoteId as string).status).to.equal('OK');
    await a.settled;
    const synced = await eventually(
      () => (matchOn(bob, match.id)?.paid === 1 ? matchOn(bob, match.id) : undefined),
      5_000,
      'alice paid, on screen',
    );
    const view = await game.lightning.matches.get(match.id);

    const same = ['id', 'status', 'entryFeeMsat', 'potMsat', 'rake', 'entered', 'paid', 'seats'];
    for (const field of [...same, 'funded']) {
      expect(view, `MatchView.${field}`).to.have.property(field);
    }
    for (const field of same) {
      expect(synced[field], field).to.deep.equal(view[field as keyof typeof view]);
    }
    expect(synced.funded).to.equal(view.funded);
    expect(view).to.include({ entered: 2, paid: 1, seats: 0, funded: false, potMsat: '40000' });
    // Every fact the screen shows has its field on the server, under the same name.
    for (const field of Object.keys(synced.toJSON())) {
      expect(view, `MatchView has the synced ${field}`).to.have.property(field);
    }
    expect(match.view).to.include({ entered: view.entered, paid: view.paid });
  });
});
