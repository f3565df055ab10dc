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

  it('accepts a ramp webhook signed by the emulator, once per event id', async () => {
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
        verified: true,
      });
      expect(events[0]?.data).to.include({ reference_id: 'player-7' });

      // A repeated delivery with the same event id is acknowledged and not handled again.
      const url = `http://127.0.0.1:${game.port}/lightning/webhooks/ramp`;
      const status = await post(url, delivery.body, delivery.headers);
      expect(events[0]?.id).to.equal(delivery.eventId);
      expect(status).to.equal(200);
      expect(events).to.have.length(1);
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
    expect(events.map((e) => [e.source, e.id, e.verified])).to.deep.equal([['widget', 'e1', true]]);
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
