/**
 * The shape of `src/`, checked: no import cycle anywhere (type-only imports count too, since
 * they tie modules together just the same for a reader), and every import points down the
 * layers of docs/ARCHITECTURE.md; and no function over 80 lines (biome's count) outside the
 * emulator. Run on its own with `npx mocha test/architecture.test.ts`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { INTENT_KINDS } from '../src/ledger/intent.js';
import { layerOf } from './support/layers.js';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * Relative imports and re-exports of a module, as paths under src/ (`server/engine.ts`); with
 * `runtime`, only those it loads as it starts (type-only and dynamic imports left out).
 */
function importsOf(file: string, { runtime = false } = {}): string[] {
  const text = readFileSync(file, 'utf8');
  const statics = runtime
    ? /^\s*(?:import|export)\s(?!type\s)[^;]*?from\s+'(\.[^']+)'/gms
    : /^\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms;
  const specifiers = [
    ...text.matchAll(statics),
    ...(runtime ? [] : text.matchAll(/import\('(\.[^']+)'\)/g)),
  ].map((m) => m[1] as string);
  return specifiers.map((s) =>
    relative(SRC, resolve(dirname(file), s.replace(/\.js$/, '.ts'))).replaceAll('\\', '/'),
  );
}

const graph = new Map(
  sourceFiles(SRC).map((file) => [relative(SRC, file).replaceAll('\\', '/'), importsOf(file)]),
);

function findCycles(): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

describe('architecture of src/', () => {
  it('reads every module and resolves every relative import to a file', () => {
    expect(graph.size).to.be.greaterThan(50);
    for (const [file, imports] of graph) {
      for (const target of imports)
        expect(graph.has(target), `${file} -> ${target}`).to.equal(true);
    }
  });

  it('has no import cycle', () => {
    expect(findCycles().map((c) => c.join(' -> '))).to.deep.equal([]);
  });

  it('finds a cycle when there is one (the check can fail)', () => {
    graph.set('api/a.ts', ['api/b.ts']);
    graph.set('api/b.ts', ['api/a.ts']);
    try {
      expect(findCycles().map((c) => c.join(' -> '))).to.include(
        'api/a.ts -> api/b.ts -> api/a.ts',
      );
    } finally {
      graph.delete('api/a.ts');
      graph.delete('api/b.ts');
    }
  });

  it('imports only downward: api, ledger and emulator know no server or room, the server no room', () => {
    const upward: string[] = [];
    for (const [file, imports] of graph) {
      for (const target of imports) {
        if (layerOf(target) > layerOf(file)) upward.push(`${file} -> ${target}`);
      }
    }
    expect(upward).to.deep.equal([]);
  });

  it('hands the room narrow calls: no room module sees the API client, the engine or a store', () => {
    const whole = ['api/client.ts', 'server/engine.ts', 'ledger/store.ts'];
    const reached: string[] = [];
    for (const [file, imports] of graph) {
      if (!file.startsWith('room/')) continue;
      for (const target of imports)
        if (whole.includes(target)) reached.push(`${file} -> ${target}`);
    }
    expect(reached).to.deep.equal([]);
  });

  it('reaches the payments service through the port: no server, room or operator module imports api/ but the wiring', () => {
    const offenders = [...graph].flatMap(([file, imports]) =>
      /^(server|room|operator)\//.test(file) && !PROVIDER_WIRING.includes(file)
        ? imports.filter((target) => target.startsWith('api/')).map((t) => `${file} -> ${t}`)
        : [],
    );
    expect(offenders).to.deep.equal([]);
    // The port itself speaks no provider's words: it imports nothing of src/ at all.
    const port = [...graph].flatMap(([file, imports]) =>
      file.startsWith('port/') ? imports.filter((t) => !t.startsWith('port/')) : [],
    );
    expect(port).to.deep.equal([]);
  });

  it('reaches into no private field of @colyseus/schema: the room writes its state through the public API', () => {
    // MapSchema's journal and key index, the change tracker and the symbols that hold an
    // instance's values: what issue 17 swapped to save bytes, and a minor release may change.
    const PRIVATE =
      /\b(journal|indexByKey|changeTree|ChangeTree)\b|\$(changes|items|indexes|values|refId)\b/;
    const offenders = [...graph.keys()].filter((file) => {
      if (!file.startsWith('room/')) return false;
      const code = readFileSync(join(SRC, file), 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/\/\/.*$/gm, '');
      return PRIVATE.test(code);
    });
    expect(offenders).to.deep.equal([]);
  });

  it('keeps Colyseus out of the layers below the server', () => {
    const offenders = [...graph.keys()].filter(
      (file) =>
        layerOf(file) < layerOf('server/') &&
        /from '@colyseus\//.test(readFileSync(join(SRC, file), 'utf8')),
    );
    expect(offenders).to.deep.equal([]);
  });

  it('keeps the client kit apart: it imports its own folder, the error tree, bech32 and uqr, nothing else', () => {
    const allowed = /^(bech32|uqr)$/;
    const offenders: string[] = [];
    for (const [file, imports] of graph) {
      if (!file.startsWith('client/')) continue;
      for (const target of imports)
        if (!target.startsWith('client/') && target !== 'errors.ts')
          offenders.push(`${file} -> ${target}`);
      const text = readFileSync(join(SRC, file), 'utf8');
      for (const [, name] of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^.'][^']*)'/gms))
        if (!allowed.test(name as string)) offenders.push(`${file} -> ${name}`);
    }
    // The error tree it shares must stay a leaf: what it imports, a browser would load.
    expect(importsOf(join(SRC, 'errors.ts'))).to.deep.equal([]);
    expect(offenders).to.deep.equal([]);
  });

  it("names no kind outside server/kinds/: a kind's rules are asked of its module", () => {
    const offenders = [...graph.keys()].flatMap((file) =>
      SPEAKS_KINDS.test(file) ? [] : kindLiterals(file, readFileSync(join(SRC, file), 'utf8')),
    );
    expect(offenders).to.deep.equal([]);
  });

  it("keeps zod out of the SQLite ledger's worker thread: each thread loads only what it runs", () => {
    const loaded = new Set<string>();
    const visit = (file: string) => {
      if (loaded.has(file)) return;
      loaded.add(file);
      for (const next of importsOf(join(SRC, file), { runtime: true })) visit(next);
    };
    visit('ledger/sqlite-worker.ts');
    expect(loaded.size).to.be.greaterThan(3);
    const withZod = [...loaded].filter((file) =>
      /from\s+'zod'/.test(readFileSync(join(SRC, file), 'utf8')),
    );
    expect(withZod).to.deep.equal([]);
  });

  it('has no function over 80 lines outside emulator/ (biome counts each body)', function () {
    this.timeout(20_000);
    const over80 = longFunctions().filter(([, lines]) => lines > 80);
    expect(over80.map(([at, lines]) => `${at}: ${lines}`)).to.deep.equal([]);
  });

  it('finds a long function when there is one (the check can fail)', function () {
    this.timeout(20_000);
    expect(longFunctions().filter(([, lines]) => lines > 50).length).to.be.greaterThan(1);
  });

  it('finds a kind named outside server/kinds/ (the check can fail)', () => {
    const code = [
      "if (intent.kind === 'reward') pay();",
      "switch (kind) { case 'entryFee': break; }",
      "const m = { kind: 'match', id };",
      "type Money = Exclude<IntentKind, 'spend'>;",
      "engine.checkWith('match', check); const k = t.string<'reward'>();",
      "const word = 'payment'; // a kind's name as data, compared to nothing",
    ].join('\n');
    expect(kindLiterals('server/x.ts', code)).to.have.length(6);
  });
});

