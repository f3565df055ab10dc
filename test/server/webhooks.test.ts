import { createHash } from 'node:crypto';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { request } from 'undici';
import { ManualClock } from '../../src/clock.js';
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
      const session = await game.lightning.service.api.ramp.createSession({
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
      // The same signed body on the widget route is refused: a ramp event is never a widget one.
      const widget = `http://127.0.0.1:${game.port}/lightning/webhooks/widget`;
      expect(await post(widget, delivery.body, delivery.headers)).to.equal(422);
      expect(
        await post(widget, delivery.body, { ...delivery.headers, 'x-zbd-event-id': 'x' }),
      ).to.equal(422);
      expect(events.map((e) => e.source)).to.deep.equal(['ramp']);
      // The emulator's own deliveries of a type to the other source's route: refused, and said.
      const widgetSession = await game.lightning.service.api.widgetSessions.create({
        email: 'p@example.com',
        webhook_url: widget,
        reference_id: 'player-7',
      });
      const misrouted = await game.emulator.control.fireWidgetWebhook(
        widgetSession.session_token,
        'ramp.purchase.completed',
      );
      expect(misrouted).to.include({ httpStatus: 422, ok: false });
      const own = await game.emulator.control.fireWidgetWebhook(
        widgetSession.session_token,
        'widget.cashout.completed',
      );
      expect(own).to.include({ httpStatus: 200, ok: true });
      expect(events.map((e) => [e.source, e.type])).to.deep.equal([
        ['ramp', 'ramp.purchase.completed'],
        ['widget', 'widget.cashout.completed'],
      ]);
    } finally {
      await game.stop();
      await emulator.close();
    }
  });

  it('answers a signed event on the other source’s route 422, storing and emitting nothing', async () => {
    game = await startGame(
      { empty: EmptyRoom },
      { webhookSecret: SECRET, reconciler: { enabled: false } },
    );
    const events: WebhookEvent[] = [];
    game.lightning.on('webhook', (e) => events.push(e));
    const route = (source: string) => `http://127.0.0.1:${game.port}/lightning/webhooks/${source}`;
    const signed = (body: string) => ({ 'x-zbd-signature': signBody(SECRET, body) });
    const ramp = JSON.stringify({ type: 'ramp.purchase.completed', data: { reference_id: 'p1' } });
    const widget = JSON.stringify({ type: 'widget.cashout.completed', data: { user_id: 'u1' } });
    // Each body on the wrong route, twice: refused every time, never a 200.
    for (let i = 0; i < 2; i++) {
      expect(await post(route('widget'), ramp, signed(ramp))).to.equal(422);
      expect(await post(route('ramp'), widget, signed(widget))).to.equal(422);
    }
    expect(events).to.have.length(0);
    // Nothing was remembered: on its own route each is new, once.
    expect(await post(route('ramp'), ramp, signed(ramp))).to.equal(200);
    expect(await post(route('widget'), widget, signed(widget))).to.equal(200);
    expect(await post(route('widget'), widget, signed(widget))).to.equal(200);
    expect(events.map((e) => [e.source, e.type])).to.deep.equal([
      ['ramp', 'ramp.purchase.completed'],
      ['widget', 'widget.cashout.completed'],
    ]);
    // A signature is checked before the route: an unsigned misrouted body is still a 401.
    expect(await post(route('widget'), ramp, {})).to.equal(401);
  });

  it('never accepts a signed event twice: a replay 8 days or 10 years later is acknowledged, not emitted', async () => {
    const clock = new ManualClock(Date.now());
    game = await startGame(
      { empty: EmptyRoom },
      { clock, webhookSecret: SECRET, reconciler: { enabled: false } },
    );
    const events: WebhookEvent[] = [];
    game.lightning.on('webhook', (e) => events.push(e));
    const url = `http://127.0.0.1:${game.port}/lightning/webhooks/ramp`;
    const body = JSON.stringify({ type: 'ramp.purchase.completed', data: { reference_id: 'p1' } });
    const headers = { 'x-zbd-signature': signBody(SECRET, body) };
    expect(await post(url, body, headers)).to.equal(200);
    expect(events).to.have.length(1);
    const day = 24 * 3600 * 1000;
    clock.advance(8 * day);
    // Other events meanwhile, as a live game gets them.
    const other = JSON.stringify({ type: 'ramp.kyc.completed', data: { user_id: 'u1' } });
    expect(await post(url, other, { 'x-zbd-signature': signBody(SECRET, other) })).to.equal(200);
    expect(await post(url, body, headers)).to.equal(200);
    clock.advance(3652 * day);
    expect(await post(url, body, headers)).to.equal(200);
    expect(events.map((e) => e.type)).to.deep.equal([
      'ramp.purchase.completed',
      'ramp.kyc.completed',
    ]);
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
    expect(await game.store.recordEvent(`ramp:${id}`)).to.equal(true);
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
