/**
 * Each entry point exports exactly what docs/REFERENCE.md lists: values checked at run time,
 * types read from the entry file, which must list its exports by name (no `export *`), so
 * that nothing reaches users by accident.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const ENTRIES = [
  { name: 'colyseus-lightning', file: 'src/index.ts' },
  { name: 'colyseus-lightning/api', file: 'src/api/index.ts' },
  { name: 'colyseus-lightning/emulator', file: 'src/emulator/index.ts' },
  { name: 'colyseus-lightning/client', file: 'src/client/index.ts' },
];

/** The `values` and `types` lines under the entry's heading in docs/REFERENCE.md. */
function documented(entry: string): { values: string[]; types: string[] } {
  const doc = read('docs/REFERENCE.md');
  const section = doc.split(/^## /m).find((s) => s.startsWith(`\`${entry}\``));
  if (!section) throw new Error(`docs/REFERENCE.md has no section for ${entry}`);
  const names = (label: string) =>
    [...(section.match(new RegExp(`^${label}: (.*)$`, 'm'))?.[1] ?? '').matchAll(/`([^`]+)`/g)]
      .map((m) => m[1] as string)
      .sort();
  return { values: names('Values'), types: names('Types') };
}

/** Every name the entry file exports, from its `export` statements. */
function exportedNames(file: string): string[] {
  const text = read(file);
  const names: string[] = [];
  for (const [, body] of text.matchAll(/^export (?:type )?\{([^}]*)\}/gm)) {
    for (const part of (body as string).split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .at(-1);
      if (name) names.push(name);
    }
  }
  for (const [, name] of text.matchAll(
    /^export (?:declare )?(?:async )?(?:const|function|class|interface|type|enum) (\w+)/gm,
  )) {
    names.push(name as string);
  }
  return names.sort();
}

describe('exports', () => {
  for (const { name, file } of ENTRIES) {
    describe(name, () => {
      it('lists its exports by name (no export *)', () => {
        expect(read(file)).to.not.match(/^export \*/m);
      });

      it('exports the values docs/REFERENCE.md lists, and no other', async () => {
        const module = (await import(`../${file.replace(/\.ts$/, '.js')}`)) as object;
        expect(Object.keys(module).sort()).to.deep.equal(documented(name).values);
      });

      it('exports the types docs/REFERENCE.md lists, and no other', async () => {
        const module = (await import(`../${file.replace(/\.ts$/, '.js')}`)) as object;
        const values = new Set(Object.keys(module));
        const types = exportedNames(file).filter((n) => !values.has(n));
        expect(types).to.deep.equal(documented(name).types);
      });
    });
  }

  it('keeps internals out of every entry point', async () => {
    for (const { file } of ENTRIES) {
      const module = (await import(`../${file.replace(/\.ts$/, '.js')}`)) as object;
      for (const internal of [
        'TRANSITIONS',
        'canMove',
        'AMOUNT_PATTERN',
        'ROUTE_TABLE',
        'verifyJwt',
        'roomChannel',
        'Engine',
      ]) {
        expect(Object.keys(module), `${file} exports ${internal}`).to.not.include(internal);
      }
    }
  });

  it("keeps the face small: the game's daily calls at the top of Lightning, the rest in its groups (issue 33)", async () => {
    const { createLightning, Lightning } = await import('../src/index.js');
    const lightning = createLightning({ reconciler: { enabled: false } });
    try {
      const own = Reflect.ownKeys(lightning);
      const inherited = Reflect.ownKeys(Lightning.prototype).filter((k) => k !== 'constructor');
      const members = [...own, ...inherited].map(String).sort();
      expect(members).to.deep.equal(
        [
          'ready',
          'close',
          'on',
          'plugin',
          'endpoints',
          'attach',
          'reward',
          'rewardMany',
          'tabs',
          'payAddress',
          'chargeEntryFee',
          'spendPoints',
          'matches',
          'books',
          'operator',
          'service',
        ].sort(),
      );
      expect(members.length).to.be.at.most(16);
    } finally {
      await lightning.close();
    }
  });
});
