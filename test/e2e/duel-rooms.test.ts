/**
 * The duel example's rooms end with their match: once a duel was called off (a player left
 * before both paid: refunds) or won (settled), the next player who asks to join is seated in a
 * fresh room with an open match, never in the one whose match is over. Players sign in as the
 * duel's page does (`POST /login`, the token on the SDK); no browser needed.
 */
import { ColyseusSDK, type Room } from '@colyseus/sdk';
import { expect } from 'chai';
import { startDuel } from '../../examples/duel/main.js';
import { eventually } from '../support/eventually.js';
import { quietLogger } from '../support/game.js';
import { holdPort } from '../support/ports.js';

type Seen = { status: string; paid: number; potMsat: string; funded: boolean };
const matchOf = (room: Room) =>
  [
    ...((
      room.state as { lightning?: { matches?: Map<string, Seen> } }
    ).lightning?.matches?.values() ?? []),
  ][0];

describe('example duel: a room whose duel ended takes no new player', function () {
  this.timeout(30_000);
  let duel: Awaited<ReturnType<typeof startDuel>> | undefined;

  before(async () => {
    const { port, release } = await holdPort();
    duel = await startDuel({
      port,
      beforeListen: release,
      log: () => {},
      lightning: { logger: quietLogger, reconciler: { enabled: false } },
    });
  });
  after(async () => duel?.stop());

  const base = () => (duel?.url ?? '').replace(/\/$/, '');
  async function join(name: string): Promise<Room> {
    const login = await fetch(`${base()}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });
    const sdk = new ColyseusSDK(base());
    sdk.auth.token = ((await login.json()) as { token: string }).token;
    return sdk.joinOrCreate('duel');
  }
  async function pay(player: string): Promise<void> {
    const lightning = duel?.lightning;
    const fee = await eventually(
      async () => {
        const [open] = (await lightning?.books.ledger.openByPlayer(player)) ?? [];
        return open?.remoteId ? open.remoteId : undefined;
      },
      5_000,
      `${player}'s fee`,
    );
    lightning?.service.emulator?.control.payStaticCharge(fee);
  }
  async function freshRoomFor(name: string, ended: Room): Promise<void> {
    const next = await join(name);
    expect(next.roomId).to.not.equal(ended.roomId);
    const fresh = await eventually(() => matchOf(next), 5_000, `${name}'s match`);
    expect(fresh).to.include({ status: 'open', paid: 0 });
    await next.leave();
  }

  it('called off: a player left before both paid', async () => {
    const alice = await join('alice');
    const bob = await join('bob');
    expect(bob.roomId).to.equal(alice.roomId);
    await pay('alice');
    await eventually(() => matchOf(alice)?.paid === 1, 5_000, 'alice paid');
    await bob.leave();
    await eventually(() => matchOf(alice)?.status === 'aborted', 5_000, 'refunded on screen');
    await freshRoomFor('carol', alice);
    await alice.leave();
  });

  it('won: settled to the first click, then a player left', async () => {
    const dana = await join('dana');
    const erin = await join('erin');
    expect(erin.roomId).to.equal(dana.roomId);
    await pay('dana');
    await pay('erin');
    await eventually(() => matchOf(dana)?.funded, 5_000, 'funded');
    dana.send('click');
    await eventually(() => matchOf(erin)?.status === 'settled', 5_000, 'settled on screen');
    await erin.leave();
    await freshRoomFor('frank', dana);
    await dana.leave();
  });
});
