/**
 * RedisLedger: the shared contract against a real redis-server (started here on a free port),
 * then what only a networked store must show: two instances with their own connections never
 * both win a move or a lease, an expired lease passes to another instance, the connection
 * forms RedisPresence accepts, scripts surviving SCRIPT FLUSH, and keys kept under the prefix;
 * a write whose reply was lost journals its postings once, a layout-2 keyspace gets its
 * opening entries and balances when a layout-3 library first meets it, and a layout-4 journal
 * moves into layout 5's shape with every read answering as before, however many migrate; the
 * journal's own shape (entries over two of its hashes, texts kept as Redis keeps strings).
 */

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LimitExceededError } from '../../src/errors.js';
import {
  DuplicateIntentError,
  IncompatibleLedgerError,
  type Intent,
  type IntentStatus,
  InvalidIntentError,
  type NewIntent,
  RedisLedger,
} from '../../src/ledger/index.js';
import {
  type AccountBalance,
  accountClass,
  afterWrite,
  type JournalEntry,
  type JournalQuery,
  openingPostings,
  type Posting,
  postingsFor,
} from '../../src/ledger/journal.js';
import { needRedis } from '../support/needs.js';
import { type RedisServer, startRedis } from '../support/redis.js';
import { startReplyDropper } from '../support/reply-dropper.js';
import {
  asCreated,
  assertMembers,
  describeLedgerContract,
  describeSharedStorage,
  newIntent,
  rejection,
} from './contract.js';

