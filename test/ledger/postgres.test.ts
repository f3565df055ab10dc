/**
 * PostgresLedger: the shared contract against a real PostgreSQL (initdb once for this file, on
 * a free loopback port, fsync and synchronous_commit on; an empty schema per test), with its own
 * pool and with a given one (the latter without prepared statements, as behind PgBouncer); then what only a networked store must show: two instances never
 * both win a move or a lease, an expired lease passes over, the schema is created by the store,
 * concurrently, and a newer one refused, a server killed with SIGKILL keeps every intent, and a
 * game pays a reward on it. The journal: a reader paging while writes commit out of order
 * never skips an entry, and transactions that journal nothing hold none back; the house's
 * balance shards stay exact under load and refuse exactly what would pass 64 bits; crossing
 * balance rows never deadlock; a schema-2 ledger gets its opening entries, a schema-4 one
 * keeps its entries and balances; a move whose answer was lost is journaled once.
 */

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Room } from '@colyseus/core';
import type pg from 'pg';
import { ConfigurationError } from '../../src/errors.js';
import {
  DuplicateIntentError,
  IncompatibleLedgerError,
  type Intent,
  type IntentStatus,
  InvalidIntentError,
  LedgerNotDurableError,
  LedgerUnavailableError,
  type PostgresConnection,
  PostgresLedger,
  type PostgresLedgerOptions,
} from '../../src/ledger/index.js';
import type { JournalEntry, Posting } from '../../src/ledger/journal.js';
import { LAYOUT } from '../../src/ledger/postgres-schema.js';
import { eventually } from '../support/eventually.js';
import { startGame } from '../support/game.js';
import { needPostgres } from '../support/needs.js';
import { type PostgresServer, startPostgres } from '../support/postgres.js';
import { startReplyDropper } from '../support/reply-dropper.js';
import { describeLedgerContract, describeSharedStorage, newIntent, rejection } from './contract.js';

class EmptyRoom extends Room {}

/** A store that says whether a test closed it, so the next test gets a new one. */
class KeptLedger extends PostgresLedger {
  closed = false;
  override async close(): Promise<void> {
    this.closed = true;
    await super.close();
  }
}

