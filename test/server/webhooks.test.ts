import { createHash } from 'node:crypto';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { request } from 'undici';
import { startEmulator } from '../../src/emulator/index.js';
import type { WebhookEvent } from '../../src/server/events.js';
import { signBody, verifySignature } from '../../src/server/webhook-signature.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}
const SECRET = 'whsec_0123456789abcdef0123';

async function post(url: string, body: string, headers: Record<string, string>) {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  await res.body.text();
  return res.statusCode;
}

describe('server core: ramp and widget webhooks', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it('accepts a ramp webhook signed by the emulator, once per signed body whatever its event id', async () => {
    const emulator = await startEmulator({ webhookSecret: SECRET });
    try {
      game = await startGame(
        { empty: EmptyRoom },
        { emulator, webhookSecret: SECRET, reconciler: { enabled: false } },
      );
      const events: WebhookEvent[] = [];
      game.lightning.on('webhook', (e) => events.push(e));
      const session = await game.lightning.api.ramp.createSession({
        email: 'p@example.com',
        webhook_url: `http://127.0.0.1:${game.port}/lightning/webhooks/ramp`,
        reference_id: 'player-7',
      });
      const delivery = await game.emulator.control.fireRampWebhook(
        session.session_token,
        'ramp.purchase.completed',
      );
      expect(delivery).to.include({ httpStatus: 200, ok: true });
      await eventually(() => events.length === 1);
      expect(events[0]).to.include({
        source: 'ramp',
        type: 'ramp.purchase.completed',
        deliveryId: delivery.eventId,
      });
      expect(events[0]?.data).to.include({ reference_id: 'player-7' });

      // A repeated delivery is acknowledged and not handled again, whatever its (unsigned)
      // event id header says: ten replays under new ids change nothing.
      const url = `http://127.0.0.1:${game.port}/lightning/webhooks/ramp`;
      for (let i = 0; i < 10; i++) {
        const headers = { ...delivery.headers, 'x-zbd-event-id': `replay-${i}` };
        expect(await post(url, delivery.body, headers)).to.equal(200);
      }
      expect(events).to.have.length(1);
      // The same signed body on the widget route is that route's event, once.
      const widget = `http://127.0.0.1:${game.port}/lightning/webhooks/widget`;
      expect(await post(widget, delivery.body, delivery.headers)).to.equal(200);
      expect(
        await post(widget, delivery.body, { ...delivery.headers, 'x-zbd-event-id': 'x' }),
      ).to.equal(200);
      expect(events.map((e) => e.source)).to.deep.equal(['ramp', 'widget']);
    } finally {
      await game.stop();
      await emulator.close();
    }
  });

  it('refuses a missing or wrong signature with 401, and a malformed body with 400', async () => {
    game = await startGame(
      { empty: EmptyRoom },
      { webhookSecret: SECRET, reconciler: { enabled: false } },
    );
    const events: WebhookEvent[] = [];
    game.lightning.on('webhook', (e) => events.push(e));
    const url = `http://127.0.0.1:${game.port}/lightning/webhooks/widget`;
    const body = JSON.stringify({ type: 'widget.cashout.completed', data: { user_id: 'u1' } });
    expect(await post(url, body, {})).to.equal(401);
    expect(
      await post(url, body, { 'x-zbd-signature': signBody('another-secret-of-16+', body) }),
    ).to.equal(401);
    const tampered = body.replace('u1', 'u2');
    expect(await post(url, tampered, { 'x-zbd-signature': signBody(SECRET, body) })).to.equal(401);
    expect(
      await post(url, '{"nope":1}', { 'x-zbd-signature': signBody(SECRET, '{"nope":1}') }),
    ).to.equal(400);
    expect(events).to.have.length(0);
    const base64 = Buffer.from(signBody(SECRET, body), 'hex').toString('base64');
    expect(await post(url, body, { 'x-zbd-signature': base64, 'x-zbd-event-id': 'e1' })).to.equal(
      200,
    );
    expect(events.map((e) => [e.source, e.deliveryId])).to.deep.equal([['widget', 'e1']]);
  });

  it('caps header lengths with a 400, never a 500', async () => {
    game = await startGame(
      { empty: EmptyRoom },
      { webhookSecret: SECRET, reconciler: { enabled: false } },
    );
    const events: WebhookEvent[] = [];
    game.lightning.on('webhook', (e) => events.push(e));
    const url = `http://127.0.0.1:${game.port}/lightning/webhooks/ramp`;
    const body = JSON.stringify({ type: 'ramp.purchase.completed', data: {} });
    const signature = signBody(SECRET, body);
    expect(
      await post(url, body, { 'x-zbd-signature': signature, 'x-zbd-event-id': 'e'.repeat(600) }),
    ).to.equal(400);
    expect(await post(url, body, { 'x-zbd-signature': `${signature}${'0'.repeat(600)}` })).to.equal(
      400,
    );
    expect(events).to.have.length(0);
    expect(
      await post(url, body, { 'x-zbd-signature': signature, 'x-zbd-event-id': 'e1' }),
    ).to.equal(200);
    expect(events).to.have.length(1);
  });

  it('without a webhookSecret the routes store nothing and answer 503', async () => {
    game = await startGame({ empty: EmptyRoom }, { reconciler: { enabled: false } });
    const events: WebhookEvent[] = [];
    game.lightning.on('webhook', (e) => events.push(e));
    const body = JSON.stringify({ type: 'ramp.purchase.completed', data: {} });
    for (const source of ['ramp', 'widget']) {
      const url = `http://127.0.0.1:${game.port}/lightning/webhooks/${source}`;
      for (let i = 0; i < 20; i++) {
        expect(await post(url, body, { 'x-zbd-event-id': `anon-${i}` })).to.equal(503);
      }
    }
    expect(events).to.have.length(0);
    // Nothing was remembered: the event would still be new.
    const id = createHash('sha256').update('ramp\n').update(body).digest('base64url');
    expect(await game.lightning.ledger.recordEvent(`ramp:${id}`)).to.equal(true);
  });

  it('verifySignature accepts hex, base64 and sha256= forms, and nothing else', () => {
    const raw = Buffer.from('{"type":"x","data":{}}');
    const hex = signBody(SECRET, raw);
    expect(verifySignature(SECRET, raw, hex)).to.equal(true);
    expect(verifySignature(SECRET, raw, `sha256=${hex}`)).to.equal(true);
    expect(verifySignature(SECRET, raw, Buffer.from(hex, 'hex').toString('base64'))).to.equal(true);
    expect(verifySignature(SECRET, raw, hex.replace(/.$/, hex.endsWith('0') ? '1' : '0'))).to.equal(
      false,
    );
    expect(verifySignature(SECRET, raw, '')).to.equal(false);
    expect(verifySignature(SECRET, raw, null)).to.equal(false);
  });
});
