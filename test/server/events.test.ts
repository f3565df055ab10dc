/**
 * A game's listener runs after the ledger holds what it reports: a listener that throws (or an
 * async one that rejects) must change no HTTP answer, hide no error and cost no other listener
 * its event. Every event goes through the one safe emitter.
 */
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { request } from 'undici';
import { AmbiguousResultError } from '../../src/api/errors.js';
import { startEmulator } from '../../src/emulator/index.js';
import type { Intent } from '../../src/ledger/intent.js';
import type { Lightning } from '../../src/lightning.js';
import { type LightningEventName, SafeEmitter } from '../../src/server/events.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}
const SECRET = 'whsec_0123456789abcdef0123';

const EVENT_NAMES: LightningEventName[] = [
  'settled',
  'unknown',
  'latePayment',
  'webhook',
  ...(['reward', 'entryFee', 'spend', 'payment'] as const).flatMap((kind) =>
    (['completed', 'expired', 'failed'] as const).map((status) => `${kind}.${status}` as const),
  ),
];

/** On every event: a listener that throws, an async one that rejects, then one that records. */
function hostile(lightning: Lightning): Map<string, unknown[][]> {
  const seen = new Map<string, unknown[][]>();
  for (const name of EVENT_NAMES) {
    lightning.on(name, () => {
      throw new Error(`listener of ${name} failed`);
    });
    lightning.on(name, async () => {
      throw new Error(`async listener of ${name} failed`);
    });
    lightning.on(name, (...args: unknown[]) => seen.set(name, [...(seen.get(name) ?? []), args]));
  }
  return seen;
}

describe('server events: listeners that throw', () => {
  let game: Game | undefined;
  let errors: string[];
  afterEach(async () => {
    await game?.stop();
    game = undefined;
  });

  async function start(options: Parameters<typeof startGame>[1] = {}) {
    errors = [];
    game = await startGame(
      { empty: EmptyRoom },
      {
        reconciler: { enabled: false },
        logger: { info: () => {}, warn: () => {}, error: (m) => errors.push(m) },
        ...options,
      },
    );
    return game;
  }

  it('a callback is answered 200 and settled reaches the other listeners, once', async () => {
    const g = await start();
    const seen = hostile(g.lightning);
    const reward = await g.lightning.reward({
      playerId: 'p',
      amountMsat: 20_000,
      description: 'x',
    });
    g.emulator.control.claimWithdrawal(reward.remoteId as string);
    const answer = await request(g.callbackUrl(reward.callbackToken as string), {
      method: 'POST',
      body: JSON.stringify({ id: reward.remoteId }),
    });
    await answer.body.text();
    expect(answer.statusCode).to.equal(200);
    expect(seen.get('settled')).to.have.length(1);
    expect(seen.get('reward.completed')).to.have.length(1);
    expect((seen.get('settled')?.[0]?.[0] as Intent | undefined)?.status).to.equal('completed');
    await eventually(() => errors.length === 4, 2000, 'the four listener errors logged');
    expect(errors.join('\n')).to.match(/listener of settled failed/);
  });

  it('a webhook is answered 200 and emitted once, even when a listener throws', async () => {
    const emulator = await startEmulator({ webhookSecret: SECRET });
    try {
      const g = await start({ emulator, webhookSecret: SECRET });
      const seen = hostile(g.lightning);
      const session = await g.lightning.service.api.ramp.createSession({
        email: 'p@example.com',
        webhook_url: `http://127.0.0.1:${g.port}/lightning/webhooks/ramp`,
      });
      const delivery = await g.emulator.control.fireRampWebhook(
        session.session_token,
        'ramp.purchase.completed',
      );
      expect(delivery).to.include({ httpStatus: 200, ok: true });
      expect(seen.get('webhook')).to.have.length(1);
    } finally {
      await game?.stop();
      game = undefined;
      await emulator.close();
    }
  });

  it("an ambiguous create rejects with the service's error, and unknown still reaches the game", async () => {
    const g = await start({ api: { timeoutMs: 200, retry: { baseDelayMs: 1 } } });
    const seen = hostile(g.lightning);
    g.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      mode: 'process-then-hang',
      times: 1,
    });
    const error = await g.lightning
      .reward({ playerId: 'p', amountMsat: 20_000, description: 'x' })
      .catch((e: unknown) => e);
    expect(error).to.be.instanceOf(AmbiguousResultError);
    expect(seen.get('unknown')).to.have.length(1);
    expect(seen.get('unknown')?.[0]?.[1]).to.equal(error);
  });

  it('the emitter isolates every listener of every event name', () => {
    const logged: string[] = [];
    const emitter = new SafeEmitter(() => ({
      info: () => {},
      warn: () => {},
      error: (m) => logged.push(m),
    }));
    const got: string[] = [];
    for (const name of EVENT_NAMES) {
      emitter.on(name, () => {
        throw new Error('boom');
      });
      emitter.once(name, () => got.push(name));
    }
    for (const name of EVENT_NAMES) {
      expect(() =>
        (emitter.emit as (e: string, ...a: unknown[]) => boolean)(name, {}),
      ).to.not.throw();
    }
    expect(got).to.deep.equal(EVENT_NAMES);
    expect(logged).to.have.length(EVENT_NAMES.length);
    // `once` listeners are gone after their event; the throwing ones stay.
    expect(emitter.listenerCount('settled')).to.equal(1);
  });
});