/** The layout this library writes, and every migration ends at. */
const LAYOUT = '10';

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

  /** Every entry, following `next` until it is null. */
  async function everyEntry(store: RedisLedger): Promise<JournalEntry[]> {
    const entries: JournalEntry[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await store.journal(after ? { after } : {});
      entries.push(...page.entries);
      if (page.next === null) return entries;
      after = page.next;
    }
  }

  /** A posting in msats, its tag for its reason. */
  const step = (tag: string, debit: string, credit: string, amount: string): Posting => ({
    tag,
    debit,
    credit,
    amount,
    unit: 'msats',
    why: tag,
  });

  /** Creates with the postings journal.ts computes, as the engine does. */
  async function journaledCreate(store: RedisLedger, input: NewIntent, now = 1): Promise<Intent> {
    const withId = { ...input, id: input.id ?? randomUUID() };
    return store.create(withId, now, undefined, postingsFor(null, asCreated(withId, now)));
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
    { rounds: 50, sharesRate: true },
  );

  describe('two instances, two connections: webhooks', () => {
    it('deduplicate a webhook event across instances for good: its key has no TTL', async () => {
      const p = prefix();
      const a = ledger(p);
      const b = ledger(p);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).recordEvent('widget:evt-1', 1_000)),
      );
      assert.equal(results.filter(Boolean).length, 1);
      // Redis would expire a key with a TTL on its own clock, whatever `now` says: none is set.
      assert.equal(await admin.pttl(`${p}event:widget:evt-1`), -1);
      assert.equal(await admin.get(`${p}event:widget:evt-1`), '1000');
      assert.equal(await b.recordEvent('widget:evt-1', 1_000 + 10 * 365 * 24 * 3600 * 1000), false);
    });

    it('migrates layout 3: every event id it kept (with a week’s TTL) is kept for good', async () => {
      const p = prefix();
      const other = prefix();
      const store = ledger(p);
      await store.open();
      // As a layout-3 library left them: ids with a week's TTL, more than one SCAN page.
      const week = 7 * 24 * 3600 * 1000;
      const ids = Array.from({ length: 2_500 }, (_, i) => `ramp:old-${i}`);
      const batch = admin.pipeline();
      for (const id of ids) batch.set(`${p}event:${id}`, '1000', 'PX', week);
      batch.set(`${other}event:ramp:old-0`, '1000', 'PX', week);
      await batch.exec();
      await admin.set(`${p}version`, '3');
      const upgraded = ledger(p);
      await upgraded.open();
      assert.equal(await admin.get(`${p}version`), LAYOUT);
      const ttls = await Promise.all(ids.map((id) => admin.pttl(`${p}event:${id}`)));
      assert.deepEqual(new Set(ttls), new Set([-1]));
      assert.equal(await upgraded.recordEvent('ramp:old-7'), false);
      // Another ledger's keys are left as they were.
      assert.ok((await admin.pttl(`${other}event:ramp:old-0`)) > 0);
    });
  });

  describe('layout 5: the game cap’s index of a ledger written before it', () => {
    it('indexes the open intents a layout-4 keyspace holds, matches aside, however many migrate', async () => {
      const p = prefix();
      const writer = ledger(p);
      const ended = await writer.create(newIntent());
      await writer.transition(ended.id, 'creating', 'failed');
      const pending = await writer.create(newIntent({ kind: 'entryFee' }));
      await writer.transition(pending.id, 'creating', 'pending');
      // More than one SCAN page of open intents.
      const open = await Promise.all(
        Array.from({ length: 1_200 }, () => writer.create(newIntent())),
      );
      const matchId = randomUUID();
      await writer.create(
        newIntent({ id: matchId, kind: 'match', groupId: matchId, callbackToken: null }),
      );
      // As a layout-4 library left it: no `open` index.
      await admin.del(`${p}open`);
      await admin.set(`${p}version`, '4');
      const [a, b] = [ledger(p), ledger(p)];
      await Promise.all([a.open(), b.open()]);
      assert.equal(await admin.get(`${p}version`), LAYOUT);
      assert.equal(await admin.zcard(`${p}open`), 1 + open.length);
      const cap = { maxOpenPerGame: 2 + open.length };
      await a.create(newIntent(), 1, cap);
      const err = await rejection(b.create(newIntent(), 1, cap), LimitExceededError);
      assert.equal(err.limit, 'maxOpenPerGame');
      await b.transition(pending.id, 'pending', 'expired');
      await b.create(newIntent(), 1, cap);
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

    it('journals the postings of a create, a move and an update whose reply was lost once', async () => {
      const proxy = await replyDropper();
      try {
        const store = ledger(prefix(), proxy.url);
        // Load the scripts first, so the dropped replies are the writes', not NOSCRIPT's.
        const warm = await journaledCreate(store, newIntent());
        await store.update(warm.id, 'creating', { checks: 1 });
        const input = { ...newIntent(), id: randomUUID() };
        const createdPostings = postingsFor(null, asCreated(input, 10));
        proxy.arm();
        const created = await store.create(input, 10, undefined, createdPostings);
        assert.equal(proxy.dropped(), 1, "the create's reply was dropped");

        const patch = { remoteId: 'wr-1' };
        const movePostings = postingsFor(created, afterWrite(created, 'pending', patch, 20));
        proxy.arm();
        const moved = await store.transition(created.id, 'creating', 'pending', {
          patch,
          now: 20,
          postings: movePostings,
        });
        assert.equal(proxy.dropped(), 2, "the move's reply was dropped");
        assert.equal(moved?.status, 'pending', 'the writer learns that its move won');

        // An update sent again must not find its own posting journaled and answer null.
        const noted = {
          ...movePostings[0],
          tag: 'noted',
          debit: `claimable:${created.playerId}`,
          credit: 'owed:nobody',
          amount: '1',
        } as (typeof movePostings)[number];
        proxy.arm();
        const updated = await store.update(created.id, 'pending', { checks: 3 }, 30, [noted]);
        assert.equal(proxy.dropped(), 3, "the update's reply was dropped");
        assert.equal(updated?.checks, 3, 'the writer learns that its update was made');

        const entries = (await store.journal({ intentId: created.id })).entries;
        assert.deepEqual(
          entries.map((e) => `${e.tag} ${e.debit} ${e.credit} ${e.amount} ${e.at}`),
          [
            `created house:rewards inflight 21000 10`,
            `pending inflight claimable:${created.playerId} 21000 20`,
            `noted claimable:${created.playerId} owed:nobody 1 30`,
          ],
          'each posting journaled once',
        );
        assert.deepEqual(
          await store.balances([`claimable:${created.playerId}`, 'inflight', 'owed:nobody']),
          [
            { account: `claimable:${created.playerId}`, unit: 'msats', balance: '20999' },
            { account: 'inflight', unit: 'msats', balance: '21000' },
            { account: 'owed:nobody', unit: 'msats', balance: '1' },
          ],
          "inflight holds the warm-up's 21000: the lost create's was moved on once",
        );
        assert.deepEqual(
          (await store.get(created.id))?.history.map((h) => h.to),
          ['creating', 'pending'],
        );
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

  describe('layout 3: the journal of a ledger written before it', () => {
    /**
     * Intents in every place money can sit, written as a layout-2 library wrote them (no
     * postings, version 2): rewards and payouts open, shown, claimed, failed and expired, fees
     * paid in and out of a match and late, a spend, a settled match with its rake; and what
     * `more` writes.
     */
    async function layout2(
      p: string,
      more: (store: RedisLedger) => Promise<Intent[]> = async () => [],
    ): Promise<Intent[]> {
      const store = ledger(p);
      const match = `match-${randomUUID()}`;
      const [alice, bob] = [`player-${randomUUID()}`, `player-${randomUUID()}`];
      const walk = async (input: NewIntent, path: IntentStatus[], meta?: object) => {
        let intent = await store.create(input, 100);
        for (const to of path) {
          const patch = to === path.at(-1) && meta ? { meta: { ...intent.meta, ...meta } } : {};
          const moved = await store.transition(intent.id, intent.status, to, { patch, now: 200 });
          if (!moved) assert.fail(`could not move ${intent.status} -> ${to}`);
          intent = moved;
        }
        return intent;
      };
      const payKey = `${match}:payout:${alice}`;
      const pot = { groupId: match, meta: { payKey } };
      const intents = [
        await walk(newIntent({ playerId: alice }), []),
        await walk(newIntent({ playerId: alice }), ['pending']),
        await walk(newIntent({ playerId: bob }), ['pending', 'completed']),
        await walk(newIntent({ playerId: bob }), ['failed']),
        await walk(newIntent({ playerId: bob }), ['unknown']),
        await walk(newIntent({ kind: 'payment', playerId: alice }), ['pending']),
        await walk(newIntent({ playerId: alice, id: payKey, amount: '90000', ...pot }), ['failed']),
        await walk(newIntent({ playerId: alice, id: `${payKey}:3`, amount: '90000', ...pot }), [
          'failed',
        ]),
        await walk(newIntent({ playerId: bob, id: `${payKey}:2`, amount: '7', ...pot }), [
          'pending',
          'expired',
        ]),
        await walk(newIntent({ kind: 'entryFee', playerId: alice, groupId: match }), [
          'pending',
          'completed',
        ]),
        await walk(newIntent({ kind: 'entryFee', playerId: bob, groupId: match }), ['pending']),
        await walk(newIntent({ kind: 'entryFee', playerId: bob }), ['pending', 'expired'], {
          latePaymentReported: true,
        }),
        await walk(newIntent({ kind: 'spend', playerId: alice, unit: 'USDZ', amount: '500' }), [
          'pending',
          'completed',
        ]),
        await walk(
          newIntent({ kind: 'match', playerId: `match:${match}`, id: match, groupId: match }),
          ['pending', 'completed'],
          { decision: { kind: 'settle', rakeMsat: '4000' } },
        ),
        ...(await more(store)),
      ];
      assert.deepEqual(await everyEntry(store), [], 'written without postings');
      await admin.set(`${p}version`, '2');
      return intents;
    }

    /** Each intent's opening entries, as the migration must have written them at `at`. */
    function openings(intents: readonly Intent[], at: number): Omit<JournalEntry, 'seq'>[] {
      return intents.flatMap((intent) =>
        openingPostings(intent).map((p) => ({
          ...p,
          id: `${intent.id}:${p.tag}`,
          intentId: intent.id,
          playerId: intent.playerId,
          matchId: intent.groupId,
          at,
        })),
      );
    }

    /** The balances the openings make, per account and per class, summed as bigint. */
    function sums(entries: readonly Omit<JournalEntry, 'seq'>[]) {
      const accounts = new Map<string, bigint>();
      const classes = new Map<string, bigint>();
      const add = (map: Map<string, bigint>, key: string, amount: bigint) =>
        map.set(key, (map.get(key) ?? 0n) + amount);
      for (const e of entries) {
        const amount = BigInt(e.amount);
        add(accounts, `${e.debit} ${e.unit}`, -amount);
        add(accounts, `${e.credit} ${e.unit}`, amount);
        add(classes, `${accountClass(e.debit)} ${e.unit}`, -amount);
        add(classes, `${accountClass(e.credit)} ${e.unit}`, amount);
      }
      const rows = (map: Map<string, bigint>) => [...map].map(([k, v]) => `${k} ${v}`).sort();
      return { accounts: rows(accounts), classes: rows(classes), names: [...accounts.keys()] };
    }

    const rows = (balances: readonly AccountBalance[]) =>
      balances.map((b) => `${b.account} ${b.unit} ${b.balance}`).sort();
    const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);

    it('writes every intent its opening entries and balances, and journals on from there', async () => {
      const p = prefix();
      const intents = await layout2(p);
      const expected = openings(intents, 5_000);
      assert.ok(expected.length >= 10, `${expected.length} openings`);
      assert.ok(
        intents.some((i) => openingPostings(i).length === 0),
        'some intents sit where they started, and have none',
      );

      const store = new RedisLedger(redis.url, { prefix: p, clock: { now: () => 5_000 } });
      open.push(store);
      await store.open();
      assert.equal(await admin.get(`${p}version`), LAYOUT);
      const entries = await everyEntry(store);
      assert.deepEqual(entries.map(({ seq: _, ...e }) => e).sort(byId), [...expected].sort(byId));
      assert.ok(entries.every((e) => e.tag === 'opening' && e.why.startsWith('opening: ')));
      const want = sums(expected);
      const names = want.names.map((n) => n.split(' ')[0] as string);
      assert.deepEqual(rows(await store.balances(names)), want.accounts);
      assert.deepEqual(rows(await store.balances()), want.classes);
      for (const sum of want.classes) {
        if (sum.startsWith('house USDZ')) assert.equal(sum, 'house USDZ 500');
      }

      // The journal goes on from the openings: a shown code claimed leaves claimable empty.
      const shown = intents[1] as Intent;
      const claimed = afterWrite(shown, 'completed', {}, 6_000);
      await store.transition(shown.id, 'pending', 'completed', {
        now: 6_000,
        postings: postingsFor(shown, claimed),
      });
      assert.deepEqual(await store.balances([`claimable:${shown.playerId}`]), [
        { account: `claimable:${shown.playerId}`, unit: 'msats', balance: '0' },
      ]);
      assert.deepEqual(
        (await store.journal({ intentId: shown.id })).entries.map((e) => e.tag),
        ['opening', 'completed'],
      );
    });

    it('writes each opening once when several processes migrate at the same time', async () => {
      const p = prefix();
      // Enough intents for the migrations to overlap.
      const intents = await layout2(p, async (store) => {
        const shown: Intent[] = [];
        for (let i = 0; i < 300; i++) {
          const created = await store.create(newIntent(), 100);
          shown.push((await store.transition(created.id, 'creating', 'pending')) as Intent);
        }
        return shown;
      });
      const migrators = Array.from({ length: 4 }, () => {
        const store = new RedisLedger(redis.url, { prefix: p, clock: { now: () => 5_000 } });
        open.push(store);
        return store;
      });
      await Promise.all(migrators.map((m) => m.open()));
      assert.equal(await admin.get(`${p}version`), LAYOUT);
      const expected = openings(intents, 5_000);
      const entries = await everyEntry(migrators[0] as RedisLedger);
      assert.deepEqual(entries.map(({ seq: _, ...e }) => e).sort(byId), [...expected].sort(byId));
      assert.deepEqual(
        rows(await (migrators[1] as RedisLedger).balances()),
        sums(expected).classes,
      );
    });

    it('leaves out an intent whose opening cannot be journaled, saying so, and migrates the rest', async () => {
      const p = prefix();
      const intents = await layout2(p, async (store) => [
        await store.create(newIntent({ amount: String(2n ** 64n) }), 100),
      ]);
      const huge = intents.at(-1) as Intent;
      const said: string[] = [];
      const store = new RedisLedger(redis.url, {
        prefix: p,
        clock: { now: () => 5_000 },
        logger: { warn: (m) => said.push(m) },
      });
      open.push(store);
      await store.open();
      assert.equal(said.length, 1);
      assert.match(said[0] as string, new RegExp(`intent ${huge.id} has no opening entry`));
      assert.deepEqual(await store.journal({ intentId: huge.id }), { entries: [], next: null });
      const others = intents.filter((i) => i !== huge);
      assert.equal((await everyEntry(store)).length, openings(others, 5_000).length);
      assert.equal(await admin.get(`${p}version`), LAYOUT);
    });
  });

  describe('layout 6: the journal of a ledger written by layout 4', () => {
    /**
     * Journaled intents of several players, some in a match, one write with three postings,
     * texts JSON must escape, and `more` intents of fresh players; each moved once more.
     */
    async function journaled(store: RedisLedger, more = 0): Promise<Intent[]> {
      const match = `match-${randomUUID()}`;
      const [alice, bob] = [`player-${randomUUID()}`, `player-${randomUUID()}`];
      const inputs = [
        newIntent({ playerId: alice }),
        newIntent({ playerId: alice, groupId: match, id: `${match}:payout:${alice}` }),
        newIntent({ playerId: bob, groupId: match }),
        newIntent({ playerId: bob, description: 'a "quoted" \\ ünï \n text' }),
        ...Array.from({ length: more }, () => newIntent()),
      ];
      const intents: Intent[] = [];
      for (const [i, input] of inputs.entries()) {
        const created = await journaledCreate(store, input, 10 + i);
        const shown = afterWrite(created, 'pending', {}, 20 + i);
        intents.push(
          (await store.transition(created.id, 'creating', 'pending', {
            now: 20 + i,
            postings: postingsFor(created, shown),
          })) as Intent,
        );
      }
      const first = intents[0] as Intent;
      await store.update(first.id, 'pending', {}, 30, [
        step('a', 'wallet', 'house:fees', '5'),
        step('b', 'house:fees', 'escrow:x', '3'),
        { ...step('c', 'points:p', 'house:points', '7'), unit: 'USDZ', why: 'said "so"\n' },
      ]);
      return intents;
    }

    /**
     * Rewrites a layout-5 keyspace as a layout-4 library left it: each entry a hash of its own
     * and a member (its id) of the sets by seq of every entry, of its intent, player and match;
     * no journal hashes, no entries lists; version 4.
     */
    async function toLayout4(p: string): Promise<void> {
      const buckets = (await admin.keys(`${p}journal:*`)).filter((k) =>
        /^journal:\d+$/.test(k.slice(p.length)),
      );
      assert.ok(buckets.length > 0);
      for (const bucket of buckets) {
        for (const text of Object.values(await admin.hgetall(bucket))) {
          const [seq, at, intentId, playerId, matchId, tag, debit, credit, amount, unit, why] =
            JSON.parse(text) as [number, number, string, string, string | null, ...string[]];
          const id = `${intentId}:${tag}`;
          const fields = { id, seq, intentId, playerId, tag, debit, credit, amount, unit, why, at };
          await admin.hset(`${p}entry:${id}`, matchId === null ? fields : { ...fields, matchId });
          await admin.zadd(`${p}journal`, seq, id);
          await admin.zadd(`${p}journal:intent:${intentId}`, seq, id);
          for (const set of [`journal:player:${playerId}`, `journal:match:${matchId}`]) {
            if (set.endsWith(':null') && matchId === null) continue;
            await admin.zrem(`${p}${set}`, String(seq));
            await admin.zadd(`${p}${set}`, seq, id);
          }
        }
        await admin.del(bucket);
      }
      for (const key of await admin.keys(`${p}intent:*`)) await admin.hdel(key, 'entries');
      await admin.set(`${p}version`, '4');
    }

    /** Every page of a query, `limit` entries a page. */
    async function pages(
      store: RedisLedger,
      query: JournalQuery = {},
      limit = 2,
    ): Promise<JournalEntry[]> {
      const entries: JournalEntry[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await store.journal({ ...query, limit, ...(after ? { after } : {}) });
        entries.push(...page.entries);
        if (page.next === null) return entries;
        after = page.next;
      }
    }

    /** What every read of the journal and the balances answers. */
    async function reading(store: RedisLedger) {
      const all = await pages(store);
      const of = (pick: (e: JournalEntry) => string | null) =>
        [...new Set(all.map(pick))].filter((v): v is string => v !== null);
      const reads: Record<string, unknown> = { all, since: await pages(store, { since: 21 }) };
      for (const playerId of of((e) => e.playerId)) {
        reads[`player ${playerId}`] = await pages(store, { playerId });
      }
      for (const matchId of of((e) => e.matchId)) {
        reads[`match ${matchId}`] = await pages(store, { matchId });
      }
      for (const intentId of of((e) => e.intentId)) {
        reads[`intent ${intentId}`] = await pages(store, { intentId });
      }
      const accounts = of((e) => e.debit).concat(of((e) => e.credit));
      reads.balances = await store.balances(accounts);
      reads.classes = await store.balances();
      return reads;
    }

    it('moves every entry into the journal hashes, keeping its seq, and journals on from there', async () => {
      const p = prefix();
      const store = ledger(p);
      const intents = await journaled(store);
      const before = await reading(store);
      assert.ok((before.all as JournalEntry[]).length >= 11);
      await toLayout4(p);
      assert.ok((await admin.keys(`${p}entry:*`)).length >= 11, 'layout 4 written');

      const upgraded = ledger(p);
      await upgraded.open();
      assert.equal(await admin.get(`${p}version`), LAYOUT);
      assert.deepEqual(await reading(upgraded), before);
      const left = (await admin.keys(`${p}*`)).filter((k) =>
        /(entry|journal:intent):|journal$/.test(k),
      );
      assert.deepEqual(left, [], 'nothing of layout 4 is left');

      // A step journaled before is refused; the next ones take the next seqs.
      const shown = intents[2] as Intent;
      const claimed = afterWrite(shown, 'completed', {}, 40);
      const postings = postingsFor(shown, claimed);
      assert.equal(
        await upgraded.update(shown.id, 'pending', {}, 40, [
          { ...(postings[0] as Posting), tag: 'pending' },
        ]),
        null,
      );
      await upgraded.transition(shown.id, 'pending', 'completed', { now: 40, postings });
      const entries = (await upgraded.journal({ intentId: shown.id })).entries;
      assert.deepEqual(
        entries.map((e) => e.tag),
        ['created', 'pending', 'completed'],
      );
      const last = (before.all as JournalEntry[]).at(-1) as JournalEntry;
      assert.equal(entries.at(-1)?.seq, last.seq + 1);
    });

    it('moves each entry once when several processes migrate at the same time', async () => {
      const p = prefix();
      // Intents over more than one SCAN page, for the migrations to overlap.
      await journaled(ledger(p), 600);
      const store = ledger(p);
      const before = { all: await pages(store, {}, 1000), classes: await store.balances() };
      await toLayout4(p);
      const migrators = Array.from({ length: 4 }, () => ledger(p));
      await Promise.all(migrators.map((m) => m.open()));
      assert.equal(await admin.get(`${p}version`), LAYOUT);
      const after = migrators[1] as RedisLedger;
      assert.deepEqual(
        { all: await pages(after, {}, 1000), classes: await after.balances() },
        before,
      );
      assert.deepEqual(await admin.keys(`${p}entry:*`), []);
    });
  });

  describe('the journal in Redis', () => {
    const MAX = String(2n ** 63n - 1n);

    it('refuses a write that would take a balance or a class total past 64 bits, writing nothing', async () => {
      const store = ledger(prefix());
      const full = await store.create(newIntent(), 1, undefined, [
        step('created', 'wallet', 'claimable:a', MAX),
      ]);
      const balances = await store.balances();
      // claimable:b holds 1, but the class claimable would hold 2^63.
      const input = { ...newIntent(), id: randomUUID() };
      const err = await rejection(
        store.create(input, 2, undefined, [step('created', 'house:rewards', 'claimable:b', '1')]),
        InvalidIntentError,
      );
      assert.match(err.message, /64-bit/);
      assert.equal(await store.get(input.id), null);
      // A move whose posting would take the wallet below -2^63.
      await rejection(
        store.transition(full.id, 'creating', 'pending', {
          patch: { remoteId: 'wr-1' },
          postings: [step('pending', 'wallet', 'inflight', '2')],
        }),
        InvalidIntentError,
      );
      assert.deepEqual(await store.get(full.id), full);
      assert.deepEqual(await store.balances(), balances);
      assert.deepEqual(
        (await everyEntry(store)).map((e) => e.id),
        [`${full.id}:created`],
      );
      // Back from the edge, both directions fit again: the check is on the result.
      const back = await store.update(full.id, 'creating', {}, 3, [
        step('back', 'claimable:a', 'wallet', MAX),
        step('again', 'wallet', 'claimable:b', MAX),
      ]);
      assert.equal(back?.id, full.id);
      assert.deepEqual(await store.balances(['claimable:a', 'claimable:b', 'wallet']), [
        { account: 'claimable:a', unit: 'msats', balance: '0' },
        { account: 'claimable:b', unit: 'msats', balance: MAX },
        { account: 'wallet', unit: 'msats', balance: `-${MAX}` },
      ]);
    });

    it('tells most balances fit by their length, and compares the long ones exactly', async () => {
      const store = ledger(prefix());
      const E18 = 10n ** 18n;
      const [a, b] = ['owed:a', 'owed:b'];
      // 18 digits each, told by length: the sum (under 2 * 10^18) fits.
      const big = await store.create(newIntent(), 1, undefined, [
        step('one', 'wallet', a, String(E18 - 1n)),
        step('two', 'house:fees', a, String(E18 - 1n)),
      ]);
      // 19 digits: compared exactly, up to the last msat of 2^63 - 1 in the account and its class.
      const room = 2n ** 63n - 1n - 2n * (E18 - 1n);
      await rejection(
        store.update(big.id, 'creating', {}, 2, [step('over', 'wallet', a, String(room + 1n))]),
        InvalidIntentError,
      );
      await rejection(
        store.update(big.id, 'creating', {}, 2, [step('over', 'wallet', b, String(room + 1n))]),
        InvalidIntentError,
      );
      await store.update(big.id, 'creating', {}, 2, [step('full', 'wallet', a, String(room))]);
      assert.deepEqual(await store.balances([a]), [{ account: a, unit: 'msats', balance: MAX }]);
      await rejection(
        store.update(big.id, 'creating', {}, 3, [step('past', 'house:fees', a, '1')]),
        InvalidIntentError,
      );
      assert.deepEqual(
        (await store.journal({ intentId: big.id })).entries.map((e) => e.tag),
        ['one', 'two', 'full'],
      );
    });

    it('moves a balance by more than 64 bits in one write, in steps, when the result fits', async () => {
      const store = ledger(prefix());
      const [x, y] = ['owed:x', 'owed:y'];
      const intent = await store.create(newIntent(), 1, undefined, [step('a', x, y, MAX)]);
      // x goes from -MAX to MAX and y back: each a net change of 2 * MAX, the class's none.
      await store.update(intent.id, 'creating', {}, 2, [
        step('b', y, x, MAX),
        step('c', y, x, MAX),
      ]);
      assert.deepEqual(await store.balances([x, y]), [
        { account: x, unit: 'msats', balance: MAX },
        { account: y, unit: 'msats', balance: `-${MAX}` },
      ]);
      await rejection(
        store.update(intent.id, 'creating', {}, 3, [step('d', 'wallet', x, '1')]),
        InvalidIntentError,
      );
      await rejection(
        // -MAX - 1 is the lowest a balance may hold; two below it is not.
        store.update(intent.id, 'creating', {}, 3, [step('d', y, 'wallet', '2')]),
        InvalidIntentError,
      );
      assert.equal((await store.journal({ intentId: intent.id })).entries.length, 3);
    });

    it('stores a write’s entries over two journal hashes, and texts as Redis keeps strings', async () => {
      const p = prefix();
      const store = ledger(p);
      await store.open();
      // The next write's seqs are 999, 1000 and 1001: the last of journal:0, two of journal:1.
      await admin.set(`${p}journal:seq`, '998');
      const odd = '"q" \\ \n ü 🎲 \ud800';
      const input = { ...newIntent({ groupId: 'm1' }), id: randomUUID() };
      const created = await store.create(input, 7, undefined, [
        step('x', 'wallet', 'inflight', '1'),
        { ...step('y', 'inflight', 'claimable:b', '1'), why: odd },
        { ...step('z', 'claimable:b', 'wallet', '1'), unit: odd },
      ]);
      assert.deepEqual((await admin.hkeys(`${p}journal:1`)).sort(), ['1000', '1001']);
      const [x, y, z] = (await store.journal()).entries;
      assert.deepEqual(
        [x, y, z].map((e) => [e?.seq, e?.id]),
        [999, 1000, 1001].map((seq, i) => [seq, `${created.id}:${'xyz'[i]}`]),
      );
      // What Redis made of the lone surrogate before (UTF-8 has none), and nothing else changed.
      const kept = odd.replace('\ud800', '\ufffd');
      assert.equal(y?.why, kept);
      assert.equal(z?.unit, kept);
      assert.deepEqual(await store.balances(['claimable:b']), [
        { account: 'claimable:b', unit: kept, balance: '-1' },
        { account: 'claimable:b', unit: 'msats', balance: '1' },
      ]);
      // Every index and filter finds them, the filters decoding each entry in Lua.
      const want = [x, y, z];
      for (const query of [
        { intentId: created.id },
        { playerId: created.playerId },
        { matchId: 'm1' },
        { matchId: 'm1', playerId: created.playerId, since: 7 },
        { intentId: created.id, matchId: 'm1', playerId: created.playerId },
      ]) {
        assert.deepEqual((await store.journal(query)).entries, want, JSON.stringify(query));
      }
      assert.deepEqual((await store.journal({ playerId: 'else' })).entries, []);
      assert.deepEqual((await store.journal({ intentId: created.id, matchId: 'm2' })).entries, []);
      assert.deepEqual((await store.journal({ intentId: created.id, since: 8 })).entries, []);
    });

    it('finds the few entries a filter keeps among thousands, over several steps', async () => {
      const store = ledger(prefix());
      // 1,280 entries written at 1, then two at 50: more than one step (1,000) looks at.
      for (let i = 0; i < 80; i++) {
        const tags = Array.from({ length: 16 }, (_, t) => step(`t${t}`, 'wallet', 'inflight', '1'));
        await store.create(newIntent(), 1, undefined, tags);
      }
      const late = await store.create(newIntent(), 50, undefined, [
        step('a', 'wallet', 'inflight', '1'),
        step('b', 'wallet', 'inflight', '1'),
      ]);
      const page = await store.journal({ since: 50, limit: 1 });
      assert.deepEqual(
        page.entries.map((e) => e.id),
        [`${late.id}:a`],
      );
      const rest = await store.journal({ since: 50, after: page.next as string });
      assert.deepEqual(rest, {
        entries: [{ ...(rest.entries[0] as JournalEntry), id: `${late.id}:b` }],
        next: null,
      });
      assert.deepEqual(await store.journal({ since: 51 }), { entries: [], next: null });
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
      // A journaled intent of a match adds its entries, their indexes and the balances.
      const input = { ...newIntent({ groupId: 'm1' }), id: randomUUID() };
      const journaled = await journaledCreate(store, input);
      const shown = afterWrite(journaled, 'pending', {}, 2);
      await store.transition(journaled.id, 'creating', 'pending', {
        postings: postingsFor(journaled, shown),
      });
      const added = (await admin.keys(`${p}*`))
        .map((k) => k.slice(p.length))
        .filter((k) => !keys.includes(k) && !k.includes(journaled.id) && !k.includes('m1'))
        .sort();
      assert.deepEqual(added, [
        'balance-by-class',
        `balance:claimable:${journaled.playerId}`,
        'balance:house:rewards',
        'balance:inflight',
        'journal:0',
        `journal:player:${journaled.playerId}`,
        'journal:seq',
        'open',
        `player:${journaled.playerId}`,
        `room:${journaled.roomId}`,
        `token:${journaled.callbackToken}`,
      ]);
      // The entries have no keys of their own: fields of the journal's hash, listed in their
      // intent's hash.
      assert.deepEqual((await admin.hkeys(`${p}journal:0`)).sort(), ['1', '2']);
      assert.equal(
        await admin.hget(`${p}intent:${journaled.id}`, 'entries'),
        'created:1,pending:2',
      );
      assert.deepEqual(await admin.zrange(`${p}journal:match:m1`, '0', '-1'), ['1', '2']);
    });

    it('opens a layout-6 keyspace at layout 7: its intents kept, the operator log empty, then its keys', async () => {
      const p = prefix();
      const old = ledger(p);
      const kept = await old.create(newIntent());
      await admin.set(`${p}version`, '6');
      const store = ledger(p);
      assert.equal((await store.get(kept.id))?.id, kept.id);
      assert.equal(await admin.get(`${p}version`), LAYOUT);
      assert.deepEqual(await store.operatorLog(), { actions: [], next: null });
      const line = await store.recordBlock({
        by: 'alice',
        action: 'block',
        intentId: null,
        playerId: 'mallory',
        before: 'unblocked',
        after: 'blocked',
        note: 'chargebacks',
      });
      assert.equal(line?.seq, 1);
      const keys = (await admin.keys(`${p}*`)).map((k) => k.slice(p.length));
      assertMembers(keys, ['oplog', 'oplog:seq', 'oplog:player:mallory', 'oplog:call', 'blocked']);
      assert.deepEqual(await admin.smembers(`${p}blocked`), ['mallory']);
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
