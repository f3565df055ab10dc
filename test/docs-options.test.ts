/**
 * The options tables of `createLightning` and of the room plugin are made from their zod
 * schemas (scripts/options-table.ts) and stay so (issue 35, finding 7): each table is between
 * its markers once in the docs, and is what the schema makes today.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import {
  docFiles,
  markers,
  OPTION_SCHEMAS,
  optionRows,
  readDoc,
  type TableName,
  withTables,
} from '../scripts/options-table.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIX = 'run `npm run docs:options` and commit the tables it writes';

describe('docs: the options tables', () => {
  it('each table is between its markers in exactly one doc, once', () => {
    for (const name of Object.keys(OPTION_SCHEMAS) as TableName[]) {
      const [open, close] = markers(name);
      const places = docFiles(root).flatMap((path) => {
        const text = readDoc(root, path);
        const count = (marker: string) => text.split(marker).length - 1;
        expect(count(open), `${path}: ${open}`).to.equal(count(close));
        return Array.from({ length: count(open) }, () => path);
      });
      expect(places, `${open} … ${close} in README.md or docs/*.md`).to.have.length(1);
    }
  });

  it('every table is what the schemas make today', () => {
    const stale = docFiles(root).filter((path) => {
      const text = readDoc(root, path);
      return withTables(text) !== text;
    });
    expect(stale, `options tables differ from the schemas in ${stale.join(', ')}: ${FIX}`).to.be
      .empty;
  });

  it('every option has a row, nested ones by their dotted names, each with its default', () => {
    const rows = optionRows(OPTION_SCHEMAS.createLightning);
    const names = rows.map((r) => r.name);
    for (const key of Object.keys(OPTION_SCHEMAS.createLightning.shape)) {
      expect(names, key).to.include(key);
    }
    expect(names).to.include.members([
      'reconciler.intervalMs',
      'budgets.perPlayer.windowMs',
      'tabs.maxCreditMsat',
      'emulator.allowRemote',
      'api.retry.maxRetryAfterMs',
    ]);
    const byName = new Map(rows.map((r) => [r.name, r]));
    expect(byName.get('reconciler.intervalMs')?.default).to.equal('`1000`');
    expect(byName.get('prefix')?.default).to.equal("`'/lightning'`");
    expect(byName.get('approvals.aboveMsat')?.default).to.equal('required');
    const plugin = optionRows(OPTION_SCHEMAS.plugin).map((r) => r.name);
    expect(plugin).to.include.members(['catchUpMs', 'tabs.minTimeInRoomMs']);
  });

  it('a table made after a schema changed differs, and the markers keep the text around them', () => {
    const [open, close] = markers('plugin');
    const doc = `before\n${open}\n| an old table |\n${close}\nafter\n`;
    const made = withTables(doc);
    expect(made.startsWith(`before\n${open}\n| option | default | what it does |`)).to.equal(true);
    expect(made.endsWith(`${close}\nafter\n`)).to.equal(true);
    expect(made).to.include('| `catchUpMs` | `10000` |');
    expect(withTables(made)).to.equal(made);
  });

  it("a group's own table lists that group's options alone; an unknown name is an error", () => {
    const [open, close] = markers('createLightning.alerts');
    const made = withTables(`${open}\n${close}\n`);
    const rows = [...made.matchAll(/^\| `([\w.]+)` \|/gm)].map((m) => m[1]);
    expect(rows).to.deep.equal([
      'alerts',
      'alerts.coverBelowMsat',
      'alerts.unknownAfterMs',
      'alerts.intervalMs',
      'alerts.serviceFailingMs',
    ]);
    expect(() =>
      withTables('<!-- options:createLightning.alert -->\n<!-- /options:createLightning.alert -->'),
    ).to.throw('no option alert in createLightning');
    expect(() => withTables(`${open}\n`)).to.throw('has no');
  });
});
