/**
 * `npm run docs:options`: writes the options tables of `createLightning` and of the room plugin
 * (scripts/options-table.ts) between their markers in README.md and docs/*.md.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { docFiles, readDoc, withTables } from './options-table.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
for (const path of docFiles(root)) {
  const text = readDoc(root, path);
  const made = withTables(text);
  if (made !== text) {
    writeFileSync(join(root, path), made);
    console.log(`wrote the options tables of ${path}`);
  }
}
