/**
 * A room that holds one match and locks itself once the match is closed (`onClosed`): however
 * the match was decided (by the room, or by the game's server code, as an operator or a timeout
 * would), the next player who asks to join is seated at a new table, not at one whose match is
 * over, where every entry would be refused with LN_MATCH_CLOSED.
 */
import { type Client, definePlugins, Room } from '@colyseus/core';
import { expect } from 'chai';
import type { RoomMatch } from '../../src/room/match.js';
import { LightningState } from '../../src/room/state.js';
import type { MatchView } from '../../src/server/match/view.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';
import { ArenaState, current, type JoinOptions } from './support.js';

function lightningOf() {
  if (!current.lightning) throw new Error('start the game first');
  return current.lightning;
}

/** A table as the load test and the README's duel write one: one match, locked once it closed. */
class Table extends Room<{ state: ArenaState }> {
  override maxClients = 4;
  override state = new ArenaState();
  override plugins = definePlugins([lightningOf().plugin()]);
  match: RoomMatch | undefined;
  readonly closed: MatchView[] = [];

  override async onCreate(): Promise<void> {
    this.state.lightning = new LightningState();
    const match = await this.plugins.lightning.openMatch({ entryFeeMsat: 10_000, seats: 4 });
    this.match = match;
    match.onClosed((view) => {
      this.closed.push(view);
      void this.lock();
    });
  }

  override onJoin(client: Client, options: JoinOptions = {}): void {
    client.userData = { playerId: options.playerId };
  }
}

type SdkState = { lightning?: { matches?: Map<string, { id: string; status: string }> } };
const matchOf = (sdkRoom: { state: unknown }) =>
  [...((sdkRoom.state as SdkState).lightning?.matches?.values() ?? [])][0];

describe('room: a match closed, its room takes no new player', function () {
  this.timeout(20_000);
  let game: Game;
  afterEach(async () => game?.stop());

  async function start(): Promise<Game> {
    game = await startGame({ table: Table }, { reconciler: { enabled: false } });
    current.lightning = game.lightning;
    current.plugin = {};
    return game;
  }

  it('a table whose match the server aborted seats the next player at a new table', async () => {
    await start();
    const alice = await game.colyseus.sdk.joinOrCreate('table', { playerId: 'alice' });
    const seen = await eventually(() => matchOf(alice), 5_000, 'the match on screen');
    // Decided outside the room, as an operator, a timeout or another process would.
    await game.lightning.matches.abort(seen.id, 'called off by the server');
    await eventually(() => matchOf(alice)?.status === 'aborted', 5_000, 'aborted on screen');

    const bob = await game.colyseus.sdk.joinOrCreate('table', { playerId: 'bob' });
    expect(bob.roomId).to.not.equal(alice.roomId);
    const table = game.colyseus.getRoomById(alice.roomId) as Table;
    expect(table.closed).to.have.length(1);
    expect(table.locked).to.equal(true);
  });

  it('fires once for a match the room settled, and at once for a listener added after', async () => {
    await start();
    const alice = await game.colyseus.sdk.joinOrCreate('table', { playerId: 'alice' });
    const table = game.colyseus.getRoomById(alice.roomId) as Table;
    await eventually(() => table.match, 5_000, 'the match opened');
    const match = table.match as RoomMatch;
    await match.abort('nobody came');
    await match.abort('nobody came');
    await match.refresh();
    expect(table.closed).to.have.length(1);
    const late = await new Promise<MatchView>((resolve) => match.onClosed(resolve));
    expect(late.status).to.equal('aborted');

    const bob = await game.colyseus.sdk.joinOrCreate('table', { playerId: 'bob' });
    expect(bob.roomId).to.not.equal(alice.roomId);
  });
});
