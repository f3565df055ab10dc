/**
 * Every method and option a doc names in its code exists (issue 35, finding 7): each
 * `lightning.…` chain on a real Lightning (started on its embedded emulator), each
 * `plugins.lightning.…` helper on a real room plugin, each dotted option name (`reconciler.leaseMs`)
 * and each key passed to `createLightning({ … })` or `lightning.plugin({ … })` in the options
 * schemas. A `lightning.…` name may also be a metric (as the real server creates them) or a table
 * of the PostgreSQL ledger. Unknown names are listed with their file and line.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createNoopMeter, type Meter, type MeterProvider } from '@opentelemetry/api';
import { expect } from 'chai';
import { docFiles, OPTION_SCHEMAS, optionRows, readDoc } from '../scripts/options-table.js';
import { createLightning, type Lightning } from '../src/index.js';
import {
  listedMembers,
  type Named,
  namesIn,
  optionKeysIn,
  tableMembers,
} from './support/doc-code.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const docs = docFiles(root).map((path) => ({ path, text: readDoc(root, path) }));

/** The real server's instrument names, as it asks its MeterProvider for them. */
function recordingMeterProvider(names: Set<string>): MeterProvider {
  const noop = createNoopMeter();
  const named =
    <A extends unknown[], R>(make: (name: string, ...rest: A) => R) =>
    (name: string, ...rest: A): R => {
      names.add(name);
      return make.call(noop, name, ...rest);
    };
  const meter: Meter = {
    createCounter: named(noop.createCounter),
    createUpDownCounter: named(noop.createUpDownCounter),
    createHistogram: named(noop.createHistogram),
    createGauge: named(noop.createGauge),
    createObservableGauge: named(noop.createObservableGauge),
    createObservableCounter: named(noop.createObservableCounter),
    createObservableUpDownCounter: named(noop.createObservableUpDownCounter),
    addBatchObservableCallback: (...args) => noop.addBatchObservableCallback(...args),
    removeBatchObservableCallback: (...args) => noop.removeBatchObservableCallback(...args),
  };
  return { getMeter: () => meter };
}

function postgresTables(): Set<string> {
  const dir = join(root, 'src/ledger/sql/postgres/migrations');
  const sql = readdirSync(dir)
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('\n');
  return new Set([...sql.matchAll(/CREATE TABLE "lightning"\.(\w+)/g)].map((m) => m[1] as string));
}

/** Whether `path` leads somewhere on `from`, property by property (prototypes included). */
function reaches(from: unknown, path: readonly string[]): boolean {
  let at = from;
  for (const key of path) {
    if ((typeof at !== 'object' && typeof at !== 'function') || at === null || !(key in at)) {
      return false;
    }
    at = (at as Record<string, unknown>)[key];
  }
  return true;
}

/** An option's dotted name, or one under an option that takes any key (`api.paths.…`). */
function optionKnown(rows: ReadonlySet<string>, name: string): boolean {
  if (rows.has(name)) return true;
  const parts = name.split('.');
  for (let n = parts.length - 1; n > 0; n--) {
    const prefix = parts.slice(0, n).join('.');
    if (rows.has(prefix)) return ![...rows].some((r) => r.startsWith(`${prefix}.`));
  }
  return false;
}

/** File names and hosts, not members: `lightning.ts`, `api.zbdpay.com`. */
const NOT_A_NAME = /\.(?:ts|js|mjs|cjs|md|json|sql|sqlite|com|test|example|png)$/;