describe('PostgresLedger', function () {
  this.timeout(30_000);
  let server: PostgresServer;
  let admin: pg.Pool;
  const open: PostgresLedger[] = [];
  /** The contract suites' stores, each kept open across its suite's tests. */
  const suiteStores: KeptLedger[] = [];

  before(async function () {
    needPostgres(this);
    server = await startPostgres();
    admin = server.pool({ max: 4 });
  });

  after(async () => {
    for (const kept of suiteStores) if (!kept.closed) await kept.close();
    await admin?.end();
    await server?.stop();
  });

  afterEach(async () => {
    for (const ledger of open.splice(0)) await ledger.close();
  });

  /** A fresh schema per test: stores in one test share it, tests never do. */
  function schema(): string {
    return `t_${randomUUID().replaceAll('-', '')}`;
  }

  function ledger(
    s: string,
    connection: PostgresConnection = server.url,
    options: PostgresLedgerOptions = {},
  ): PostgresLedger {
    const instance = new PostgresLedger(connection, { schema: s, ...options });
    open.push(instance);
    return instance;
  }

  /**
   * The contract's store: one schema and one open store per suite, emptied before each test (a
   * fresh schema costs ~30 ms of DDL, a store's own pool its connections), so every test starts
   * on an empty ledger. A test that closed it gets a new one.
   */
  function contractStore(
    s: string,
    connection: () => string | pg.Pool,
    options: PostgresLedgerOptions = {},
  ) {
    let kept: KeptLedger | undefined;
    return async () => {
      if (!kept || kept.closed) {
        kept = new KeptLedger(connection(), { schema: s, ...options });
        await kept.open();
        suiteStores.push(kept);
      }
      const store = kept;
      // The operator log refuses every DELETE (its trigger): only its owner, by turning the
      // trigger off, empties it, as this test's admin does between tests.
      await admin.query(
        `DELETE FROM "${s}".intents; DELETE FROM "${s}".events;
         DELETE FROM "${s}".journal; DELETE FROM "${s}".balances; DELETE FROM "${s}".blocked;
         UPDATE "${s}".rate SET tokens = 0, at = 0, hold = 0;
         ALTER TABLE "${s}".operator_log DISABLE TRIGGER operator_log_append_only;
         DELETE FROM "${s}".operator_log;
         ALTER TABLE "${s}".operator_log ENABLE TRIGGER operator_log_append_only`,
      );
      return { store, cleanup: async () => {} };
    };
  }

  describeLedgerContract(
    'PostgresLedger (own pool)',
    contractStore(schema(), () => server.url),
  );

  describeLedgerContract(
    'PostgresLedger (given pool, statements not prepared)',
    contractStore(schema(), () => admin, { preparedStatements: false }),
  );

  describeSharedStorage(
    'two instances, two pools',
    () => {
      const s = schema();
      return () => ledger(s);
    },
    { rounds: 30, sharesRate: true },
  );

  describe('two instances, two pools: limits and webhooks', () => {
    it('hold a player limit and a game budget across instances', async () => {
      const s = schema();
      const writers = [ledger(s), ledger(s), ledger(s)];
      const playerId = `player-${randomUUID()}`;
      const limited = await Promise.allSettled(
        Array.from({ length: 15 }, (_, i) =>
          (writers[i % 3] as PostgresLedger).create(newIntent({ playerId, kind: 'entryFee' }), 1, {
            maxOpenPerPlayer: 4,
          }),
        ),
      );
      assert.equal(limited.filter((r) => r.status === 'fulfilled').length, 4);
      const budgets = [{ scope: 'game', limitMsat: 50_000, windowMs: 60_000 }] as const;
      const paid = await Promise.allSettled(
        Array.from({ length: 15 }, (_, i) =>
          (writers[i % 3] as PostgresLedger).create(newIntent({ amount: '6000' }), 1_000, {
            budgets,
          }),
        ),
      );
      assert.equal(paid.filter((r) => r.status === 'fulfilled').length, 8); // 48,000 of 50,000
    });

    it('deduplicate a webhook event across instances, for good', async () => {
      const s = schema();
      const a = ledger(s);
      const b = ledger(s);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).recordEvent('widget:evt-1', 1_000)),
      );
      assert.equal(results.filter(Boolean).length, 1);
      const week = 7 * 24 * 3600 * 1000;
      assert.equal(await a.recordEvent('widget:evt-1', 1_000 + week), false);
      // Past the week, and ids recorded years later, forget nothing.
      assert.equal(await b.recordEvent('widget:evt-1', 1_001 + week), false);
      await a.recordEvent('widget:evt-0', 1);
      await a.recordEvent('widget:evt-2', 1_002 + 500 * week);
      assert.equal(await b.recordEvent('widget:evt-1', 1_003 + 500 * week), false);
      const left = await admin.query(`SELECT id, seen_at FROM "${s}".events ORDER BY id`);
      assert.deepEqual(
        left.rows.map((r) => [r.id, Number(r.seen_at)]),
        [
          ['widget:evt-0', 1],
          ['widget:evt-1', 1_000],
          ['widget:evt-2', 1_002 + 500 * week],
        ],
      );
    });
  });

  /** A posting, by default a reward's first step. */
  function step(
    tag: string,
    debit = 'house:rewards',
    credit = 'inflight',
    amount = '21000',
  ): Posting {
    return { tag, debit, credit, amount, unit: 'msats', why: tag };
  }

  async function everyEntry(store: PostgresLedger): Promise<JournalEntry[]> {
    const entries: JournalEntry[] = [];
    for (let after: string | null = '0'; after !== null; ) {
      const page = await store.journal({ after, limit: 1000 });
      entries.push(...page.entries);
      after = page.next;
    }
    return entries;
  }

  /**
   * The balances' 64-bit promise as stored: every row within its share (`lim`), and the shares
   * of an account summing to at most 2^63 - 1, so its rows never sum past it.
   */
  async function assertShares(s: string): Promise<void> {
    const { rows } = await admin.query(
      `SELECT account, unit, sum(lim)::text AS shares,
         bool_and(balance <= lim AND balance >= -lim - (shard = 0)::int) AS within
       FROM "${s}".balances GROUP BY account, unit`,
    );
    for (const row of rows) {
      assert.ok(BigInt(row.shares) <= 2n ** 63n - 1n, `${row.account}: shares ${row.shares}`);
      assert.equal(row.within, true, row.account);
    }
  }

  describe('connections and schema', () => {
    it('guards a pool shared by many ledgers once: no listener piles up per ledger', async () => {
      // A game may wrap one pool in a ledger per schema; each used to add its own 'connect'
      // guard, so every new connection got one 'error' listener per ledger (node warns at 11).
      const pool = server.pool({ max: 2 });
      try {
        const stores = Array.from({ length: 12 }, () => ledger(schema(), pool));
        for (const store of stores) await store.open();
        assert.equal(pool.listenerCount('connect'), 1);
        const client = await pool.connect();
        try {
          assert.ok(client.listenerCount('error') <= 2, `${client.listenerCount('error')}`);
        } finally {
          client.release();
        }
      } finally {
        for (const store of open.splice(0)) await store.close();
        await pool.end();
      }
    });

    it('keeps its connections through refusals: a duplicate or a posting already journaled ends none', async () => {
      // pool.query ends its connection after any error: each refusal cost the next call a new one.
      const pool = server.pool({ max: 2 });
      let connects = 0;
      pool.on('connect', () => {
        connects++;
      });
      try {
        const store = ledger(schema(), pool);
        const first = await store.create(newIntent());
        const posting: Posting = {
          tag: 'noted',
          debit: 'house:rewards',
          credit: 'inflight',
          amount: '1',
          unit: 'msats',
          why: 'once',
        };
        assert.notEqual(await store.update(first.id, 'creating', {}, undefined, [posting]), null);
        for (let i = 0; i < 10; i++) {
          await rejection(store.create(newIntent({ id: first.id })), DuplicateIntentError);
          assert.equal(await store.update(first.id, 'creating', {}, undefined, [posting]), null);
        }
        assert.ok(connects <= 2, `${connects} connections made for 20 refusals`);
      } finally {
        for (const store of open.splice(0)) await store.close();
        await pool.end();
      }
    });

    it("hands out the rate's tokens while every connection of its pool waits on a locked intent", async () => {
      // Several processes' moves can wait on a claim's lock, each holding a connection: a take
      // queued behind them held the process's outbound calls (the payout queue) as long.
      const s = schema();
      const store = ledger(s, { connectionString: server.url, max: 1 });
      const intent = await store.create(newIntent());
      const locker = await admin.connect();
      try {
        await locker.query('BEGIN');
        await locker.query(`SELECT 1 FROM "${s}".intents WHERE id = $1 FOR UPDATE`, [intent.id]);
        // The pool's one connection waits on the row: the move answers once the lock ends.
        const move = store.update(intent.id, 'creating', { error: 'moved' });
        await eventually(async () => {
          const { rows } = await admin.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND query LIKE '%"${s}".intents%'`,
          );
          return rows[0].n === 1;
        });
        const limit = { perSecond: 50, burst: 5 };
        assert.equal(await store.takeToken(limit, Date.now()), 0, 'a token, at once');
        await store.holdCalls(Date.now() + 1_000);
        assert.ok((await store.takeToken(limit, Date.now())) > 0, 'the hold is written');
        await locker.query('COMMIT');
        assert.equal((await move)?.error, 'moved');
      } finally {
        await locker.query('ROLLBACK').catch(() => {});
        locker.release();
      }
    });

    it('gives every client its pool connects an error listener from birth, so a dying server never throws at the process', async () => {
      // Found by the soak: pg-pool drops its idle listener when it hands a client to a waiting
      // connect(), and a SIGKILLed server's FATAL could arrive before the caller's listener.
      const given = server.pool({ max: 2 });
      const store = ledger(schema(), given);
      await store.open();
      const client = await given.connect();
      try {
        assert.ok(client.listenerCount('error') >= 1, 'a listener is there while checked out');
        assert.doesNotThrow(() => client.emit('error', new Error('57P01: the server died')));
      } finally {
        client.release();
      }
      await store.close();
      await given.end();
    });

    it('accepts a URL, pool options or a ready pool, and ends only its own pool', async () => {
      const s = schema();
      const given = server.pool({ max: 2 });
      const forms = [
        new PostgresLedger(server.url, { schema: s }),
        new PostgresLedger(
          { host: '127.0.0.1', port: server.port, user: 'postgres' },
          { schema: s },
        ),
        new PostgresLedger(given, { schema: s }),
      ];
      const created = await forms[0]?.create(newIntent());
      for (const form of forms) {
        assert.equal((await form.get(created?.id as string))?.id, created?.id);
        await form.close();
      }
      assert.equal((await given.query('SELECT 1 AS one')).rows[0]?.one, 1);
      await given.end();
      assert.equal(new PostgresLedger(admin).schema, 'lightning');
      assert.throws(() => new PostgresLedger(admin, { schema: 'bad"name' }), ConfigurationError);
    });

    it('creates its schema on an empty database, once, however many processes open it together', async () => {
      const s = schema();
      const writers = Array.from({ length: 6 }, () => ledger(s));
      await Promise.all(writers.map((w) => w.open()));
      const tables = await admin.query(
        'SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename',
        [s],
      );
      assert.deepEqual(
        tables.rows.map((r) => r.tablename),
        [
          'balances',
          'blocked',
          'events',
          'intents',
          'journal',
          'layout',
          'open_count',
          'operator_log',
          'payouts_paused',
          'rate',
          'seat_counts',
          'seats',
        ],
      );
      const version = await admin.query(`SELECT version FROM "${s}".layout`);
      assert.deepEqual(version.rows, [{ version: LAYOUT }]);
      const created = await (writers[3] as PostgresLedger).create(newIntent());
      assert.equal((await (writers[5] as PostgresLedger).get(created.id))?.id, created.id);
    });

    it('refuses a schema a newer library wrote, with what to do, and changes nothing', async () => {
      const s = schema();
      await ledger(s).open();
      await admin.query(`UPDATE "${s}".layout SET version = ${LAYOUT + 1}`);
      const store = ledger(s);
      const err = await rejection(store.open(), IncompatibleLedgerError);
      assert.equal(err.code, 'LN_LEDGER_INCOMPATIBLE');
      assert.match(err.message, new RegExp(`layout ${LAYOUT + 1}`));
      assert.match(err.message, new RegExp(`reads up to layout ${LAYOUT}`));
      assert.match(err.message, /Upgrade colyseus-lightning/);
      // Refused for good: every later call says the same, and nothing was written.
      await rejection(store.create(newIntent()), IncompatibleLedgerError);
      const count = await admin.query(`SELECT count(*)::int AS n FROM "${s}".intents`);
      assert.equal(count.rows[0]?.n, 0);
    });

    it('refuses a schema a pre-release library wrote, and changes nothing', async () => {
      for (const version of [1, 2, 11]) {
        const s = schema();
        await admin.query(`CREATE SCHEMA "${s}"`);
        await admin.query(`CREATE TABLE "${s}".schema_version (
          only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), version integer NOT NULL)`);
        await admin.query(`INSERT INTO "${s}".schema_version (version) VALUES (${version})`);
        const err = await rejection(ledger(s).open(), IncompatibleLedgerError);
        assert.match(
          err.message,
          new RegExp(`pre-release colyseus-lightning \\(schema version ${version}\\)`),
        );
        const tables = await admin.query('SELECT tablename FROM pg_tables WHERE schemaname = $1', [
          s,
        ]);
        assert.deepEqual(
          tables.rows.map((r) => r.tablename),
          ['schema_version'],
        );
      }
    });

    it('keeps its operator log append-only in the database: no UPDATE, DELETE or TRUNCATE changes it', async () => {
      const s = schema();
      const store = ledger(s);
      const line = await store.recordOperatorAction({
        by: 'alice',
        action: 'pause',
        intentId: null,
        playerId: null,
        before: 'running',
        after: 'paused',
        note: 'maintenance',
      });
      for (const statement of [
        `UPDATE "${s}".operator_log SET by = 'mallory'`,
        `DELETE FROM "${s}".operator_log`,
        `TRUNCATE "${s}".operator_log`,
      ]) {
        await assert.rejects(admin.query(statement), /append-only/);
      }
      assert.deepEqual((await store.operatorLog()).actions, [line]);
      await store.close();
    });

    it('refuses a server with fsync off, and warns once about synchronous_commit off', async () => {
      const loose = await startPostgres({ durable: false });
      try {
        const err = await rejection(ledger(schema(), loose.url).open(), LedgerNotDurableError);
        assert.equal(err.code, 'LN_LEDGER_NOT_DURABLE');
        assert.match(err.message, /fsync = on/);
        const anyway = ledger(schema(), loose.url, { durability: 'none' });
        const created = await anyway.create(newIntent());
        assert.equal((await anyway.get(created.id))?.id, created.id);
      } finally {
        for (const store of open.splice(0)) await store.close();
        await loose.stop();
      }
      const said: string[] = [];
      const relaxed = ledger(
        schema(),
        { connectionString: server.url, options: '-c synchronous_commit=off' },
        { logger: { warn: (m) => said.push(m) } },
      );
      await relaxed.create(newIntent());
      await relaxed.unknowns();
      assert.equal(said.length, 1);
      assert.match(said[0] as string, /synchronous_commit off/);
    });

    it('keeps amounts beyond 2^64, quotes and non-Latin text exactly; refuses NUL in what it stores', async () => {
      const store = ledger(schema());
      const amount = '340282366920938463463374607431768211456';
      const created = await store.create(
        newIntent({ amount, description: `"quoted" \\ ünï 'single'`, meta: { nul: '\u0000' } }),
      );
      const moved = await store.transition(created.id, 'creating', 'failed', {
        note: 'said "no" \\ \n \u0000',
        patch: { error: 'bad \u0000 byte' },
      });
      assert.equal(moved?.amount, amount);
      assert.equal(moved?.description, `"quoted" \\ ünï 'single'`);
      assert.deepEqual(moved?.meta, { nul: '\u0000' });
      assert.equal(moved?.history.at(-1)?.note, 'said "no" \\ \n \uFFFD');
      assert.equal(moved?.error, 'bad \uFFFD byte');
      await rejection(store.create(newIntent({ description: 'a\u0000b' })), InvalidIntentError);
      // A key that cannot be stored cannot be found: reads and moves by it find nothing.
      assert.equal(await store.get('a\u0000b'), null);
      assert.deepEqual(await store.openByPlayer('a\u0000b'), []);
      assert.equal(await store.transition('a\u0000b', 'creating', 'failed'), null);
      await rejection(store.claimDue(1, 1, 'owner\u0000', 1_000), InvalidIntentError);
      // A posting's why is for people, like a note; an account or unit is a key.
      const noted = await store.create(newIntent(), 1, undefined, [
        { ...step('created'), why: 'a \u0000 b' },
      ]);
      const [entry] = (await store.journal({ intentId: noted.id })).entries;
      assert.equal(entry?.why, 'a \uFFFD b');
      for (const bad of [{ credit: 'owed:a\u0000b' }, { unit: 'US\u0000' }]) {
        const input = newIntent({ id: randomUUID() });
        await rejection(
          store.create(input, 1, undefined, [{ ...step('created'), ...bad }]),
          InvalidIntentError,
        );
        assert.equal(await store.get(input.id as string), null);
      }
      assert.deepEqual(await store.balances(['owed:a\u0000b']), [
        { account: 'owed:a\u0000b', unit: 'msats', balance: '0' },
      ]);
      assert.deepEqual(await store.journal({ playerId: 'a\u0000b' }), { entries: [], next: null });
    });
  });

  describe('an answer lost to a dropped connection', () => {
    /** A store whose connections go through a proxy that drops the next answer when armed. */
    async function behindDropper(s: string) {
      const proxy = await startReplyDropper(server.port);
      const store = ledger(s, { host: '127.0.0.1', port: proxy.port, user: 'postgres', max: 1 });
      await store.open();
      return { proxy, store };
    }

    it('still gives the move to the writer whose answer was lost, once', async () => {
      const { proxy, store } = await behindDropper(schema());
      try {
        const created = await store.create(newIntent());
        proxy.arm();
        const moved = await store.transition(created.id, 'creating', 'pending', { note: 'mine' });
        assert.equal(proxy.dropped(), 1, 'the answer was dropped');
        assert.equal(moved?.status, 'pending', 'the writer learns that its move won');
        const stored = await store.get(created.id);
        assert.deepEqual(
          stored?.history.map((h) => h.to),
          ['creating', 'pending'],
        );
        // Another writer's move from the old status still loses.
        assert.equal(await store.transition(created.id, 'creating', 'failed'), null);
      } finally {
        proxy.close();
      }
    });

    it('still gives the create to its caller whose answer was lost', async () => {
      const { proxy, store } = await behindDropper(schema());
      try {
        await store.create(newIntent()); // the insert is prepared on this connection
        proxy.arm();
        const created = await store.create(newIntent());
        assert.equal(proxy.dropped(), 1, 'the answer was dropped');
        assert.equal(created.status, 'creating');
        assert.equal((await store.get(created.id))?.history.length, 1);
      } finally {
        proxy.close();
      }
    });

    it('a move that did not commit is still an error, not a win', async () => {
      const { proxy, store } = await behindDropper(schema());
      try {
        const created = await store.create(newIntent());
        // The connection drops before the server answers anything: the statement never ran.
        const holder = await admin.connect();
        try {
          await holder.query('BEGIN');
          await holder.query(`SELECT 1 FROM ${'"'}${store.schema}${'"'}.intents FOR UPDATE`);
          const moving = store.transition(created.id, 'creating', 'pending');
          const waiting = `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'`;
          await eventually(
            async () => (await holder.query(waiting)).rows[0]?.n > 0,
            5_000,
            'the move waiting on the lock',
          );
          proxy.arm();
          await holder.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
          );
          const err = await moving.then(
            () => null,
            (e: unknown) => e,
          );
          assert.ok(err instanceof LedgerUnavailableError, String(err));
        } finally {
          await holder.query('ROLLBACK').catch(() => {});
          holder.release();
        }
        assert.equal((await store.get(created.id))?.status, 'creating');
      } finally {
        proxy.close();
      }
    });

    it('journals a move whose answer was lost once, and gives it to its writer', async () => {
      const { proxy, store } = await behindDropper(schema());
      try {
        const created = await store.create(newIntent(), 1, undefined, [step('created')]);
        const claimable = `claimable:${created.playerId}`;
        const shown = step('pending', 'inflight', claimable);
        await store.update(created.id, 'creating', { checks: 1 }, 2, [step('noted', 'wallet')]);
        // Each statement is prepared on the connection before its answer is dropped: the drop
        // then hits the answer of a statement that ran, not of its preparation.
        const other = await store.create(newIntent(), 1, undefined, [step('created')]);
        const warm = (tag: string) => step(tag, 'inflight', `claimable:${other.playerId}`);
        await store.transition(other.id, 'creating', 'pending', { postings: [warm('pending')] });
        proxy.arm();
        const moved = await store.transition(created.id, 'creating', 'pending', {
          now: 3,
          postings: [shown],
        });
        assert.equal(proxy.dropped(), 1, 'the answer was dropped');
        assert.equal(moved?.status, 'pending', 'the writer learns that its move won');
        // Made again (a caller's retry), it is refused: the status moved, the entry is there.
        assert.equal(
          await store.transition(created.id, 'creating', 'pending', { postings: [shown] }),
          null,
        );
        assert.equal(await store.update(created.id, 'pending', {}, 3, [shown]), null);
        // An update that journals is read back the same way.
        await store.update(other.id, 'pending', { checks: 1 }, 4, [warm('noted')]);
        proxy.arm();
        const noted = await store.update(created.id, 'pending', { checks: 2 }, 4, [
          step('late', claimable, 'wallet'),
        ]);
        assert.equal(proxy.dropped(), 2, 'the second answer was dropped');
        assert.equal(noted?.checks, 2);
        assert.deepEqual(
          (await store.journal({ intentId: created.id })).entries.map((e) => [e.tag, e.at]),
          [
            ['created', 1],
            ['noted', 2],
            ['pending', 3],
            ['late', 4],
          ],
        );
        assert.deepEqual(await store.balances([claimable, 'inflight', 'wallet']), [
          { account: claimable, unit: 'msats', balance: '0' },
          { account: 'inflight', unit: 'msats', balance: '0' },
          { account: 'wallet', unit: 'msats', balance: '0' },
        ]);
      } finally {
        proxy.close();
      }
    });
  });

  describe('the journal across instances', () => {
    it('lists no entry past a journaled write still in flight: a reader continuing from its cursor misses none', async () => {
      const s = schema();
      const [a, b, reader] = [ledger(s), ledger(s), ledger(s)];
      const first = await a.create(newIntent(), 1, undefined, [step('created', 'owed:blocker')]);
      const second = await b.create(newIntent(), 1, undefined, [step('created')]);
      const cursor = String((await reader.journal()).entries.at(-1)?.seq);
      // An operator's transaction holds a balance row the first write will need: that write
      // takes its transaction id and seq, then waits.
      const holder = await admin.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(
          `SELECT * FROM "${s}".balances WHERE account = 'owed:blocker' FOR UPDATE`,
        );
        const waiting = async () =>
          Number(
            (await admin.query('SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted')).rows[0]
              ?.n,
          );
        const blocked = a.update(first.id, 'creating', {}, 2, [
          step('x', 'inflight', 'owed:blocker'),
        ]);
        await eventually(async () => (await waiting()) === 1, 5_000, 'the first write waiting');
        // A later write on other balance rows: it must not commit an entry past the waiting one.
        let later = false;
        const after = b
          .update(second.id, 'creating', {}, 3, [step('y', 'wallet', 'house:fees')])
          .finally(() => {
            later = true;
          });
        await eventually(async () => later || (await waiting()) === 2, 5_000, 'the second write');
        const seen = (await reader.journal({ after: cursor })).entries;
        await holder.query('ROLLBACK');
        await Promise.all([blocked, after]);
        const rest = (await reader.journal({ after: String(seen.at(-1)?.seq ?? cursor) })).entries;
        assert.deepEqual(
          [...seen, ...rest].map((e) => e.id),
          [`${first.id}:x`, `${second.id}:y`],
        );
      } finally {
        await holder.query('ROLLBACK').catch(() => {});
        holder.release();
      }
    });

    it('pages the journal while writers commit out of order, and never skips or repeats an entry', async () => {
      const s = schema();
      const [slow, ...fast] = [ledger(s), ledger(s), ledger(s)] as [
        PostgresLedger,
        ...PostgresLedger[],
      ];
      const reader = ledger(s);
      const blockers = ['owed:b0', 'owed:b1', 'owed:b2'];
      await slow.create(
        newIntent(),
        1,
        undefined,
        blockers.map((b, i) => step(`b${i}`, 'house:rewards', b)),
      );
      // Each write's second entry, and when the write returned (1, 2, ...).
      const finished = new Map<string, number>();
      let passed = 0;
      let racing = true;
      const write = async (store: PostgresLedger, credit: (intent: Intent) => string) => {
        const intent = await store.create(newIntent(), 1, undefined, [step('created')]);
        await store.update(intent.id, 'creating', {}, 2, [
          step('moved', 'inflight', credit(intent)),
        ]);
        finished.set(`${intent.id}:moved`, finished.size + 1);
      };
      // An operator's transaction holds one blocker row at a time, until one of the slow
      // writer's writes waits on it and two of the others have committed past that one: writes
      // commit out of the order of their transaction ids, again and again, while a reader pages.
      const holder = await admin.connect();
      const hold = async () => {
        for (let i = 0; racing; i++) {
          await holder.query('BEGIN');
          try {
            await holder.query(`SELECT 1 FROM "${s}".balances WHERE account = $1 FOR UPDATE`, [
              blockers[i % blockers.length],
            ]);
            await eventually(async () => {
              if (!racing) return true;
              const { rows } = await admin.query(
                'SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted',
              );
              return Number(rows[0]?.n) > 0;
            });
            const past = passed + 2;
            await eventually(() => !racing || passed >= past, 10_000, 'writes past');
          } finally {
            await holder.query('COMMIT');
          }
        }
      };
      const seen: JournalEntry[] = [];
      let cursor = '0';
      const page = async () => {
        const { entries } = await reader.journal({ after: cursor, limit: 7 });
        seen.push(...entries);
        if (entries.length > 0) cursor = String(entries.at(-1)?.seq);
        return entries.length;
      };
      const held = hold();
      try {
        const others = Promise.all(
          fast.map(async (store) => {
            for (let i = 0; i < 40; i++) {
              await write(store, (intent) => `owed:${intent.playerId}`);
              passed++;
            }
          }),
        ).finally(() => {
          racing = false;
        });
        const slowly = (async () => {
          for (let i = 0; i < 40; i++) {
            await write(slow, () => blockers[i % blockers.length] as string);
          }
        })();
        while (racing) await page();
        await Promise.all([others, slowly, held]);
      } finally {
        racing = false;
        await held.catch(() => {});
        holder.release();
      }
      while ((await page()) > 0);
      const all = await everyEntry(reader);
      assert.equal(all.length, 3 + 2 * 120);
      assert.deepEqual(
        seen.map((e) => e.id),
        all.map((e) => e.id),
      );
      // The run did what it is for: some write returned before one whose entry came earlier.
      const order = all.filter((e) => finished.has(e.id)).map((e) => finished.get(e.id) as number);
      assert.ok(
        order.some((f, i) => i > 0 && f < (order[i - 1] as number)),
        'writes committed in the order of their entries',
      );
    });

    it('lists a write as soon as it commits, whatever transactions that journal nothing hold open', async () => {
      const s = schema();
      const store = ledger(s);
      await store.create(newIntent(), 1, undefined, [step('created')]);
      // Another application's transaction with an id (it wrote something), left open.
      const other = await admin.connect();
      try {
        await other.query('BEGIN');
        await other.query('SELECT pg_current_xact_id()');
        const later = await store.create(newIntent(), 2, undefined, [step('created')]);
        assert.deepEqual(
          (await store.journal({ intentId: later.id })).entries.map((e) => e.id),
          [`${later.id}:created`],
        );
        assert.equal((await store.journal()).entries.length, 2);
      } finally {
        await other.query('ROLLBACK');
        other.release();
      }
    });

    it('spreads the house accounts over shard rows, and keeps every balance exact under load', async () => {
      const s = schema();
      const writers = Array.from({ length: 4 }, () => ledger(s, server.url, {}));
      const intents = await Promise.all(
        Array.from({ length: 160 }, (_, i) =>
          (writers[i % 4] as PostgresLedger).create(newIntent({ playerId: `p${i % 5}` }), 1, {}, [
            step('created'),
          ]),
        ),
      );
      await Promise.all(
        intents.map((intent, i) =>
          (writers[(i + 1) % 4] as PostgresLedger).transition(intent.id, 'creating', 'pending', {
            postings: [step('pending', 'inflight', `claimable:${intent.playerId}`, '1000')],
          }),
        ),
      );
      const store = writers[0] as PostgresLedger;
      assert.deepEqual(await store.balances(['house:rewards', 'inflight', 'claimable:p0']), [
        { account: 'house:rewards', unit: 'msats', balance: String(-160 * 21_000) },
        { account: 'inflight', unit: 'msats', balance: String(160 * 20_000) },
        { account: 'claimable:p0', unit: 'msats', balance: String(32 * 1_000) },
      ]);
      const rows = await admin.query(
        `SELECT account, count(*)::int AS n FROM "${s}".balances GROUP BY account ORDER BY account`,
      );
      const counts = Object.fromEntries(rows.rows.map((r) => [r.account, r.n]));
      assert.ok(counts.inflight > 1, `inflight in ${counts.inflight} row(s)`);
      assert.equal(counts['claimable:p0'], 1);
      await assertShares(s);
    });

    it('refuses, among racing writers, exactly the writes that would take a house account past 64 bits', async () => {
      const s = schema();
      const writers = [ledger(s), ledger(s), ledger(s)];
      const store = writers[0] as PostgresLedger;
      const max = 2n ** 63n - 1n;
      await store.create(newIntent(), 1, undefined, [
        step('created', 'wallet', 'inflight', String(max - 95n)),
      ]);
      const results = await Promise.allSettled(
        Array.from({ length: 30 }, (_, i) =>
          (writers[i % 3] as PostgresLedger).create(newIntent(), 1, undefined, [
            step('created', 'wallet', 'inflight', '10'),
          ]),
        ),
      );
      const refused = results.filter((r) => r.status === 'rejected');
      assert.equal(results.length - refused.length, 9);
      for (const r of refused) assert.ok(r.reason instanceof InvalidIntentError, String(r.reason));
      assert.deepEqual(await store.balances(['inflight', 'wallet']), [
        { account: 'inflight', unit: 'msats', balance: String(max - 5n) },
        { account: 'wallet', unit: 'msats', balance: String(-(max - 5n)) },
      ]);
      await assertShares(s);
      // Back down, the shares are dealt afresh and writes spread over the shards again.
      const out = await store.create(newIntent(), 2, undefined, [
        step('created', 'inflight', 'wallet', String(max - 5n)),
      ]);
      assert.equal(out.status, 'creating');
      await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (writers[i % 3] as PostgresLedger).create(newIntent(), 3, undefined, [
            step('created', 'wallet', 'inflight', '10'),
          ]),
        ),
      );
      assert.deepEqual(await store.balances(['inflight', 'wallet']), [
        { account: 'inflight', unit: 'msats', balance: '300' },
        { account: 'wallet', unit: 'msats', balance: '-300' },
      ]);
      const spread = await admin.query(
        `SELECT count(*)::int AS n FROM "${s}".balances WHERE account = 'inflight' AND balance <> 0`,
      );
      assert.ok(spread.rows[0]?.n > 1, 'inflight in one shard');
      await assertShares(s);
    });

    it('keeps balances exact under writes that cross balance rows in opposite orders, without deadlock', async () => {
      const s = schema();
      const writers = [ledger(s), ledger(s), ledger(s)];
      const intents = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          (writers[i % 3] as PostgresLedger).create(newIntent(), 1),
        ),
      );
      // Half go a -> b and c -> d, half d -> c and b -> a: four rows each, in crossing orders.
      const [pa, pb, pc, pd] = ['owed:a', 'owed:b', 'escrow:c', 'claimable:d'];
      const results = await Promise.all(
        intents.map((intent, i) => {
          const postings =
            i % 2 === 0
              ? [step('one', pa, pb, '3'), step('two', pc, pd, '5')]
              : [step('one', pd, pc, '7'), step('two', pb, pa, '11')];
          const to: IntentStatus = i % 4 < 2 ? 'pending' : 'failed';
          return (writers[i % 3] as PostgresLedger).transition(intent.id, 'creating', to, {
            postings,
          });
        }),
      );
      assert.ok(results.every((r) => r !== null));
      const entries = await everyEntry(writers[0] as PostgresLedger);
      assert.equal(entries.length, 48);
      assert.deepEqual(await (writers[1] as PostgresLedger).balances([pa, pb, pc, pd]), [
        { account: pa, unit: 'msats', balance: String(12 * (11 - 3)) },
        { account: pb, unit: 'msats', balance: String(12 * (3 - 11)) },
        { account: pc, unit: 'msats', balance: String(12 * (7 - 5)) },
        { account: pd, unit: 'msats', balance: String(12 * (5 - 7)) },
      ]);
    });

    it('refuses a write that would take a balance past a signed 64-bit integer, whole', async () => {
      const store = ledger(schema());
      const max = String(2n ** 63n - 1n);
      const one = await store.create(newIntent(), 1, undefined, [
        step('created', 'wallet', 'inflight', max),
      ]);
      const two = await store.create(newIntent(), 1);
      const err = await rejection(
        store.transition(two.id, 'creating', 'pending', {
          postings: [step('pending', 'wallet', 'inflight', '1')],
        }),
        InvalidIntentError,
      );
      assert.match(err.message, /balance/);
      assert.equal((await store.get(two.id))?.status, 'creating');
      assert.deepEqual(
        (await everyEntry(store)).map((e) => e.id),
        [`${one.id}:created`],
      );
    });
  });

  describe('a server killed with SIGKILL', () => {
    it('survives the server dying under a transaction in flight: a typed rejection, no crash', async () => {
      // Found by the soak: a checked-out client whose server dies emits 'error' on itself,
      // which ended the whole game process when nothing listened.
      const s = schema();
      const store = ledger(s);
      await store.open();
      const holder = await admin.connect();
      holder.on('error', () => {});
      await holder.query(`BEGIN; LOCK TABLE ${s}.intents IN ACCESS EXCLUSIVE MODE`);
      // A guarded create runs in a transaction: it now waits on the lock, its client checked out.
      const create = store.create(newIntent(), Date.now(), { maxOpenPerPlayer: 5 });
      create.catch(() => {}); // asserted below, once the server is gone
      await eventually(async () => {
        const { rows } = await admin.query(
          'SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted',
        );
        return (rows[0] as { n: number }).n > 0;
      });
      await server.kill();
      await rejection(create, LedgerUnavailableError);
      holder.release(true);
      await server.start();
      await eventually(() =>
        store.get(randomUUID()).then(
          () => true,
          () => false,
        ),
      );
      await admin.query('SELECT 1').catch(() => admin.query('SELECT 1'));
    });

    it('keeps every acknowledged intent, and a store open across the crash carries on', async () => {
      const s = schema();
      const store = ledger(s);
      const created: Intent[] = [];
      for (let i = 0; i < 20; i++) {
        const intent = await store.create(newIntent({ nextCheckAt: 1_000 + i }));
        created.push(
          (await store.transition(intent.id, 'creating', 'pending', {
            patch: { remoteId: `wr-${i}`, code: `LNURL${i}` },
          })) as Intent,
        );
      }
      await store.recordEvent('ramp:1');
      await server.kill();
      // While it is down, a call rejects with a typed, retryable error, never a raw socket one.
      const down = await rejection(store.create(newIntent()), LedgerUnavailableError);
      assert.equal(down.code, 'LN_LEDGER_UNAVAILABLE');
      assert.equal(down.retryable, true);
      await rejection(store.get((created[0] as Intent).id), LedgerUnavailableError);
      await server.start();
      const after = ledger(s);
      for (const intent of created) {
        assert.deepEqual(await after.get(intent.id), intent);
        assert.deepEqual(await after.byCallbackToken(intent.callbackToken as string), intent);
      }
      assert.equal(await after.recordEvent('ramp:1'), false);
      assert.equal((await after.claimDue(10_000, 100, 'w', 1_000)).length, 20);
      // The pool of the store that lived through the crash replaces its dead connections.
      const again = await eventually(() => store.get((created[0] as Intent).id).catch(() => null));
      assert.equal(again.id, (created[0] as Intent).id);
      await admin.query('SELECT 1'); // and so does the admin pool, for the tests after this one
    });
  });

  describe('under a game', () => {
    it('pays a reward and settles it by the service’s callback', async () => {
      const store = ledger(schema());
      const game = await startGame(
        { empty: EmptyRoom },
        { ledger: store, reconciler: { enabled: false } },
      );
      try {
        const settled: Intent[] = [];
        game.lightning.on('settled', (i) => settled.push(i));
        const reward = await game.lightning.reward({
          playerId: 'alice',
          amountMsat: 50_000,
          description: 'Winner',
        });
        assert.equal(reward.status, 'pending');
        assert.deepEqual(await store.get(reward.id), reward);
        assert.equal(game.emulator.control.claimWithdrawal(reward.remoteId as string).status, 'OK');
        await eventually(async () => (await store.get(reward.id))?.status === 'completed');
        await game.emulator.control.callbacks.idle();
        const sent = game.emulator.control.callbackLog.filter(
          (c) => c.resourceId === reward.remoteId,
        );
        assert.deepEqual(
          sent.map((c) => [c.outcome, c.httpStatus]),
          [['delivered', 200]],
        );
        assert.deepEqual(
          settled.map((i) => [i.id, i.status]),
          [[reward.id, 'completed']],
        );
      } finally {
        await game.stop();
      }
    });
  });
});
