/**
 * The first game of docs/ROOMS.md and the README, as a Colyseus app lays it out: the Lightning
 * object in its own module, the room in `rooms/Arena.ts` with the plugin in a class field,
 * and `app.config.ts`. The test imports them as a game would (no top-level await, no room
 * factory), starts the server on a free port with the built-in emulator, and plays a round.
 */
import { readFileSync } from 'node:fs';
import { ColyseusSDK } from '@colyseus/sdk';
import { expect } from 'chai';
import { request } from 'undici';
import type { Arena } from '../../examples/first-game/rooms/Arena.js';
import { decodeLnurl } from '../../src/emulator/index.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/ports.js';
import { sawText } from './support.js';

type ClientEntry = { status: string; code: string };
type LightningView = {
  lightning?: {
    rewards?: Map<string, ClientEntry>;
    entryFees?: Map<string, ClientEntry>;
  };
};

const FILES = ['lightning.ts', 'rooms/Arena.ts', 'app.config.ts'];
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('room: the first game of docs/ROOMS.md', () => {
  it('is the code docs/ROOMS.md shows, importing the package by its name', () => {
    const doc = read('docs/ROOMS.md');
    for (const file of FILES) {
      const code = read(`examples/first-game/${file}`)
        .split('\n')
        .slice(1) // the header comment that names the test
        .join('\n')
        .replace(/'(\.\.\/)+src\/index\.js'/g, "'colyseus-lightning'");
      expect(doc, file).to.include(`\`\`\`ts\n// ${file}\n${code}\`\`\``);
    }
    expect(read('examples/first-game/rooms/Arena.ts').trimEnd().split('\n').length).to.be.below(35);
  });

  describe('on a server', () => {
    let port: number;
    let game: {
      lightning: typeof import('../../examples/first-game/lightning.js').lightning;
      issueToken: (player: string) => string;
      server: typeof import('../../examples/first-game/app.config.js').default;
      getRoom: (id: string) => unknown;
    };
    const sdk = (player: string) => {
      const client = new ColyseusSDK(`ws://127.0.0.1:${port}`);
      client.auth.token = game.issueToken(player);
      return client;
    };
    const chargesOf = (player: string) =>
      (game.lightning.service.emulator?.control.staticCharges() ?? []).filter(
        (c) => c.internalId === player,
      );
    /** Resolves when the server answered a ping sent after everything sent so far. */
    const pong = (room: { ping(callback: (ms: number) => void): void }) =>
      new Promise<number>((resolve) => room.ping(resolve));
    /** No create call of the player's is in flight (each is recorded before it is sent). */
    const settledCreates = async (player: string) => {
      const open = await game.lightning.books.ledger.openByPlayer(player);
      return open.every((i) => i.status !== 'creating');
    };

    before(async () => {
      port = await freePort();
      process.env.PUBLIC_URL = `http://127.0.0.1:${port}`;
      delete process.env.LIGHTNING_API_KEY;
      const { lightning } = await import('../../examples/first-game/lightning.js');
      const { issueToken } = await import('../../examples/first-game/auth.js');
      const server = (await import('../../examples/first-game/app.config.js')).default;
      // The same copy of Colyseus as the app's: mocha may load this file as CommonJS.
      const { matchMaker } = await import('@colyseus/core');
      game = { lightning, issueToken, server, getRoom: (id) => matchMaker.getLocalRoomById(id) };
      await server.listen(port);
    });

    after(async () => {
      await game?.server.gracefullyShutdown(false);
      await game?.lightning.close();
    });

    it('charges the entry fee on "enter", hears it paid, pays the winner, shows each only to its player', async () => {
      const { lightning } = game;
      const alice = await sdk('alice').joinOrCreate('arena');
      const bob = await sdk('bob').joinById(alice.roomId);
      const forged = new ColyseusSDK(`ws://127.0.0.1:${port}`);
      forged.auth.token = `${Buffer.from('alice').toString('base64url')}.AAAA`;
      const refused = await forged
        .joinById(alice.roomId)
        .then(() => 'joined')
        .catch(() => 'refused');
      expect(refused).to.equal('refused');

      const room = game.getRoom(alice.roomId) as Arena;
      const view = (r: { state: unknown }) => (r.state as LightningView).lightning;

      alice.send('enter');
      const fee = await eventually(
        () => [...(view(alice)?.entryFees?.values() ?? [])][0],
        3000,
        "alice's fee",
      );
      expect(fee).to.include({ status: 'pending' });
      const emulator = lightning.service.emulator;
      if (!emulator) throw new Error('the first game runs on the built-in emulator here');
      const { callback } = (await (await request(decodeLnurl(fee.code))).body.json()) as {
        callback: string;
      };
      const { pr } = (await (await request(`${callback}?amount=21000`)).body.json()) as {
        pr: string;
      };
      expect(emulator.control.payInvoice(pr)).to.include({ status: 'OK' });
      await eventually(() => room.paid.has('alice'), 3000, 'fee paid hook');
      await eventually(() => fee.status === 'completed', 3000, 'fee completed on the client');

      // Paid: "enter" again charges nothing. The ping's answer comes after the message was
      // handled, and a charge it started would be in the ledger by then.
      alice.send('enter');
      await pong(alice);
      await eventually(() => settledCreates('alice'), 3000, "alice's creates");
      expect(chargesOf('alice')).to.have.length(1);

      const winner = room.clients.find((c) => c.sessionId === alice.sessionId);
      if (!winner) throw new Error('alice is not in the room');
      await room.endRound(winner);
      const reward = await eventually(
        () => [...(view(alice)?.rewards?.values() ?? [])][0],
        3000,
        "alice's reward",
      );
      expect(reward.code).to.match(/^lnurl1/i);
      // A change after the reward: once bob has it, he has every patch that carried the reward.
      room.state.round = 1;
      await eventually(() => (bob.state as { round?: number }).round === 1, 3000, 'bob patched');
      expect(sawText(bob, reward.code)).to.equal(false);
      expect(sawText(bob, fee.code)).to.equal(false);
      // Bob's maps are there, empty (issue 25): none of alice's entries reached him.
      expect(view(bob)?.rewards?.size).to.equal(0);
      expect(view(bob)?.entryFees?.size).to.equal(0);
      await alice.leave();
      await bob.leave();
    });

    it('a flood of "enter" drops the client and opens one fee; a burst within the limit, one too', async () => {
      const mallory = await sdk('mallory').joinOrCreate('arena');
      const dropped = new Promise<number>((resolve) => mallory.onLeave(resolve));
      for (let i = 0; i < 1000; i++) mallory.send('enter');
      expect(await dropped).to.equal(4002); // dropped by the server (CloseCode.WITH_ERROR)
      await eventually(() => settledCreates('mallory'), 5000, "mallory's fee created");
      expect(chargesOf('mallory')).to.have.length(1);
      expect(await game.lightning.books.ledger.openByPlayer('mallory')).to.have.length(1);

      const carol = await sdk('carol').joinOrCreate('arena');
      for (let i = 0; i < 3; i++) carol.send('enter');
      await pong(carol);
      await eventually(() => settledCreates('carol'), 5000, "carol's fee created");
      expect(chargesOf('carol')).to.have.length(1);
      await carol.leave();
    });
  });
});
