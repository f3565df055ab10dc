import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { request } from 'undici';
import { defineArena } from '../../examples/snippets/minimal-room.js';
import { decodeLnurl } from '../../src/emulator/index.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { caughtUp, sawText, sdkWithToken, startArena } from './support.js';

type ClientEntry = { status: string; code: string; playerId: string };
type LightningView = {
  lightning?: {
    rewards?: Map<string, ClientEntry>;
    entryFees?: Map<string, ClientEntry>;
  };
};

const accounts = new Map([
  ['token-of-alice', 'alice'],
  ['token-of-bob', 'bob'],
]);
async function login(token: string): Promise<string> {
  const id = accounts.get(token);
  if (!id) throw new Error('not signed in');
  return id;
}

describe('room: the minimal room of docs/ROOMS.md', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it('is the code docs/ROOMS.md shows, in under 30 lines', () => {
    const file = new URL('../../examples/snippets/minimal-room.ts', import.meta.url);
    const code = readFileSync(file, 'utf8').split('\n').slice(1).join('\n');
    const doc = readFileSync(new URL('../../docs/ROOMS.md', import.meta.url), 'utf8');
    expect(doc).to.include(`\`\`\`ts\n${code}\`\`\``);
    expect(code.trimEnd().split('\n').length).to.be.below(30);
  });

  it('charges the entry fee on "enter", hears it paid, and pays the winner', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const Arena = defineArena(game.lightning, login);
    game.colyseus.server.define('minimal', Arena);
    const room = (await game.colyseus.createRoom('minimal')) as InstanceType<typeof Arena>;
    const alice = await sdkWithToken(game, 'token-of-alice').joinById(room.roomId);
    const bob = await sdkWithToken(game, 'token-of-bob').joinById(room.roomId);
    const view = (r: { state: unknown }) => (r.state as LightningView).lightning;

    alice.send('enter');
    const fee = await eventually(
      () => [...(view(alice)?.entryFees?.values() ?? [])][0],
      3000,
      "alice's fee",
    );
    expect(fee).to.include({ status: 'pending', playerId: 'alice' });
    const params = (await (await request(decodeLnurl(fee.code))).body.json()) as {
      callback: string;
    };
    const pr = (await (await request(`${params.callback}?amount=21000`)).body.json()) as {
      pr: string;
    };
    expect(game.emulator.control.payInvoice(pr.pr)).to.include({ status: 'OK' });
    await eventually(() => room.paid.has('alice'), 3000, 'fee paid hook');
    await eventually(() => fee.status === 'completed', 3000, 'fee completed on the client');

    const winner = room.clients.get(alice.sessionId);
    if (!winner) throw new Error('alice is not in the room');
    await room.endRound(winner);
    const reward = await eventually(
      () => [...(view(alice)?.rewards?.values() ?? [])][0],
      3000,
      "alice's reward",
    );
    expect(reward.code).to.match(/^lnurl1/i);
    await caughtUp(room, bob);
    expect(sawText(bob, reward.code)).to.equal(false);
    expect(sawText(bob, fee.code)).to.equal(false);
    expect(view(bob)?.rewards).to.equal(undefined);
    expect(view(bob)?.entryFees).to.equal(undefined);
  });
});
