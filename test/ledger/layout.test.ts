/**
 * The stores' layouts (src/ledger/sql/<store>/migrations/): each folder holds exactly the files
 * the store applies, and the constants the queries are built from name what the layout's
 * indexes and triggers name. From the first release on, a schema.sql beside them says what
 * every database is, and this test builds one from each and compares them (docs/ARCHITECTURE.md).
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import type pg from 'pg';
import { ledgerFile } from '../../src/ledger/files.js';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import {
  BALANCE_SHARDS,
  OPEN_SQL,
  OPEN_STRIPES,
  PAYOUT_SQL,
  LAYOUT as POSTGRES_LAYOUT,
  WINDOW_SQL,
} from '../../src/ledger/postgres-schema.js';
import { type LayoutStore, MIGRATIONS } from '../../src/ledger/sql.js';
import {
  LIVE_SQL,
  openLedgerDatabase,
  LAYOUT as SQLITE_LAYOUT,
} from '../../src/ledger/sqlite-schema.js';
import { needPostgres } from '../support/needs.js';
import { type PostgresServer, startPostgres } from '../support/postgres.js';

describe('the stores’ layouts', () => {
  for (const store of Object.keys(MIGRATIONS) as LayoutStore[]) {
    it(`${store}: the migrations folder holds exactly the files the store applies, in order`, () => {
      const folder = ledgerFile(`./sql/${store}/migrations/`);
      const files = readdirSync(folder).sort();
      assert.deepEqual(files, [...MIGRATIONS[store]]);
      assert.deepEqual(
        files.map((f) => Number(f.slice(0, 4))),
        files.map((_, i) => i + 1),
      );
    });
  }

  describe('SQLite', () => {
    it('records its layout and marks the file as a ledger', () => {
      const db = openLedgerDatabase(':memory:', 0);
      try {
        const pragma = (name: string) => Object.values(db.prepare(`PRAGMA ${name}`).get() ?? {})[0];
        assert.equal(pragma('user_version'), SQLITE_LAYOUT);
        assert.notEqual(pragma('application_id'), 0);
      } finally {
        db.close();
      }
    });

    it('names openness in its indexes as the queries do (LIVE_SQL)', () => {
      const db = openLedgerDatabase(':memory:', 0);
      try {
        const open = db
          .prepare(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name LIKE 'intents_open%' OR name = 'intents_due'",
          )
          .all();
        assert.equal(open.length, 4);
        for (const index of open)
          assert.ok(String(index.sql).includes(LIVE_SQL), String(index.name));
      } finally {
        db.close();
      }
    });
  });

  describe('PostgreSQL', function () {
    this.timeout(30_000);
    let server: PostgresServer;
    let admin: pg.Pool;

    before(async function () {
      needPostgres(this);
      server = await startPostgres({ durable: false });
      admin = server.pool({ max: 2 });
      const store = new PostgresLedger(admin, { schema: 'from_migrations', durability: 'none' });
      await store.open();
      await store.close();
    });

    after(async () => {
      await admin?.end();
      await server?.stop();
    });

    it('records its layout', async () => {
      const { rows } = await admin.query('SELECT * FROM from_migrations.layout');
      assert.deepEqual(rows, [{ only_row: true, version: POSTGRES_LAYOUT }]);
    });

    it('names the open statuses, the payouts, the shards and the stripes as the queries do', async () => {
      const predicate = async (index: string) => {
        const { rows } = await admin.query(
          `SELECT pg_get_expr(i.indpred, i.indrelid) AS p FROM pg_index i
           JOIN pg_class c ON c.oid = i.indexrelid WHERE c.oid = $1::regclass`,
          [index],
        );
        return String(rows[0]?.p);
      };
      // A probe built from each constant: the same predicate as the layout's index, to the letter.
      await admin.query(
        `CREATE INDEX probe_open ON from_migrations.intents (room_id) WHERE ${OPEN_SQL}`,
      );
      await admin.query(
        `CREATE INDEX probe_payout ON from_migrations.intents (created_at) WHERE ${PAYOUT_SQL}`,
      );
      try {
        for (const index of ['intents_open_room', 'intents_open_player']) {
          assert.equal(
            await predicate(`from_migrations.${index}`),
            await predicate('from_migrations.probe_open'),
          );
        }
        for (const index of [
          'intents_payout_player',
          'intents_payout_room',
          'intents_payout_time',
        ]) {
          assert.equal(
            await predicate(`from_migrations.${index}`),
            await predicate('from_migrations.probe_payout'),
          );
        }
        // A tab's windows: a player's credits, a player's withdrawals.
        for (const over of ['credits', 'withdrawals'] as const) {
          await admin.query(
            `CREATE INDEX probe_${over} ON from_migrations.intents (created_at) WHERE ${WINDOW_SQL[over]}`,
          );
          const index = over === 'credits' ? 'intents_credit_player' : 'intents_withdrawal_player';
          assert.equal(
            await predicate(`from_migrations.${index}`),
            await predicate(`from_migrations.probe_${over}`),
          );
        }
      } finally {
        await admin.query(
          'DROP INDEX IF EXISTS from_migrations.probe_open, from_migrations.probe_payout, from_migrations.probe_credits, from_migrations.probe_withdrawals',
        );
      }
      const within = await admin.query(
        `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'balances_within'
           AND connamespace = 'from_migrations'::regnamespace`,
      );
      assert.match(String(within.rows[0]?.def), new RegExp(`shard < ${BALANCE_SHARDS}\\)`));
      const stripes = await admin.query(
        'SELECT count(*)::int AS n FROM from_migrations.open_count',
      );
      assert.equal(stripes.rows[0]?.n, 2 * OPEN_STRIPES);
      const count = await admin.query(
        `SELECT pg_get_functiondef('from_migrations.count_open()'::regprocedure) AS def`,
      );
      assert.equal(
        String(count.rows[0]?.def).match(
          new RegExp(`pg_backend_pid\\(\\) % ${OPEN_STRIPES}\\b`, 'g'),
        )?.length,
        2,
      );
    });
  });
});
