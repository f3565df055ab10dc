/**
 * The README's room ("A paid match in four files"), its code taken from the README as written,
 * on a real Colyseus server and the emulator: once its match ends, refunded after a player left
 * before both paid or settled to the winner, the next player who asks to join gets a fresh room
 * with an open match, never the ended one (whose every entry is LN_MATCH_CLOSED, its screen
 * stuck on the old pot). Players sign in as @colyseus/auth's JWT check does: a static onAuth
 * that sets client.auth.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Room } from '@colyseus/core';
import type { Room as SdkRoom } from '@colyseus/sdk';
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';
import { current, sdkWithToken } from './support.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The README's `rooms/Duel.ts`, written under test-artifacts/ with its imports pointed at this
 * checkout (`colyseus` is `@colyseus/core` here) and its `lightning` at the running game's.
 */
async function readmeDuel(): Promise<new (...args: never[]) => Room> {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /```ts\n\/\/ rooms\/Duel\.ts\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error("the README's rooms/Duel.ts block is gone");
  const dir = join(root, 'test-artifacts', 'readme-duel', 'rooms');
  mkdirSync(dir, { recursive: true });
  // The running game's Lightning, read when a room is made (each test starts its own game).
  writeFileSync(
    join(dir, '..', 'lightning.ts'),
    `import { current } from '../../test/room/support.js';
     export const lightning = {
       plugin: (o?: object) => (current.lightning as { plugin(o?: object): object }).plugin(o),
     };\n`,
  );
  const code = block
    .replace("from 'colyseus';", "from '@colyseus/core';")
    .replace("from 'colyseus-lightning';", "from '../../../src/index.js';");
  expect(code).to.not.equal(block);
  // Its own name per test: a module is evaluated once per URL.
  const file = join(dir, `Duel-${Date.now()}-${Math.random().toString(36).slice(2)}.ts`);
  writeFileSync(file, code);
  // Loaded as this suite's own modules are, so that it shares their instances of the package.
  const { Duel } = createRequire(import.meta.url)(file) as {
    Duel: new (...args: never[]) => Room;
  };
  rmSync(file); // loaded: the next run writes its own
  // Signed in as @colyseus/auth's JWT check signs a player in: client.auth = { id }.
  return class SignedInDuel extends (Duel as new (...args: never[]) => Room) {
    static async onAuth(token: string) {
      if (!token) throw new Error('no token');
      return { id: token };
    }
  };
}

type Seen = { status: string; paid: number; potMsat: string; funded: boolean };
type Fee = { status: string; remoteId?: string };
const matchOf = (room: SdkRoom) =>
  [
    ...((
      room.state as { lightning?: { matches?: Map<string, Seen> } }
    ).lightning?.matches?.values() ?? []),
  ][0];

describe("room: the README's paid match ends, and the next player gets a fresh room", function () {
  this.timeout(20_000);
  let game: Game;
  afterEach(async () => game?.stop());

  async function start() {
    const duel = await readmeDuel();
    game = await startGame({ duel: duel }, { reconciler: { enabled: false } });
    current.lightning = game.lightning;
    current.plugin = {};
  }
  const join = (name: string) => sdkWithToken(game, name).joinOrCreate('duel');
  /** Pays `player`'s fee of the open match, through the emulator, once it is charged. */
  async function pay(player: string) {
    const fee = await eventually(
      async () => {
        const [open] = await game.lightning.books.ledger.openByPlayer(player);
        return open?.remoteId ? open : undefined;
      },
      5_000,
      `${player}'s fee`,
    );
    game.emulator.control.payStaticCharge((fee as Fee).remoteId as string);
  }

  it('refunded: a player left before both paid', async () => {
    await start();
    const alice = await join('alice');
    const bob = await join('bob');
    expect(bob.roomId).to.equal(alice.roomId);
    alice.send('enter');
    bob.send('enter');
    await pay('alice');
    await eventually(() => matchOf(alice)?.paid === 1, 5_000, 'alice paid');
    await bob.leave();
    await eventually(() => matchOf(alice)?.status === 'aborted', 5_000, 'refunded on screen');

    const carol = await join('carol');
    expect(carol.roomId).to.not.equal(alice.roomId);
    const fresh = await eventually(() => matchOf(carol), 5_000, "carol's match");
    expect(fresh).to.include({ status: 'open', paid: 0, potMsat: '0' });
  });

  it('settled: the winner pressed, then a player left', async () => {
    await start();
    const alice = await join('alice');
    const bob = await join('bob');
    for (const p of [alice, bob]) p.send('enter');
    await pay('alice');
    await pay('bob');
    await eventually(() => matchOf(alice)?.funded, 5_000, 'funded');
    alice.send('press');
    await eventually(() => matchOf(bob)?.status === 'settled', 5_000, 'settled on screen');
    await bob.leave();

    const carol = await join('carol');
    expect(carol.roomId).to.not.equal(alice.roomId);
    const fresh = await eventually(() => matchOf(carol), 5_000, "carol's match");
    expect(fresh).to.include({ status: 'open', paid: 0, potMsat: '0' });
  });
});
