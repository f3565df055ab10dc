/**
 * `lightning.attach(server)`: the callback and webhook routes as a `node:http` listener in
 * front of Colyseus's. A real Colyseus server with no lightning router endpoint at all, so
 * every lightning answer here comes from the listener; real HTTP through undici; the
 * emulator delivering the callbacks.
 */
import { type Server as HttpServer, request as nodeRequest } from 'node:http';
import { Readable } from 'node:stream';
import { matchMaker, Room } from '@colyseus/core';
import { expect } from 'chai';
import { request } from 'undici';
import { startEmulator } from '../../src/emulator/index.js';
import { ConfigurationError } from '../../src/errors.js';
import type { Intent } from '../../src/ledger/intent.js';
import type { WebhookEvent } from '../../src/server/events.js';
import { roomChannel, type SettlementMessage } from '../../src/server/settlement.js';
import { signBody } from '../../src/server/webhook-signature.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}
const SECRET = 'whsec_0123456789abcdef0123';

async function post(url: string, body: string | Readable, headers: Record<string, string> = {}) {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

/**
 * A POST sent from another local address: node:http, whose `localAddress` binds the socket
 * (undici's connector does not pass it on).
 */
function postFrom(
  localAddress: string,
  url: string,
  body: string,
  headers: Record<string, string>,
) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = nodeRequest(url, { method: 'POST', localAddress, headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => {
        text += d.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function recordingLogger() {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => lines.push({ level, message });
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('lightning.attach(server): the routes in front of Colyseus', () => {
  let game: Game | undefined;
  afterEach(async () => {
    await game?.stop();
    game = undefined;
  });

  it('settles a claimed reward by the callback the emulator sends to the listener; the room hears it once', async () => {
    game = await startGame(
      { empty: EmptyRoom },
      { routes: 'listener', reconciler: { enabled: false } },
    );
    const room = await game.colyseus.createRoom('empty');
    const heard: SettlementMessage[] = [];
    await matchMaker.presence.subscribe(roomChannel(room.roomId), (m: SettlementMessage) =>
      heard.push(m),
    );
    const settled: Intent[] = [];
    game.lightning.on('settled', (i) => settled.push(i));
    const reward = await game.lightning.reward({
      playerId: 'alice',
      roomId: room.roomId,
      amountMsat: 50_000,
      description: 'Winner',
    });
    game.emulator.control.claimWithdrawal(reward.remoteId as string);
    await game.emulator.control.callbacks.idle();
    const about = game.emulator.control.callbackLog.filter((c) => c.resourceId === reward.remoteId);
    expect(about.map((c) => [c.outcome, c.httpStatus])).to.deep.equal([['delivered', 200]]);
    expect(settled.map((i) => [i.id, i.status])).to.deep.equal([[reward.id, 'completed']]);
    expect(heard.map((m) => m.status)).to.deep.equal(['pending', 'completed']);
  });

  it('answers an unknown token an empty 404, a body over the cap 413, and its own set-up probe', async () => {
    const { lines, logger } = recordingLogger();
    game = await startGame(
      { empty: EmptyRoom },
      { routes: 'listener', reconciler: { enabled: false }, logger },
    );
    // The probe started at ready(), before the server listened, and found the listener.
    await eventually(
      () => lines.find((l) => l.message.startsWith('callbacks reach this server at')),
      5000,
      'the probe to find the listener',
    );
    const base = `http://127.0.0.1:${game.port}/lightning/callbacks`;
    for (const token of ['A'.repeat(32), 'short', 'not%20a%20token', 'x?query=1']) {
      const answer = await post(`${base}/${token}`, '{"id":"x","status":"completed"}');
      expect({ status: answer.status, text: answer.text }, token).to.deep.equal({
        status: 404,
        text: '',
      });
    }
    const reward = await game.lightning.reward({
      playerId: 'p',
      amountMsat: 20_000,
      description: 'x',
    });
    const url = game.callbackUrl(reward.callbackToken as string);
    // Declared too long, and streamed (chunked, no length) past the cap.
    expect((await post(url, 'x'.repeat(70_000))).status).to.equal(413);
    const chunks = Array.from({ length: 80 }, () => Buffer.alloc(1024, 120));
    const streamed = await post(url, Readable.from(chunks));
    expect(streamed).to.include({ status: 413, text: '' });
    // Not JSON at all: a hint only, the service is asked; still pending, never a 500.
    expect((await post(url, 'not json')).status).to.equal(200);
    expect((await game.lightning.books.ledger.get(reward.id))?.status).to.equal('pending');
    // The unknown tokens are told in one warning; nothing failed.
    expect(lines.filter((l) => l.level === 'error')).to.deep.equal([]);
  });

  it('answers an unexpected failure with an empty 500 and one log line, never a stack trace', async () => {
    const { lines, logger } = recordingLogger();
    game = await startGame(
      { empty: EmptyRoom },
      { routes: 'listener', reconciler: { enabled: false }, logger },
    );
    const reward = await game.lightning.reward({
      playerId: 'p',
      amountMsat: 20_000,
      description: 'x',
    });
    await game.store.close(); // the ledger unreachable from here on
    const answer = await post(game.callbackUrl(reward.callbackToken as string), '{}');
    expect(answer).to.deep.equal({ status: 500, text: '' });
    const errors = lines.filter((l) => l.level === 'error');
    expect(errors).to.have.length(1);
    expect(errors[0]?.message).to.match(/^callback failed: /);
    expect(errors[0]?.message).to.not.include('\n    at ');
  });

  it('passes everything else on to Colyseus: matchmaking, its own routes, other methods', async () => {
    game = await startGame(
      { empty: EmptyRoom },
      { routes: 'listener', reconciler: { enabled: false } },
    );
    const joined = await game.colyseus.sdk.joinOrCreate('empty');
    expect(joined.roomId).to.be.a('string');
    await joined.leave();
    const root = await request(`http://127.0.0.1:${game.port}/`);
    expect(root.statusCode).to.equal(200);
    expect(await root.body.text()).to.match(/^Colyseus/);
    // A GET on a callback path, and a POST beside the routes, are Colyseus's to answer.
    const get = await request(`http://127.0.0.1:${game.port}/lightning/callbacks/abc`);
    await get.body.dump();
    expect(get.statusCode).to.not.equal(200);
    const beside = await post(`http://127.0.0.1:${game.port}/lightning/other`, '{}');
    expect(beside.status).to.equal(404);
  });

  it('refuses a second attach to the same server; detaching hands the routes back to Colyseus', async () => {
    game = await startGame(
      { empty: EmptyRoom },
      { routes: 'listener', reconciler: { enabled: false } },
    );
    const http = game.colyseus.server.transport.server as HttpServer;
    expect(() => game?.lightning.attach(http)).to.throw(ConfigurationError, /already attached/);
    expect(() => game?.lightning.attach(undefined)).to.throw(ConfigurationError);
    const reward = await game.lightning.reward({
      playerId: 'p',
      amountMsat: 20_000,
      description: 'x',
    });
    const url = game.callbackUrl(reward.callbackToken as string);
    // Not claimed yet: the listener re-reads it and answers 200, leaving it pending.
    expect((await post(url, '{}')).status).to.equal(200);
    // Detached, this server has no lightning route at all: Colyseus's router answers 404.
    game.detachRoutes?.();
    expect((await post(url, '{}')).status).to.equal(404);
    // And it can be attached again.
    game.lightning.attach(http);
    expect((await post(url, '{}')).status).to.equal(200);
  });

  it('receives webhooks as the router does: signed once, replays acknowledged, forgeries and other routes refused', async () => {
    const emulator = await startEmulator({ webhookSecret: SECRET });
    try {
      game = await startGame(
        { empty: EmptyRoom },
        { emulator, routes: 'listener', webhookSecret: SECRET, reconciler: { enabled: false } },
      );
      const events: WebhookEvent[] = [];
      game.lightning.on('webhook', (e) => events.push(e));
      const url = `http://127.0.0.1:${game.port}/lightning/webhooks/widget`;
      const body = JSON.stringify({ type: 'widget.session.completed', data: { n: 1 } });
      const signed = { 'x-zbd-signature': signBody(SECRET, body), 'x-zbd-event-id': 'e1' };
      expect((await post(url, body, signed)).status).to.equal(200);
      expect((await post(url, body, { ...signed, 'x-zbd-event-id': 'e2' })).status).to.equal(200);
      expect(events.map((e) => [e.source, e.type, e.deliveryId])).to.deep.equal([
        ['widget', 'widget.session.completed', 'e1'],
      ]);
      const forged = { 'x-zbd-signature': signBody('another-secret-of-16+', body) };
      expect(await post(url, body, forged)).to.include({ status: 401, text: '' });
      const bad = '{"nope":1}';
      expect((await post(url, bad, { 'x-zbd-signature': signBody(SECRET, bad) })).status).to.equal(
        400,
      );
      // A widget event on the ramp route is refused, and nothing is emitted for it.
      const ramp = `http://127.0.0.1:${game.port}/lightning/webhooks/ramp`;
      expect(await post(ramp, body, signed)).to.include({ status: 422, text: '' });
      expect(events).to.have.length(1);
    } finally {
      await game?.stop();
      game = undefined;
      await emulator.close();
    }
  });

  it('with no proxy (clientAddress.proxies 0), admits by the socket peer and ignores X-Forwarded-For', async () => {
    game = await startGame(
      { empty: EmptyRoom },
      { routes: 'listener', reconciler: { enabled: false }, callbackSources: {} },
    );
    const reward = await game.lightning.reward({
      playerId: 'alice',
      amountMsat: 21_000,
      description: 'win',
    });
    game.emulator.control.claimWithdrawal(reward.remoteId as string);
    const url = game.callbackUrl(reward.callbackToken as string);
    const reads = () => game?.emulator.control.count('GET', /^\/v0\/withdrawal-requests\//) ?? 0;
    // Another loopback address than the one the emulator publishes (127.0.0.1), whatever it
    // claims in X-Forwarded-For.
    const body = JSON.stringify({ id: reward.remoteId });
    const refused = await postFrom('127.0.0.2', url, body, { 'x-forwarded-for': '127.0.0.1' });
    expect(refused).to.deep.equal({ status: 403, text: '' });
    expect(reads()).to.equal(0);
    expect((await game.lightning.books.ledger.get(reward.id))?.status).to.equal('pending');
    // From 127.0.0.1 itself, whatever it claims.
    expect((await post(url, body, { 'x-forwarded-for': '203.0.113.9' })).status).to.equal(200);
    expect(reads()).to.equal(1);
    expect((await game.lightning.books.ledger.get(reward.id))?.status).to.equal('completed');
  });

  it('behind proxies (issue 22, finding 9), a sender that is not one of them is refused, whatever it claims', async () => {
    game = await startGame(
      { empty: EmptyRoom },
      {
        routes: 'listener',
        reconciler: { enabled: false },
        // One proxy of the game's own, at 127.0.0.1; the service's address (as the emulator
        // publishes it) is 127.0.0.1 too, which is what a stranger claims.
        clientAddress: { proxies: 1, proxyAddresses: ['127.0.0.1'] },
        callbackSources: {},
      },
    );
    const reward = await game.lightning.reward({
      playerId: 'alice',
      amountMsat: 21_000,
      description: 'win',
    });
    game.emulator.control.claimWithdrawal(reward.remoteId as string);
    const url = game.callbackUrl(reward.callbackToken as string);
    const reads = () => game?.emulator.control.count('GET', /^\/v0\/withdrawal-requests\//) ?? 0;
    const body = JSON.stringify({ id: reward.remoteId });
    // Straight to the game from 127.0.0.2, around the proxy, claiming the service's address.
    const around = await postFrom('127.0.0.2', url, body, { 'x-forwarded-for': '127.0.0.1' });
    expect(around).to.deep.equal({ status: 403, text: '' });
    expect(reads()).to.equal(0);
    expect((await game.lightning.books.ledger.get(reward.id))?.status).to.equal('pending');
    // Through the proxy, which appended the service's address to what the sender claimed.
    const through = await post(url, body, { 'x-forwarded-for': '203.0.113.9, 127.0.0.1' });
    expect(through.status).to.equal(200);
    expect(reads()).to.equal(1);
    expect((await game.lightning.books.ledger.get(reward.id))?.status).to.equal('completed');
  });

  it('the router, which cannot see the socket, refuses every callback under proxies 0, and says why', async () => {
    const { lines, logger } = recordingLogger();
    game = await startGame(
      { empty: EmptyRoom },
      { reconciler: { enabled: false }, callbackSources: {}, logger },
    );
    expect(lines.some((l) => l.level === 'warn' && /lightning\.attach/.test(l.message))).to.equal(
      true,
    );
    const reward = await game.lightning.reward({
      playerId: 'alice',
      amountMsat: 21_000,
      description: 'win',
    });
    const url = game.callbackUrl(reward.callbackToken as string);
    expect((await post(url, JSON.stringify({ id: reward.remoteId }))).status).to.equal(403);
  });
});
