/**
 * The docs hold to the code a new user meets (issue 16, findings 4, 5, 7, 10): the README
 * installs the package and states the one Node version, every file a doc names is in the
 * repository, and the code a user copies (docs, examples) imports the package by its name. The
 * options tables: test/docs-options.test.ts.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { MIN_NODE } from '../src/node-version.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const docs = [
  'README.md',
  'bench/README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The anchors GitHub makes of a page's headings: lower case, punctuation dropped, spaces as '-'. */
function anchorsOf(text: string): string[] {
  const withoutCode = text.replace(/```[\s\S]*?```/g, '');
  return [...withoutCode.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
    (m[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-'),
  );
}

function files(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : files(path);
    return [path];
  });
}

describe('docs', () => {
  it('the README installs the package with colyseus and states the one Node version', () => {
    const readme = read('README.md');
    expect(readme).to.include('npm install colyseus-lightning colyseus ');
    const [major, minor] = MIN_NODE.split('.');
    expect(readme).to.include(`Node ${major}.${minor} or newer`);
    for (const doc of docs) {
      // Any other "Node <n> or newer" (or "Node <n>+") would be a second version.
      const claims = read(doc).match(/Node (\d+(?:\.\d+)*)(?:\+| or newer)/g) ?? [];
      for (const claim of claims) {
        expect(claim, `${doc}: ${claim}`).to.match(new RegExp(`^Node ${major}\\.${minor}\\b`));
      }
    }
  });

  it('the README is a front page a person reads in five minutes, whose first room is a paid match (issue 25, finding 7)', () => {
    const readme = read('README.md');
    const lines = readme.split('\n').length;
    expect(lines, 'README lines').to.be.at.most(250);
    // The first room a reader meets is a match, with a client that uses the kit.
    const firstRoom = readme.slice(readme.indexOf('```ts\n// rooms/'));
    expect(firstRoom.slice(0, firstRoom.indexOf('```', 6))).to.include('openMatch(');
    expect(readme).to.include("from 'colyseus-lightning/client'");
    // The install's workaround where github.com is out of reach, on the front page.
    expect(readme).to.include('# echo legacy-peer-deps=true >> .npmrc');
    // Benchmarks, the soak, security and the API client live in docs/, linked from it.
    for (const moved of [
      '## Performance',
      '## Security',
      '## The API client',
      '### The fault soak',
    ]) {
      expect(readme, moved).to.not.include(moved);
    }
    for (const link of [
      'docs/DEPLOY.md#performance-and-the-fault-soak',
      'docs/DEPLOY.md#security',
      'docs/REFERENCE.md#the-api-client',
    ]) {
      expect(readme, link).to.include(`](${link})`);
      const [doc, anchor] = link.split('#') as [string, string];
      expect(anchorsOf(read(doc)), link).to.include(anchor);
    }
  });

  it("the README's Install lines check Node first, make an ES module project, and install every package its code imports (issue 35, findings 2, 3)", () => {
    const readme = read('README.md');
    const install = readme.slice(readme.indexOf('## Install\n')).match(/```sh\n([\s\S]*?)```/)?.[1];
    const lines = (install ?? '').trimEnd().split('\n');
    // Node first, before npm picks an older Colyseus for an older Node.
    const [major, minor] = MIN_NODE.split('.');
    expect(lines[0]).to.match(
      new RegExp(`^node -v +# ${major}\\.${minor} or newer.*Colyseus 0\\.17`),
    );
    // An ES module project: `npm init -y` makes CommonJS, where tsc refuses the client's
    // top-level await (TS1309).
    expect(lines).to.include(
      'npm init -y --init-type=module   # ES modules: the client awaits at its top level',
    );
    // Every package the README's code imports, and express (@colyseus/auth's peer), named on
    // the install line: with legacy-peer-deps=true npm installs no peer by itself.
    const installed = lines
      .filter((l) => l.startsWith('npm install'))
      .flatMap((l) => l.split(/\s+/).slice(2))
      .filter((w) => !w.startsWith('-'));
    const imported = new Set(
      [...readme.matchAll(/^import [^;]*? from '((?:@[\w-]+\/)?[\w-]+)[^']*';/gm)].map((m) => m[1]),
    );
    expect([...imported].sort()).to.include.members([
      '@colyseus/schema',
      '@colyseus/sdk',
      'colyseus',
      'colyseus-lightning',
    ]);
    for (const name of [...imported, 'express', 'tsx', 'esbuild']) {
      expect(installed, name).to.include(name);
    }
  });

  it('names only files that are in the repository', () => {
    const missing: string[] = [];
    for (const doc of docs) {
      const text = read(doc);
      const named = [
        // Markdown links to local files.
        ...[...text.matchAll(/\]\(((?!https?:|#)[^)\s]+)\)/g)].map((m) =>
          join(dirname(doc), (m[1] as string).split('#')[0] as string),
        ),
        // Paths and Markdown files in backticks: `src/api/paths.ts`, `SERVICE-API.md`.
        ...[
          ...text.matchAll(
            /`((?:src|test|examples|docs|bench|scripts|bin|\.ci)\/[\w./-]+|[\w./-]+\.md)`/g,
          ),
        ].map((m) => m[1] as string),
      ];
      for (const path of named) {
        if (path.includes('*') || path.includes('<')) continue;
        if (!existsSync(join(root, path))) missing.push(`${doc}: ${path}`);
      }
    }
    expect(missing).to.deep.equal([]);
  });

  it('links only to headings that are on the page it names', () => {
    const broken: string[] = [];
    for (const doc of docs) {
      const text = read(doc);
      for (const m of text.matchAll(/\]\(((?!https?:)[^)\s#]*)#([^)\s]+)\)/g)) {
        const target = m[1] ? join(dirname(doc), m[1] as string) : doc;
        if (!target.endsWith('.md') || !existsSync(join(root, target))) continue;
        if (!anchorsOf(read(target)).includes(m[2] as string)) broken.push(`${doc}: ${m[0]}`);
      }
    }
    expect(broken).to.deep.equal([]);
  });

  it('code a user copies imports colyseus-lightning by its name, never its sources', () => {
    const offenders: string[] = [];
    const copied = [...docs, ...files('examples').filter((f) => /\.(ts|js|mjs|cjs)$/.test(f))];
    for (const file of copied) {
      for (const m of read(file).matchAll(/from '((?:\.\.?\/)+src\/[^']*)'/g)) {
        offenders.push(`${file}: ${m[1]}`);
      }
    }
    expect(offenders).to.deep.equal([]);
  });
});