describe('docs: every method and option a doc names exists', function () {
  this.timeout(20_000);
  let lightning: Lightning;
  const metrics = new Set<string>();
  const quiet = { info() {}, warn() {}, error() {} };

  before(async () => {
    lightning = createLightning({
      logger: quiet,
      meterProvider: recordingMeterProvider(metrics),
      startWithoutReadyMs: 600_000,
    });
    await lightning.ready();
  });
  after(() => lightning?.close());

  const serverRows = new Set(optionRows(OPTION_SCHEMAS.createLightning).map((r) => r.name));
  const pluginRows = new Set(optionRows(OPTION_SCHEMAS.plugin).map((r) => r.name));

  /** The names found (at least `least`: the reader still finds them) that are not `known`. */
  function unknown(
    least: number,
    find: (text: string) => Named[],
    known: (name: string) => boolean,
  ): string[] {
    const found = docs.flatMap(({ path, text }) =>
      find(text)
        .filter(({ name }) => !NOT_A_NAME.test(name))
        .map((named) => ({ ...named, path })),
    );
    expect(found.length, 'names found').to.be.at.least(least);
    return found
      .filter(({ name }) => !known(name))
      .map(({ path, line, name }) => `${path}:${line}: ${name}`);
  }

  it('each lightning.… chain is a member of a real Lightning, a metric or a ledger table', () => {
    const tables = postgresTables();
    const missing = unknown(
      100,
      (text) => [
        ...namesIn(text, /(?<![\w.$@/-])(lightning(?:\.[A-Za-z_$][\w$]*)+)/g),
        ...tableMembers(text).filter((n) => n.name.startsWith('lightning.')),
        ...listedMembers(text),
      ],
      (name) => {
        const path = name.split('.').slice(1);
        return (
          reaches(lightning, path) ||
          metrics.has(name) ||
          (path.length === 1 && tables.has(path[0] as string))
        );
      },
    );
    expect(metrics.size, 'the server created its instruments').to.be.greaterThan(10);
    expect(missing).to.deep.equal([]);
  });

  it('each plugins.lightning.… helper is a member of the room plugin', () => {
    const plugin = lightning.plugin();
    const missing = unknown(
      5,
      (text) => [
        ...namesIn(text, /(?<![\w$])(plugins\.lightning(?:\.[A-Za-z_$][\w$]*)+)/g),
        ...tableMembers(text)
          .map((n) => ({ ...n, name: n.name.replace(/^this\./, '') }))
          .filter((n) => n.name.startsWith('plugins.lightning.')),
      ],
      (name) => reaches(plugin, name.split('.').slice(2)),
    );
    expect(missing).to.deep.equal([]);
  });

  it('each dotted option name is an option (or a member of the object it shares a name with)', () => {
    const groups = [...serverRows, ...pluginRows].filter((r) => r.includes('.'));
    const roots = [...new Set(groups.map((r) => r.split('.')[0] as string))];
    // `api.…`, `emulator.…` and `tabs.…` also name the objects lightning.service and tabs hand out.
    const objects: Record<string, unknown> = {
      api: lightning.service.api,
      emulator: lightning.service.emulator,
      tabs: lightning.tabs,
    };
    const dotted = new RegExp(
      `(?<![\\w.$@/-])((?:${roots.join('|')})(?:\\.[A-Za-z_$][\\w$]*)+)`,
      'g',
    );
    const missing = unknown(
      50,
      (text) => namesIn(text, dotted),
      (name) => {
        const [first = '', ...rest] = name.split('.');
        return (
          optionKnown(serverRows, name) ||
          optionKnown(pluginRows, name) ||
          reaches(objects[first], rest)
        );
      },
    );
    expect(missing).to.deep.equal([]);
  });

  it('each key passed to createLightning({ … }) and lightning.plugin({ … }) is an option', () => {
    const missing = [
      ...unknown(
        20,
        (text) => optionKeysIn(text, /(?<![\w$.])createLightning\(/g),
        (name) => optionKnown(serverRows, name),
      ),
      ...unknown(
        2,
        (text) => optionKeysIn(text, /(?<![\w$.])lightning\.plugin\(/g),
        (name) => optionKnown(pluginRows, name),
      ),
    ];
    expect(missing).to.deep.equal([]);
  });
});
