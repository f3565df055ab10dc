/**
 * Presence as a cluster has it: RedisPresence publishes asynchronously, so a publish that
 * fails (Redis unreachable) rejects later instead of throwing. The settlement is already in
 * the ledger by then; the failure must be logged, never become an unhandled rejection (which
 * stops a Node process).
 */
import assert from 'node:assert/strict';
import { startEmulator } from '../../src/emulator/index.js';
import { createLightning } from '../../src/lightning.js';
import { eventually } from '../support/eventually.js';

describe('cluster: presence publishing', () => {
  it('logs a publish that rejects later, and the settlement stands', async () => {
    const emulator = await startEmulator();
    const warnings: string[] = [];
    const lightning = await createLightning({
      apiKey: emulator.apiKey,
      baseUrl: emulator.url,
      publicUrl: 'http://127.0.0.1:9',
      ledger: ':memory:',
      reconciler: { enabled: false },
      logger: { info: () => {}, warn: (m) => warnings.push(m), error: () => {} },
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      lightning.usePresence({
        publish: () => Promise.reject(new Error('redis is down')),
        subscribe: async () => undefined,
        unsubscribe: () => undefined,
      });
      const reward = await lightning.reward({
        playerId: 'p',
        roomId: 'room-1',
        amountMsat: 20_000,
        description: 'x',
      });
      assert.equal(reward.status, 'pending');
      await eventually(() => warnings.some((w) => w.includes('redis is down')), 2_000, 'warning');
      // Node reports a rejection left unhandled at the end of the event-loop turn that made
      // it, once that turn's microtasks have run. Every rejection of this publish was made by
      // the time the warning was logged, so one more turn is enough for any to be reported.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(unhandled, []);
      assert.equal((await lightning.ledger.get(reward.id))?.status, 'pending');
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await lightning.close();
      await emulator.close();
    }
  });
});
