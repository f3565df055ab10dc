/**
 * RedisLedger keeps acknowledged writes or refuses to run (issue 12, finding 2): a Redis with
 * AOF off (the default of Redis and of Debian's package) forgot every intent on a restart while
 * the service had created their withdrawal requests. Each test starts its own redis-server(s).
 *
 * - AOF off: the store refuses, naming `appendonly yes`, and a game does not start on it;
 *   `durability: 'none'` runs on it anyway (tests, benchmarks);
 * - `appendfsync everysec`: one warning, however many calls;
 * - AOF always: a SIGKILLed redis-server, started again, still has every intent;
 * - `replicas: 1`: a create resolves only once the replica has it; with no replica to ask, it
 *   rejects, the intent is failed (its postings reversed) and the service is never called;
 * - data laid out by layout 1 is migrated: its unknowns are listed, and journaled (layout 3).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startEmulator } from '../../src/emulator/index.js';
import {
  type Intent,
  LedgerNotDurableError,
  RedisLedger,
  type RedisLedgerOptions,
} from '../../src/ledger/index.js';
import { postingsFor } from '../../src/ledger/journal.js';
import { createLightning } from '../../src/lightning.js';
import { eventually } from '../support/eventually.js';
import { quietLogger } from '../support/game.js';
import { needRedis } from '../support/needs.js';
import { type RedisServer, startRedis } from '../support/redis.js';
import { asCreated, newIntent, rejection } from './contract.js';

describe('RedisLedger durability', function () {
  this.timeout(30_000);
  const servers: RedisServer[] = [];
  const ledgers: RedisLedger[] = [];

  before(function () {
    needRedis(this);
  });

  afterEach(async () => {
    for (const ledger of ledgers.splice(0)) await ledger.close();
    for (const server of servers.splice(0).reverse()) await server.stop();
  });

  async function server(options: Parameters<typeof startRedis>[0] = {}): Promise<RedisServer> {
    const started = await startRedis(options);
    servers.push(started);
    return started;
  }

  function ledger(url: string, options: RedisLedgerOptions = {}): RedisLedger {
    const store = new RedisLedger(url, { prefix: `t:${randomUUID()}:`, ...options });
    ledgers.push(store);
    return store;
  }

  function warnings(): { warn(message: string): void; said: string[] } {
    const said: string[] = [];
    return { said, warn: (message: string) => said.push(message) };
  }

  it('refuses a Redis with AOF off, naming appendonly yes, and writes nothing', async () => {
    const redis = await server({ durable: false });
    const store = ledger(redis.url);
    const err = await rejection(store.open(), LedgerNotDurableError);
    assert.match(err.message, /appendonly yes/);
    assert.equal(err.code, 'LN_LEDGER_NOT_DURABLE');
    await rejection(store.create(newIntent()), LedgerNotDurableError);
    const admin = redis.client();
    try {
      assert.deepEqual(await admin.keys('*'), []);
    } finally {
      admin.disconnect();
    }
  });

  it('stops a game from starting on such a Redis: nothing is sent to the service', async () => {
    const redis = await server({ durable: false });
    const emulator = await startEmulator();
    const lightning = createLightning({
      apiKey: emulator.apiKey,
      baseUrl: emulator.url,
      publicUrl: 'http://127.0.0.1:2567',
      logger: quietLogger,
      ledger: ledger(redis.url),
    });
    try {
      await rejection(lightning.ready(), LedgerNotDurableError);
      await rejection(
        lightning.reward({ playerId: 'alice', amountMsat: 21_000, description: 'win' }),
        LedgerNotDurableError,
      );
      assert.equal(emulator.control.withdrawalRequests().length, 0);
    } finally {
      await lightning.close();
      await emulator.close();
    }
  });

  it("runs on it with durability: 'none', for tests and benchmarks", async () => {
    const redis = await server({ durable: false });
    const log = warnings();
    const store = ledger(redis.url, { durability: 'none', logger: log });
    const created = await store.create(newIntent());
    assert.equal((await store.get(created.id))?.id, created.id);
    assert.deepEqual(log.said, []);
  });

  it('warns once about appendfsync other than always', async () => {
    const redis = await server({ appendfsync: 'everysec' });
    const log = warnings();
    const store = ledger(redis.url, { logger: log });
    await store.open();
    await store.create(newIntent());
    await store.unknowns();
    assert.equal(log.said.length, 1);
    assert.match(log.said[0] as string, /appendfsync everysec/);

    const always = await server();
    const quiet = warnings();
    await ledger(always.url, { logger: quiet }).open();
    assert.deepEqual(quiet.said, []);
  });

  it('keeps every intent across a SIGKILL of redis-server (AOF always)', async () => {
    const redis = await server();
    const store = ledger(redis.url);
    const created: Intent[] = [];
    for (let i = 0; i < 20; i++) {
      const intent = await store.create(newIntent({ nextCheckAt: 1_000 + i }));
      created.push(
        (await store.transition(intent.id, 'creating', 'pending', {
          patch: { remoteId: `wr-${i}`, code: `LNURL${i}` },
        })) as Intent,
      );
    }
    await redis.kill();
    await redis.start();
    const after = ledger(redis.url, { prefix: store.prefix });
    for (const intent of created) {
      assert.deepEqual(await after.get(intent.id), intent);
      assert.deepEqual(await after.byCallbackToken(intent.callbackToken as string), intent);
    }
    assert.equal((await after.claimDue(10_000, 100, 'w', 1_000)).length, 20);
  });

  it('with replicas: 1, a create resolves once the replica holds it', async () => {
    const primary = await server();
    const replica = await server({ replicaOf: { port: primary.port } });
    const probe = replica.client();
    const admin = primary.client();
    try {
      // In sync as both ends see it: the replica's link is up, and the primary counts it online
      // (only then does WAIT count its acknowledgements).
      await eventually(
        async () =>
          /master_link_status:up/.test(await probe.info('replication')) &&
          /slave0:.*state=online/.test(await admin.info('replication')),
        10_000,
        'the replica in sync',
      );
      const store = ledger(primary.url, { replicas: 1, replicaTimeoutMs: 5_000 });
      for (let i = 0; i < 10; i++) {
        const created = await store.create(newIntent());
        // Read at once from the replica: WAIT resolved only after it acknowledged the write.
        assert.equal(await probe.hget(`${store.prefix}intent:${created.id}`, 'status'), 'creating');
        await store.transition(created.id, 'creating', 'pending', { patch: { remoteId: `r${i}` } });
        assert.equal(await probe.hget(`${store.prefix}intent:${created.id}`, 'status'), 'pending');
      }
    } finally {
      probe.disconnect();
      admin.disconnect();
    }
  });

  it('with replicas: 1 and no replica, a create rejects, is failed, and nothing is sent', async () => {
    const primary = await server();
    const log = warnings();
    const store = ledger(primary.url, { replicas: 1, replicaTimeoutMs: 100, logger: log });
    const emulator = await startEmulator();
    const lightning = createLightning({
      apiKey: emulator.apiKey,
      baseUrl: emulator.url,
      publicUrl: 'http://127.0.0.1:2567',
      logger: quietLogger,
      ledger: store,
      reconciler: { enabled: false },
    });
    try {
      await lightning.ready();
      const err = await rejection(
        lightning.reward({ playerId: 'alice', amountMsat: 21_000, description: 'win' }),
        LedgerNotDurableError,
      );
      assert.match(err.message, /0 of 1 replicas/);
      assert.equal(emulator.control.withdrawalRequests().length, 0);
      const [failed] = await store.openByPlayer('alice');
      assert.equal(failed, undefined, 'the unreplicated intent is not left open');
      assert.ok(log.said.every((m) => m.includes('0 of 1 replicas')));
    } finally {
      await lightning.close();
      await emulator.close();
    }
  });

  it('with replicas: 1 and no replica, the failed create journals its postings reversed', async () => {
    const primary = await server();
    const store = ledger(primary.url, { replicas: 1, replicaTimeoutMs: 100, logger: warnings() });
    const input = { ...newIntent(), id: randomUUID() };
    const postings = postingsFor(null, asCreated(input, 10));
    await rejection(store.create(input, 10, undefined, postings), LedgerNotDurableError);
    assert.equal((await store.get(input.id))?.status, 'failed');
    assert.deepEqual(
      (await store.journal({ intentId: input.id })).entries.map(
        (e) => `${e.tag} ${e.debit} ${e.credit} ${e.amount}`,
      ),
      ['created house:rewards inflight 21000', 'failed inflight house:rewards 21000'],
    );
    assert.deepEqual(await store.balances(['inflight', 'house:rewards']), [
      { account: 'inflight', unit: 'msats', balance: '0' },
      { account: 'house:rewards', unit: 'msats', balance: '0' },
    ]);
  });

  it('migrates layout 1: intents already unknown are listed, and journaled in flight', async () => {
    const redis = await server();
    const store = ledger(redis.url);
    const a = await store.create(newIntent(), 10);
    await store.transition(a.id, 'creating', 'unknown');
    const b = await store.create(newIntent(), 20);
    await store.transition(b.id, 'creating', 'unknown');
    // As a layout-1 library left it: no unknown index, version 1.
    const admin = redis.client();
    try {
      await admin.del(`${store.prefix}unknown`);
      await admin.set(`${store.prefix}version`, '1');
    } finally {
      admin.disconnect();
    }
    const upgraded = ledger(redis.url, { prefix: store.prefix });
    assert.deepEqual(
      (await upgraded.unknowns()).map((i) => i.id),
      [a.id, b.id],
    );
    assert.deepEqual(await upgraded.balances(['inflight']), [
      { account: 'inflight', unit: 'msats', balance: String(2 * Number(a.amount)) },
    ]);
    const check = redis.client();
    try {
      // Then on through every later layout, to the current one.
      assert.equal(await check.get(`${store.prefix}version`), '10');
    } finally {
      check.disconnect();
    }
  });
});
