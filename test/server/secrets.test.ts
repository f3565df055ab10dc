import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { format, inspect } from 'node:util';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { request } from 'undici';
import { PaymentsApi, REQUEST_CHANNEL } from '../../src/api/index.js';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { INTENT_KINDS } from '../../src/ledger/intent.js';
import { createLightning } from '../../src/lightning.js';
import type { LightningEventName } from '../../src/server/events.js';
import { eventually } from '../support/eventually.js';
import { FakeService } from '../support/fake-service.js';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

/** A key and a webhook secret no other string of the suite can contain by chance. */
const KEY = 'zbd_KNOWN_7f3a91c2d8e4b605a1f9e27c3b8d4a60';
const SECRET = 'whsec_KNOWN_c41e8b2f97d3a50e6f1b';
/** The whole of each, and a middle part, so that a truncated or sliced copy is found too. */
const NEEDLES = [KEY, KEY.slice(10, 26), SECRET, SECRET.slice(12, 28)];

/** Everything a developer's logging can make of a value. */
function renderings(value: unknown): string[] {
  const ways: (() => string)[] = [
    () => inspect(value),
    () => inspect(value, { depth: 8, showHidden: true, getters: true }),
    // What inspect shows when an object's own [inspect.custom] is ignored (a logger that does).
    () => inspect(value, { depth: 8, showHidden: true, customInspect: false }),
    // console.log(value) and console.log('%o' / '%j', value) print exactly these.
    () => format(value),
    () => format('%o', value),
    () => format('%j', value),
    () => String(JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `${v}` : v))),
    () => String(value),
  ];
  if (value instanceof Error) ways.push(() => `${value.stack} ${value.message}`);
  const out: string[] = [];
  for (const way of ways) {
    try {
      out.push(way());
    } catch {
      // This way cannot render the value at all (a cycle, a closed database, no toString),
      // so nothing can leak through it.
    }
  }
  return out;
}

/** The items (by label) whose renderings contain a needle. */
function leaks(items: [string, unknown][]): string[] {
  const found: string[] = [];
  for (const [label, value] of items) {
    for (const text of renderings(value)) {
      const needle = NEEDLES.find((n) => text.includes(n));
      if (needle) {
        found.push(`${label} shows ${needle === KEY || needle === SECRET ? 'all' : 'part'} of it`);
        break;
      }
    }
  }
  return found;
}

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

