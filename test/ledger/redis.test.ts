/**
 * RedisLedger: the shared contract against a real redis-server (started here on a free port),
 * then what only a networked store must show: two instances with their own connections never
 * both win a move or a lease, an expired lease passes to another instance, the connection
 * forms RedisPresence accepts, scripts surviving SCRIPT FLUSH, and keys kept under the prefix.
 */

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  DuplicateIntentError,
  IncompatibleLedgerError,
  RedisLedger,
} from '../../src/ledger/index.js';
import { needRedis } from '../support/needs.js';
import { type RedisServer, startRedis } from '../support/redis.js';
import { startReplyDropper } from '../support/reply-dropper.js';
import { describeLedgerContract, describeSharedStorage, newIntent } from './contract.js';

describe('RedisLedger', function () {
  this.timeout(30_000);
  let redis: RedisServer;
  let admin: Redis;
  const open: RedisLedger[] = [];

  before(async function () {
    needRedis(this);
    redis = await startRedis();
    admin = redis.client();
  });

  after(async () => {
    admin?.disconnect();
    await redis?.stop();
  });

  afterEach(async () => {
    for (const ledger of open.splice(0)) await ledger.close();
  });

  /** A fresh keyspace per test: stores in one test share it, tests never do. */
  function prefix(): string {
    return `test:${randomUUID()}:`;
  }

  function ledger(p: string, connection: string | Redis = redis.url): RedisLedger {
    const instance = new RedisLedger(connection, { prefix: p });
    open.push(instance);
    return instance;
  }

  describeLedgerContract('RedisLedger (own connection)', async () => {
    const store = new RedisLedger(redis.url, { prefix: prefix() });
    return { store, cleanup: () => store.close() };
  });

  describeLedgerContract('RedisLedger (shared client)', async () => {
    const store = new RedisLedger(admin, { prefix: prefix() });
    return { store, cleanup: () => store.close() };
  });

  describeSharedStorage(
    'two instances, two connections',
    () => {
      const p = prefix();
      return () => ledger(p);
    },
    { rounds: 50 },
  );

  describe('two instances, two connections: webhooks', () => {
    it('deduplicate a webhook event across instances for a week', async () => {
      const p = prefix();
      const a = ledger(p);
      const b = ledger(p);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).recordEvent('widget:evt-1')),
      );
      assert.equal(results.filter(Boolean).length, 1);
      const ttl = await admin.pttl(`${p}event:widget:evt-1`);
      const week = 7 * 24 * 3600 * 1000;
      assert.ok(ttl > week - 60_000 && ttl <= week, `ttl ${ttl}`);
    });
  });

  describe('a reply lost to a dropped connection', () => {
    /** ioredis sends a command again on its new connection (autoResendUnfulfilledCommands). */
    async function replyDropper() {
      const proxy = await startReplyDropper(redis.port);
      return { ...proxy, url: `redis://127.0.0.1:${proxy.port}` };
    }

    it('still gives the move to the process that made it when its reply is lost', async () => {
      const proxy = await replyDropper();
      try {
        const store = ledger(prefix(), proxy.url);
        // Load the move's script first, so the dropped reply is the move's, not NOSCRIPT's.
        const warm = await store.create(newIntent());
        await store.transition(warm.id, 'creating', 'pending');
        const created = await store.create(newIntent());
        proxy.arm();
        const moved = await store.transition(created.id, 'creating', 'pending', { note: 'mine' });
        assert.equal(proxy.dropped(), 1, 'the reply was dropped');
        assert.equal(moved?.status, 'pending', 'the writer learns that its move won');
        const stored = await store.get(created.id);
        assert.deepEqual(
          stored?.history.map((h) => h.to),
          ['creating', 'pending'],
          'applied once',
        );
        // A different writer's move from the old status still loses.
        assert.equal(await store.transition(created.id, 'creating', 'failed'), null);
      } finally {
        proxy.close();
      }
    });

    it('still gives the create to its caller when its reply is lost', async () => {
      const proxy = await replyDropper();
      try {
        const store = ledger(prefix(), proxy.url);
        await store.open();
        proxy.arm();
        const created = await store.create(newIntent());
        assert.equal(proxy.dropped(), 1, 'the reply was dropped');
        assert.equal(created.status, 'creating');
        assert.equal((await store.get(created.id))?.history.length, 1);
        // The same id created again by another call is still a duplicate.
        const again = await store.create(newIntent({ id: created.id })).then(
          () => null,
          (e: unknown) => e,
        );
        assert.ok(again instanceof DuplicateIntentError);
      } finally {
        proxy.close();
      }
    });
  });

  describe('connections and keys', () => {
    it('accepts a port, a URL, ioredis options or a ready client, and closes only its own', async () => {
      const p = prefix();
      const forms = [
        new RedisLedger(redis.port, { prefix: p }),
        new RedisLedger(redis.url, { prefix: p }),
        new RedisLedger({ host: '127.0.0.1', port: redis.port }, { prefix: p }),
        new RedisLedger(admin, { prefix: p }),
      ];
      const created = await forms[0]?.create(newIntent());
      for (const form of forms) {
        assert.equal((await form.get(created?.id as string))?.id, created?.id);
        await form.close();
      }
      assert.equal(await admin.ping(), 'PONG');
      assert.equal(forms[0]?.prefix, p);
      assert.equal(new RedisLedger(admin).prefix, 'lightning:');
    });

    it('reloads its scripts after SCRIPT FLUSH', async () => {
      const store = ledger(prefix());
      const created = await store.create(newIntent());
      await admin.script('FLUSH');
      assert.equal((await store.transition(created.id, 'creating', 'failed'))?.status, 'failed');
    });

    it('keeps every key under its prefix, and leaves nothing open in the indexes once settled', async () => {
      const p = prefix();
      const store = ledger(p);
      const created = await store.create(newIntent({ nextCheckAt: 5 }));
      await store.transition(created.id, 'creating', 'pending', { patch: { remoteId: 'wr-1' } });
      await store.transition(created.id, 'pending', 'completed');
      await store.recordEvent('ramp:1');
      const keys = (await admin.keys(`${p}*`)).map((k) => k.slice(p.length)).sort();
      assert.deepEqual(keys, [
        'event:ramp:1',
        `intent:${created.id}`,
        'remote:reward:wr-1',
        'seq',
        `token:${created.callbackToken}`,
        'version',
      ]);
    });

    it('refuses keys laid out by a newer version of the library', async () => {
      const p = prefix();
      await admin.set(`${p}version`, '99');
      const err = await ledger(p)
        .get(randomUUID())
        .then(
          () => null,
          (e: unknown) => e,
        );
      assert.ok(err instanceof IncompatibleLedgerError);
    });

    it('keeps amounts beyond 2^64 and notes with quotes exactly', async () => {
      const store = ledger(prefix());
      const amount = '340282366920938463463374607431768211456';
      const created = await store.create(newIntent({ amount, description: '"quoted" \\ ünï' }));
      const moved = await store.transition(created.id, 'creating', 'failed', {
        note: 'said "no" \\ \n',
      });
      assert.equal(moved?.amount, amount);
      assert.equal(moved?.description, '"quoted" \\ ünï');
      assert.equal(moved?.history.at(-1)?.note, 'said "no" \\ \n');
    });
  });
});