let measured: [string, number][] | undefined;

/**
 * Functions of src/ (but emulator/, a copy of the service) whose body is over 40 lines, as
 * [file, lines]: biome's noExcessiveLinesPerFunction, run once with a configuration of its own.
 */
function longFunctions(): [string, number][] {
  measured ??= measureFunctions(40);
  return measured;
}

function measureFunctions(maxLines: number): [string, number][] {
  const dir = mkdtempSync(join(tmpdir(), 'lines-'));
  try {
    const rule = { level: 'error', options: { maxLines } };
    writeFileSync(
      join(dir, 'biome.json'),
      JSON.stringify({
        vcs: { enabled: false },
        files: { includes: ['**'] },
        linter: { rules: { preset: 'none', complexity: { noExcessiveLinesPerFunction: rule } } },
      }),
    );
    const biome = resolve(SRC, '../node_modules/@biomejs/biome/bin/biome');
    const args = ['lint', `--config-path=${dir}`, '--reporter=json', '--max-diagnostics=none'];
    let out: string;
    try {
      out = execFileSync(process.execPath, [biome, ...args, SRC], { encoding: 'utf8' });
    } catch (err) {
      // biome exits 1 when it reports: its report is on stdout all the same.
      out = (err as { stdout: string }).stdout;
    }
    const report = JSON.parse(out) as {
      diagnostics: { category: string; message: string; location: { path: string } }[];
    };
    return report.diagnostics
      .filter((d) => d.category === 'lint/complexity/noExcessiveLinesPerFunction')
      .map((d): [string, number] => [
        relative(SRC, resolve(d.location.path)),
        Number(d.message.match(/\((\d+)\)/)?.[1]),
      ])
      .filter(([file]) => !file.startsWith('emulator/'))
      .sort(([a], [b]) => a.localeCompare(b));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Where the provider is chosen: the runtime builds this service's client and its port
 * (api/port.ts), and the options parse this service's client tuning (`api`).
 */
const PROVIDER_WIRING = ['server/runtime.ts', 'server/options.ts'];

/**
 * Where a kind may be named: its own module (server/kinds/), and the layers that speak the
 * service's words (api/, emulator/), whose `payment` or `spend` are the service's own.
 */
const SPEAKS_KINDS = /^(server\/kinds|api|emulator)\//;

/**
 * A kind's name (INTENT_KINDS) used as a rule: compared to, switched on, given as an intent's
 * `kind`, handed to a call, pinned as a type argument or picked out of IntentKind. Comments are left out; a name as data (a purpose, a
 * method named `spend`) is not a rule and is not flagged.
 */
function kindLiterals(file: string, text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
  const name = `'(?:${INTENT_KINDS.join('|')})'`;
  const rule = new RegExp(
    [
      `[=!]==?\\s*${name}`,
      `${name}\\s*[=!]==?`,
      `\\bcase\\s+${name}`,
      `\\bkind\\s*:\\s*${name}`,
      `IntentKind\\s*,\\s*${name}`,
      `<${name}>`,
      `\\(${name}\\s*[,)]`,
    ].join('|'),
    'g',
  );
  return [...code.matchAll(rule)].map((m) => `${file}: ${m[0]}`);
}
