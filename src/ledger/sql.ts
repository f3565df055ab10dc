/**
 * The stores' SQL under sql/<store>/, found beside this module (files.ts) and read once per
 * process: the layouts' migrations (layout.ts) and the statements, one `.sql` file each, loaded
 * by name. In a statement a line that starts with `--` is a comment; it may name slots `{name}`,
 * filled from `slots`: what a statement shares with the schema or derives from the package's
 * constants (the columns, the open test, the payout kinds), or a PostgreSQL schema's name.
 */
import { readFileSync } from 'node:fs';
import { ledgerFile } from './files.js';

/** The operator log's statements, the same primitives on every store (rules.ts LineChange). */
export const OPERATOR_SQL = [
  'append-line',
  'block',
  'unblock',
  'blocked',
  'pause',
  'pause-line',
  'resume',
  'paused',
] as const;

const files = new Map<string, string>();

/** The text of sql/`path`, as written. */
export function sqlFile(path: string): string {
  let text = files.get(path);
  if (text === undefined) {
    text = readFileSync(ledgerFile(`./sql/${path}`), 'utf8');
    files.set(path, text);
  }
  return text;
}

const texts = new Map<string, string>();

export function loadSql<N extends string>(
  store: 'sqlite' | 'postgres',
  names: readonly N[],
  slots: Readonly<Record<string, string>> = {},
): Record<N, string> {
  const out = {} as Record<N, string>;
  for (const name of names) {
    const file = `${store}/${name}.sql`;
    let text = texts.get(file);
    if (text === undefined) {
      // Comments are for readers: node:sqlite pays for them on every run of a statement.
      text = sqlFile(file)
        .split('\n')
        .filter((line) => !line.trimStart().startsWith('--'))
        .join('\n')
        .trim();
      texts.set(file, text);
    }
    out[name] = text.replace(/\{(\w+)\}/g, (slot, key: string) => {
      const value = slots[key];
      if (value === undefined) throw new Error(`${file}: no value for the slot ${slot}`);
      return value;
    });
  }
  return out;
}
