/**
 * The stores' layouts (src/ledger/sql/<store>/): a database built by the store from its
 * migrations and one built from schema.sql have the same catalog (tables, columns, constraints,
 * indexes, triggers, functions) and the same rows, so schema.sql says what every database is;
 * each migrations folder holds exactly the files the store applies; and the constants the
 * queries are built from name what the layout's indexes and triggers name. SQLite in memory,
 * PostgreSQL on a server of its own (about a second).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import type pg from 'pg';
import { ledgerFile } from '../../src/ledger/files.js';
import { type LayoutStore, MIGRATIONS } from '../../src/ledger/layout.js';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import {
  BALANCE_SHARDS,
  OPEN_SQL,
  OPEN_STRIPES,
  PAYOUT_SQL,
  LAYOUT as POSTGRES_LAYOUT,
} from '../../src/ledger/postgres-schema.js';
import {
  LIVE_SQL,
  openLedgerDatabase,
  LAYOUT as SQLITE_LAYOUT,
} from '../../src/ledger/sqlite-schema.js';
import { needPostgres } from '../support/needs.js';
import { type PostgresServer, startPostgres } from '../support/postgres.js';

const sql = (store: LayoutStore, name: string) =>
  readFileSync(ledgerFile(`./sql/${store}/${name}`), 'utf8');

/** SQL text with its comments dropped and its spacing made one: what a reader cannot see. */
function normalized(text: string | null): string | null {
  if (text === null) return null;
  return text
    .replace(/--[^\n]*/g, '')
    .replace(/\s+/g, ' ')
    .replace(/\( /g, '(')
    .replace(/ \)/g, ')')
    .trim();
}

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
    /** Every object of the file, its header's marks and every row of every table. */
    function catalog(db: DatabaseSync) {
      const objects = db
        .prepare(
          "SELECT type, name, tbl_name AS tbl, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_stat%' ORDER BY type, name",
        )
        .all()
        .map((o) => ({
          type: String(o.type),
          name: String(o.name),
          tbl: String(o.tbl),
          sql: normalized(o.sql as string | null),
        }));
      const rows = Object.fromEntries(
        objects
          .filter((o) => o.type === 'table')
          .map((o) => [o.name, db.prepare(`SELECT * FROM "${o.name}" ORDER BY 1`).all()]),
      );
      const pragma = (name: string) => Object.values(db.prepare(`PRAGMA ${name}`).get() ?? {})[0];
      return {
        objects,
        rows,
        version: pragma('user_version'),
        id: pragma('application_id'),
      };
    }

    it('builds from its migrations the database schema.sql describes', () => {
      const migrated = openLedgerDatabase(':memory:', 0);
      const written = new DatabaseSync(':memory:');
      try {
        written.exec(sql('sqlite', 'schema.sql'));
        const built = catalog(migrated);
        assert.deepEqual(built, catalog(written));
        assert.equal(built.version, SQLITE_LAYOUT);
        assert.notEqual(built.id, 0);
        assert.ok(built.objects.length > 30, 'the tables, indexes and triggers are there');
      } finally {
        migrated.close();
        written.close();
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
      await admin.query('CREATE SCHEMA from_schema_sql');
      await admin.query(
        sql('postgres', 'schema.sql').replaceAll('"lightning".', '"from_schema_sql".'),
      );
    });

    after(async () => {
      await admin?.end();
      await server?.stop();
    });

    /** What the catalog says of schema `s`, its name replaced by S, and every row it holds. */
    async function catalog(s: string) {
      const q = async (text: string) =>
        (await admin.query(text, [s])).rows.map((row: Record<string, unknown>) =>
          Object.fromEntries(
            Object.entries(row).map(([k, v]) => [
              k,
              typeof v === 'string' ? normalized(v.replaceAll(s, 'S')) : v,
            ]),
          ),
        );
      const tables = await q(
        'SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename',
      );
      const rows: Record<string, unknown[]> = {};
      for (const { tablename } of tables) {
        rows[String(tablename)] = (
          await admin.query(`SELECT * FROM "${s}"."${tablename}" ORDER BY 1`)
        ).rows;
      }
      return {
        tables,
        columns: await q(`SELECT table_name, column_name, ordinal_position, data_type,
            is_nullable, column_default, is_identity, identity_generation
          FROM information_schema.columns WHERE table_schema = $1
          ORDER BY table_name, ordinal_position`),
        constraints: await q(`SELECT c.conrelid::regclass::text AS tbl, c.conname,
            pg_get_constraintdef(c.oid) AS def
          FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
          WHERE n.nspname = $1 ORDER BY 1, 2`),
        indexes: await q(
          'SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname',
        ),
        triggers: await q(`SELECT t.tgname, pg_get_triggerdef(t.oid) AS def
          FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 AND NOT t.tgisinternal ORDER BY 1`),
        functions: await q(`SELECT p.proname, pg_get_functiondef(p.oid) AS def
          FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname = $1 ORDER BY 1`),
        sequences: await q(`SELECT sequence_name, data_type, start_value, increment
          FROM information_schema.sequences WHERE sequence_schema = $1 ORDER BY 1`),
        rows,
      };
    }

    it('builds from its migrations the schema schema.sql describes', async () => {
      const built = await catalog('from_migrations');
      assert.deepEqual(built, await catalog('from_schema_sql'));
      assert.deepEqual(built.rows.layout, [{ only_row: true, version: POSTGRES_LAYOUT }]);
      assert.equal(built.tables.length, 12);
      assert.ok(built.indexes.length > 25 && built.triggers.length === 6);
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
      } finally {
        await admin.query('DROP INDEX from_migrations.probe_open, from_migrations.probe_payout');
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
