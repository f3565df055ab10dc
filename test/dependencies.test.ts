/**
 * Nothing in src/ reads a property of a dependency that its type definitions do not declare,
 * nor hands a dependency a value dressed as one of its types (issue 23, finding 3).
 *
 * TypeScript strict already refuses every read of an undeclared property; what it cannot refuse
 * is code that steps around it. So the test holds src/ to the checker: it lists every way around
 * it and refuses each one that is not on a short, reasoned list of casts over our own data.
 *
 * - a double assertion (`as unknown as T`) or `as any`: the only way to give a dependency's
 *   value a shape of our choosing (how `@colyseus/schema`'s private `journal.indexByKey` was
 *   reached) or to pass our object as a dependency's type (how undici got a fake AbortSignal);
 * - `@ts-ignore` / `@ts-expect-error`;
 * - a bracket read of a non-public member a dependency declares (`map['journal']`), which
 *   TypeScript lets through even for `protected` and `private` members;
 * - a dependency's internal files (`undici/lib/...`, `@colyseus/schema/build/...`) or its
 *   symbols for internals (`$changes`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');

/**
 * The double assertions src/ may make: each is over data of our own making, typed loosely by
 * the API that carried it, never a dependency's object. File, the exact text, and why.
 */
const OWN_DATA_CASTS: [string, string, string][] = [
  [
    'src/room/entries.ts',
    'state[roomMapOf(kind)] as unknown as EntryMap',
    'our LightningState maps, each a MapSchema of one of our entry classes, read as their union',
  ],
  ['src/ledger/sqlite-core.ts', 'as unknown as Row', 'a row of our own schema (node:sqlite)'],
  ['src/ledger/sqlite-core.ts', 'as unknown as Row[]', 'rows of our own schema'],
  ['src/ledger/sqlite-core.ts', 'as unknown as Move[]', 'rows of our own schema'],
  [
    'src/ledger/postgres.ts',
    'as unknown as AccountBalance[]',
    'rows of our own schema (pg types rows as any[])',
  ],
];

/** The one `@ts-ignore`: an ESM-only construct in a file the CommonJS build replaces. */
const TS_IGNORE_ALLOWED = ['src/ledger/files.ts'];

/** Packages whose internals src/ could reach, and the entry points they publish. */
const DEPENDENCIES = ['@colyseus/schema', '@colyseus/core', 'undici', 'pg', 'zod'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function dtsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : dtsFiles(path);
    return /\.d\.[cm]?ts$/.test(entry.name) ? [path] : [];
  });
}

/** Source text without comments, so that a word in a doc comment is not code. */
function code(file: string): string {
  return readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '))
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

const files = sourceFiles(SRC).map((path) => ({
  path,
  name: relative(ROOT, path),
  text: code(path),
}));

describe("src/ keeps to its dependencies' declared types (issue 23)", () => {
  it('makes no double assertion or `as any` except over its own data', () => {
    const found: string[] = [];
    for (const { name, text } of files) {
      let rest = text;
      for (const [file, cast] of OWN_DATA_CASTS) {
        if (file === name) rest = rest.split(cast).join('');
      }
      for (const m of rest.matchAll(/as\s+unknown\s+as\b|\bas\s+any\b|<any>/g)) {
        const line = rest.slice(0, m.index).split('\n').length;
        found.push(`${name}:${line}: ${rest.split('\n')[line - 1]?.trim()}`);
      }
    }
    expect(found, 'casts that step around the type checker').to.deep.equal([]);
  });

  it('lists no cast that is gone (the list stays true)', () => {
    const stale = OWN_DATA_CASTS.filter(
      ([file, cast]) => !files.find((f) => f.name === file)?.text.includes(cast),
    );
    expect(stale).to.deep.equal([]);
  });

  it('silences the checker nowhere', () => {
    const found = sourceFiles(SRC)
      .filter((path) => /@ts-(ignore|expect-error|nocheck)/.test(readFileSync(path, 'utf8')))
      .map((path) => relative(ROOT, path))
      .filter((name) => !TS_IGNORE_ALLOWED.includes(name));
    expect(found).to.deep.equal([]);
  });

  it("reads no member a dependency declares private or protected, and imports no dependency's internals", () => {
    const hidden = new Set<string>();
    for (const dep of DEPENDENCIES) {
      for (const dts of dtsFiles(join(ROOT, 'node_modules', dep))) {
        const text = readFileSync(dts, 'utf8');
        for (const m of text.matchAll(
          /^\s*(?:private|protected)\s+(?:static\s+)?(?:readonly\s+)?([A-Za-z_$][\w$]*)/gm,
        )) {
          hidden.add(m[1] as string);
        }
      }
    }
    expect(hidden.size, 'private members found in the definitions').to.be.greaterThan(10);
    const found: string[] = [];
    for (const { name, text } of files) {
      // A read: after a value's name, a call or an index; a type's `Foo['x']` or `Foo<T>['x']`
      // (a capitalized name, or a type argument) is no read.
      for (const m of text.matchAll(/([\w$]*)([)\]]?)\s*\[\s*'([A-Za-z_$][\w$]*)'\s*\]/g)) {
        const [, before, closer, member] = m as unknown as [string, string, string, string];
        if (closer === '' && (before === '' || /^[A-Z]/.test(before))) continue;
        if (hidden.has(member)) found.push(`${name}: ['${member}']`);
      }
      for (const m of text.matchAll(/from\s+'([^']+)'/g)) {
        const spec = m[1] as string;
        const dep = DEPENDENCIES.find((d) => spec.startsWith(`${d}/`));
        if (dep !== undefined) found.push(`${name}: imports ${spec}`);
      }
      for (const m of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'@colyseus\/schema'/g)) {
        for (const sym of (m[1] as string).split(',')) {
          if (sym.trim().startsWith('$')) found.push(`${name}: imports ${sym.trim()}`);
        }
      }
    }
    expect(found).to.deep.equal([]);
  });
});
