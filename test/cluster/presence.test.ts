/**
 * Presence as a cluster has it: RedisPresence publishes asynchronously, so a publish that
 * fails (Redis unreachable) rejects later instead of throwing. The settlement is already in
 * the ledger by then; the failure must be logged, never become an unhandled rejection (which
 * stops a Node process).
 */
import assert from 'node:assert/strict';
import { startEmulator } from '../../src/emulator/index.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import { SafeEmitter } from '../../src/server/events.js';
import { startReward } from '../../src/server/kinds/reward.js';
import { resolveOptions } from '../../src/server/options.js';
import { createRuntime } from '../../src/server/runtime.js';
import { eventually } from '../support/eventually.js';

describe('cluster: presence publishing', () => {
  it('logs a publish that rejects later, and the settlement stands', async () => {
    const emulator = await startEmulator();
    const warnings: string[] = [];
    const ledger = new SqliteLedger();
    const settings = resolveOptions({
      apiKey: emulator.apiKey,
      baseUrl: emulator.url,
      publicUrl: 'http://127.0.0.1:9',
      logger: { info: () => {}, warn: (m) => warnings.push(m), error: () => {} },
      ledger,
      reconciler: { enabled: false },
    });
    const runtime = await createRuntime(settings, new SafeEmitter(() => settings.logger));
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      runtime.rooms.usePresence({
        publish: () => Promise.reject(new Error('redis is down')),
        subscribe: async () => undefined,
        unsubscribe: () => undefined,
      });
      const reward = await startReward(runtime.engine, {
        playerId: 'p',
        roomId: 'room-1',
        amountMsat: '20000',
        description: 'x',
        expiresIn: 600,
      });
      assert.equal(reward.status, 'pending');
      await eventually(() => warnings.some((w) => w.includes('redis is down')), 2_000, 'warning');
      // Node reports a rejection left unhandled at the end of the event-loop turn that made
      // it, once that turn's microtasks have run. Every rejection of this publish was made by
      // the time the warning was logged, so one more turn is enough for any to be reported.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(unhandled, []);
      assert.equal((await ledger.get(reward.id))?.status, 'pending');
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await runtime.close();
      await ledger.close();
      await emulator.close();
    }
  });
});
