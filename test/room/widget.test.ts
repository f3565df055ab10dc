import { expect } from 'chai';
import { request } from 'undici';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { type Arena, caughtUp, sawText, serverClient, startArena } from './support.js';

type Session = { url: string | null; token: string; expiresAt: string | null };

describe('room: widget and purchase sessions', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it('only the requesting client gets lightning:widget and lightning:purchase', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, {
      playerId: 'alice',
      email: 'alice@example.com',
    });
    const bob = await game.colyseus.connectTo(room, { playerId: 'bob', email: 'bob@example.com' });
    const got = { alice: [] as [string, Session][], bob: [] as [string, Session][] };
    for (const type of ['lightning:widget', 'lightning:purchase']) {
      alice.onMessage(type, (s: Session) => got.alice.push([type, s]));
      bob.onMessage(type, (s: Session) => got.bob.push([type, s]));
    }

    const client = serverClient(room, alice);
    const widget = await room.plugins.lightning.openWidget(client, { metadata: { level: 3 } });
    const purchase = await room.plugins.lightning.openPurchase(client, { quoteCurrency: 'USD' });
    await eventually(() => got.alice.length === 2, 3000, 'both sessions');
    expect(got.alice.map(([type]) => type)).to.deep.equal([
      'lightning:widget',
      'lightning:purchase',
    ]);
    expect(got.alice[0]?.[1]).to.deep.equal(widget);
    expect(got.alice[1]?.[1]).to.deep.equal(purchase);

    // The session belongs to Alice, and its page opens with her token.
    const [session] = game.emulator.control.sessions('widget');
    expect(session).to.deep.include({ referenceId: 'alice' });
    const page = await request(widget.url);
    expect(page.statusCode).to.equal(200);
    await page.body.dump();

    await caughtUp(room, bob);
    expect(got.bob).to.deep.equal([]);
    expect(sawText(bob, widget.token)).to.equal(false);
    expect(sawText(bob, purchase.token)).to.equal(false);
    // Nor are the tokens in the shared state.
    expect(JSON.stringify(room.state.toJSON())).to.not.include(widget.token);
  });

  it('sessions opened without a webhookSecret say once that their webhooks are refused', async () => {
    const warnings: string[] = [];
    game = await startArena({
      reconciler: { enabled: false },
      logger: { info: () => {}, error: () => {}, warn: (m: string) => warnings.push(m) },
    });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, {
      playerId: 'alice',
      email: 'a@example.com',
    });
    const client = serverClient(room, alice);
    await room.plugins.lightning.openWidget(client, {});
    await room.plugins.lightning.openPurchase(client, { quoteCurrency: 'USD' });
    await room.plugins.lightning.openWidget(client, {});
    expect(warnings.filter((w) => w.includes('webhookSecret'))).to.have.length(1);
  });

  it('disclosures and email changes go to the player widget user', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, {
      playerId: 'alice',
      email: 'alice@example.com',
    });
    const client = serverClient(room, alice);
    await room.plugins.lightning.acceptDisclosures(client, [2, 3]);
    await room.plugins.lightning.updateEmail(client, 'alice@new.example.com');
    const users = game.emulator.control.users();
    expect(users).to.have.length(1);
    expect(users[0]).to.deep.include({
      reference_id: 'alice',
      email: 'alice@new.example.com',
      outstanding_disclosures: [6],
    });
  });
});