describe('secrets: the API key and the webhook secret never show', () => {
  let emulator: Emulator;
  let game: Game;
  let service: FakeService;

  afterEach(async () => {
    await game?.stop();
    await emulator?.close();
    await service?.close();
  });

  it('in the lightning object, its getters, the client, every error, event and log line', async () => {
    emulator = await startEmulator({ apiKey: KEY, webhookSecret: SECRET });
    const logged: string[] = [];
    const logger = {
      info: (m: string) => logged.push(m),
      warn: (m: string) => logged.push(m),
      error: (m: string) => logged.push(m),
    };
    game = await startGame(
      { empty: EmptyRoom },
      {
        emulator,
        webhookSecret: SECRET,
        logger,
        breaker: { failures: 2, players: 1 },
        reconciler: { enabled: false },
      },
    );
    const lightning = game.lightning;
    expect(emulator.apiKey, 'the game talks to the emulator with the known key').to.equal(KEY);

    const items: [string, unknown][] = [];
    const events: LightningEventName[] = ['settled', 'unknown', 'latePayment', 'webhook', 'paused'];
    for (const kind of INTENT_KINDS) {
      if (kind === 'match') continue;
      for (const status of ['completed', 'expired', 'failed'] as const) {
        events.push(`${kind}.${status}`);
      }
    }
    for (const name of events) {
      lightning.on(name, (...args: unknown[]) => {
        args.forEach((arg, i) => {
          items.push([`event ${name} argument ${i}`, arg]);
        });
      });
    }
    const diagnostics = (message: unknown) => items.push(['diagnostics message', message]);
    subscribe(REQUEST_CHANNEL, diagnostics);
    const errors: [string, unknown][] = [];
    const intents: [string, unknown][] = [];

    try {
      // A reward, an entry fee and a point spend, each to its end.
      const reward = await lightning.reward({
        playerId: 'alice',
        amountMsat: 50_000,
        description: 'Winner',
      });
      emulator.control.claimWithdrawal(reward.remoteId as string);
      const fee = await lightning.chargeEntryFee({
        playerId: 'bob',
        amountMsat: 10_000,
        description: 'Entry',
      });
      emulator.control.payStaticCharge(fee.remoteId as string);
      const userId = emulator.control.createUser({ email: 'c@example.com', referenceId: 'carol' });
      emulator.control.setPoints(userId, 'USDZ', 100);
      const spend = await lightning.spendPoints({ playerId: 'carol', userId, amount: 40 });
      for (const intent of [reward, fee]) {
        await eventually(
          async () => (await lightning.books.ledger.get(intent.id))?.status === 'completed',
        );
      }
      intents.push(['reward', reward], ['fee', fee], ['spend', spend]);
      intents.push(['reward settled', await lightning.books.ledger.get(reward.id)]);
      errors.push([
        'insufficient points',
        await failure(() => lightning.spendPoints({ playerId: 'carol', userId, amount: 1000 })),
      ]);

      // A lost answer (unknown), a 5xx, the breaker's pause and its refusal.
      emulator.control.faults.add({
        method: 'POST',
        path: '/v0/withdrawal-requests',
        mode: 'process-then-destroy',
        times: 1,
      });
      emulator.control.faults.add({ method: 'POST', path: '/v0/withdrawal-requests', times: 1 });
      for (const i of [1, 2]) {
        errors.push([
          `failed reward ${i}`,
          await failure(() =>
            lightning.reward({ playerId: 'dan', amountMsat: 1_000, description: 'x' }),
          ),
        ]);
      }
      expect(lightning.operator.paused, 'the breaker tripped').to.not.equal(null);
      items.push(['lightning.operator.paused', lightning.operator.paused]);
      errors.push([
        'paused',
        await failure(() => lightning.reward({ playerId: 'dan', amountMsat: 1, description: 'x' })),
      ]);
      lightning.operator.resume();

      // Refusals of every other kind: arguments, an unknown resource, a refused request.
      errors.push(
        ['bad reward', await failure(() => lightning.reward({} as never))],
        ['bad refresh', await failure(() => lightning.books.refresh({} as never))],
        ['bad path id', await failure(() => lightning.service.api.payments.get('..'))],
        ['not found', await failure(() => lightning.service.api.withdrawalRequests.get('nope'))],
        ['bad resolve', await failure(() => lightning.operator.resolve('nope', 'failed', 'why'))],
      );

      // A signed webhook (an event), a forged one and a callback for nobody (log lines only).
      const session = await lightning.service.api.ramp.createSession({
        email: 'e@example.com',
        webhook_url: `http://127.0.0.1:${game.port}/lightning/webhooks/ramp`,
        reference_id: 'erin',
      });
      await emulator.control.fireRampWebhook(session.session_token, 'ramp.purchase.completed');
      await eventually(() => items.some(([label]) => label.startsWith('event webhook')));
      for (const path of ['webhooks/widget', `callbacks/${'a'.repeat(32)}`]) {
        const res = await request(`http://127.0.0.1:${game.port}/lightning/${path}`, {
          method: 'POST',
          headers: { 'x-zbd-signature': 'f'.repeat(64) },
          body: '{"type":"x","data":{}}',
        });
        await res.body.text();
      }

      // Options refused: the error names the option, never its value.
      const options = { apiKey: KEY, webhookSecret: SECRET };
      for (const [what, bad] of [
        ['no publicUrl', {}],
        ['bad publicUrl', { publicUrl: 'nope' }],
        ['http publicUrl', { publicUrl: 'http://game.example' }],
        ['unknown option', { publicUrl: 'https://game.example', apiKye: KEY }],
        ['short secret', { publicUrl: 'https://game.example', webhookSecret: KEY.slice(0, 8) }],
      ] as const) {
        errors.push([
          `options: ${what}`,
          await failure(async () => createLightning({ ...options, ...bad } as never)),
        ]);
      }
      errors.push(
        [
          'client: key with a space',
          await failure(async () => new PaymentsApi({ apiKey: `${KEY} ` })),
        ],
        [
          'client: bad baseUrl',
          await failure(async () => new PaymentsApi({ apiKey: KEY, baseUrl: KEY })),
        ],
      );

      // A service (or a proxy) that echoes the key and the webhook secret in what it answers:
      // a lightning against it cuts both out of every error, event and log line.
      service = await new FakeService().start();
      const echo = `key ${KEY} secret ${SECRET}`;
      service.reply(
        { status: 401, body: { success: false, message: echo } },
        { status: 400, raw: `<html>${echo}</html>` },
        { status: 200, body: { success: false, message: echo, data: null } },
        { status: 422, body: { success: false, error: { code: KEY, message: echo } } },
        { status: 503, body: { message: echo } },
        { status: 422, body: { success: false, message: echo } },
        { status: 502, body: { message: echo } },
      );
      const echoing = createLightning({
        apiKey: KEY,
        webhookSecret: SECRET,
        baseUrl: service.url,
        publicUrl: 'http://127.0.0.1:9',
        ledger: ':memory:',
        logger,
        api: { maxRetries: 0 },
        reconciler: { enabled: false },
      });
      for (const name of events) {
        echoing.on(name, (...args: unknown[]) => {
          args.forEach((arg, i) => {
            items.push([`echoing event ${name} argument ${i}`, arg]);
          });
        });
      }
      await echoing.ready();
      for (const i of [1, 2, 3, 4, 5]) {
        errors.push([`echoed ${i}`, await failure(() => echoing.service.api.wallet.get())]);
      }
      for (const i of [6, 7]) {
        const reward = { playerId: 'fay', amountMsat: 1_000, description: 'x' };
        errors.push([`echoed ${i}`, await failure(() => echoing.reward(reward))]);
      }
      expect(service.requests.length, 'every echo was answered').to.equal(7);
      items.push(['echoing lightning', echoing], ['echoing client', echoing.service.api]);
      items.push(['echoed intents', await echoing.books.ledger.unknowns()]);
      await echoing.close();
      const unreachable = new PaymentsApi({
        apiKey: KEY,
        baseUrl: 'http://127.0.0.1:1',
        maxRetries: 0,
      });
      errors.push(['unreachable', await failure(() => unreachable.wallet.get())]);
      await unreachable.close();

      // Everything the game can reach from the object.
      items.push(
        ['lightning', lightning],
        ['lightning.matches', lightning.matches],
        ['lightning.books', lightning.books],
        ['lightning.operator', lightning.operator],
        ['lightning.operator.console', lightning.operator.console],
        ['lightning.service', lightning.service],
        ['lightning.service.api', lightning.service.api],
        ['lightning.books.ledger', lightning.books.ledger],
        ['lightning.service.emulator', lightning.service.emulator],
        ['lightning.operator.reconciler', lightning.operator.reconciler],
        ['lightning.plugin()', lightning.plugin()],
        ['lightning.endpoints()', lightning.endpoints()],
      );
      for (const name of [
        'wallet',
        'payments',
        'withdrawalRequests',
        'staticCharges',
        'widgetUsers',
        'widgetSessions',
        'ramp',
      ] as const) {
        items.push([`lightning.service.api.${name}`, lightning.service.api[name]]);
      }
      await lightning.close();
      errors.push(['closed', await failure(() => lightning.reward({} as never))]);
    } finally {
      unsubscribe(REQUEST_CHANNEL, diagnostics);
    }

    // The scan must have had something to scan: each kind of thing it promises to cover.
    const labels = items.map(([label]) => label);
    for (const event of ['settled', 'unknown', 'paused', 'webhook', 'reward.completed']) {
      expect(labels, `a '${event}' event was seen`).to.include(`event ${event} argument 0`);
    }
    // The echoes reached the events too: a refused reward, and one whose answer was a 5xx.
    expect(labels).to.include('echoing event reward.failed argument 0');
    expect(labels).to.include('echoing event unknown argument 1');
    expect(errors.length).to.be.greaterThan(20);
    expect(logged.length).to.be.greaterThan(0);
    const all = [
      ...items,
      ...errors,
      ...intents,
      ...logged.map((line, i): [string, unknown] => [`log line ${i}`, line]),
    ];
    expect(leaks(all)).to.deep.equal([]);
    // And the scan finds what is there: a value holding the key is reported.
    expect(leaks([['the key itself', { apiKey: KEY }]])).to.have.length(1);
  });
});
