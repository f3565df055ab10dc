/**
 * The options tables of the docs, made from the zod schemas that check the options: each
 * option's `description` (and, where zod holds no default it can show, its `defaultText`; for a
 * type zod cannot name, its `tsType`) is metadata on its schema, so a table cannot disagree
 * with what `createLightning` and `lightning.plugin` accept. `npm run docs:options` writes each
 * table between its markers, `<!-- options:NAME -->` and `<!-- /options:NAME -->`, NAME being
 * `createLightning`, `plugin` or one group of either (`createLightning.alerts`);
 * test/docs-options.test.ts fails when one differs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { pluginOptionsSchema } from '../src/room/options.js';
import { lightningOptionsSchema } from '../src/server/options.js';

/** Each table by the name its markers carry: `<!-- options:NAME -->` … `<!-- /options:NAME -->`. */
export const OPTION_SCHEMAS = {
  createLightning: lightningOptionsSchema,
  plugin: pluginOptionsSchema,
} as const;
export type TableName = keyof typeof OPTION_SCHEMAS;

export interface OptionRow {
  /** Dotted for a field of a group: `reconciler.intervalMs`. */
  name: string;
  type: string;
  default: string;
  description: string;
}

interface Doc {
  description?: string;
  defaultText?: string;
  tsType?: string;
}

function docOf(schema: z.ZodType): Doc {
  const meta = z.globalRegistry.get(schema) ?? {};
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    description: text(meta.description),
    defaultText: text(meta.defaultText),
    tsType: text(meta.tsType),
  };
}

/** What a user passes, under the wrappers that say whether and what by default. */
interface Unwrapped {
  inner: z.ZodType;
  optional: boolean;
  /** The default zod applies, when there is one. */
  zodDefault?: { value: unknown };
}

function unwrap(schema: z.ZodType): Unwrapped {
  let inner = schema;
  let optional = false;
  let zodDefault: { value: unknown } | undefined;
  for (;;) {
    if (inner instanceof z.ZodDefault || inner instanceof z.ZodPrefault) {
      zodDefault ??= { value: inner.def.defaultValue };
      inner = inner.unwrap() as z.ZodType;
    } else if (inner instanceof z.ZodOptional) {
      optional = true;
      inner = inner.unwrap() as z.ZodType;
    } else if (inner instanceof z.ZodPipe) {
      // A transform: the table shows what goes in.
      inner = inner.in as z.ZodType;
    } else {
      return { inner, optional, zodDefault };
    }
  }
}

function typeOf(schema: z.ZodType, where: string): string {
  const { tsType } = docOf(schema);
  if (tsType) return tsType;
  const { inner } = unwrap(schema);
  if (inner !== schema) return typeOf(inner, where);
  if (schema instanceof z.ZodString || schema instanceof z.ZodStringFormat) return 'string';
  if (schema instanceof z.ZodNumber) return 'number';
  if (schema instanceof z.ZodBoolean) return 'boolean';
  if (schema instanceof z.ZodBigInt) return 'bigint';
  if (schema instanceof z.ZodObject || schema instanceof z.ZodRecord) return 'object';
  if (schema instanceof z.ZodArray) return `${typeOf(schema.element as z.ZodType, where)}[]`;
  if (schema instanceof z.ZodNullable)
    return `${typeOf(schema.unwrap() as z.ZodType, where)} | null`;
  if (schema instanceof z.ZodUnion) {
    return (schema.options as z.ZodType[]).map((o) => typeOf(o, where)).join(' | ');
  }
  if (schema instanceof z.ZodEnum) return schema.options.map((o) => `'${o}'`).join(' | ');
  throw new Error(`${where}: zod cannot name this type; give it .meta({ tsType })`);
}

/** A default zod holds, as a reader would write it; undefined when it is not a plain value. */
function shownDefault(value: unknown): string | undefined {
  if (typeof value === 'string') return `\`'${value}'\``;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) {
    return `\`${String(value)}\``;
  }
  if (Array.isArray(value) && value.length === 0) return '`[]`';
  return undefined;
}

function defaultOf(field: Unwrapped, doc: Doc, where: string): string {
  const isGroup = field.inner instanceof z.ZodObject;
  const value = field.zodDefault?.value;
  const groupDefault =
    isGroup && typeof value === 'object' && value !== null && Object.keys(value).length === 0;
  const shown = groupDefault ? 'each below' : field.zodDefault && shownDefault(value);
  if (shown !== undefined && doc.defaultText !== undefined) {
    throw new Error(`${where}: zod holds its default (${shown}); drop its defaultText`);
  }
  if (shown !== undefined) return shown;
  if (doc.defaultText !== undefined) return doc.defaultText;
  if (field.zodDefault || field.optional) {
    throw new Error(`${where}: say what its default is in .meta({ defaultText })`);
  }
  return 'required';
}

/** One row per option, a group's fields after it, in the schema's order. */
export function optionRows(schema: z.ZodObject, prefix = ''): OptionRow[] {
  return Object.entries(schema.shape).flatMap(([key, value]) => {
    const field = value as z.ZodType;
    const name = `${prefix}${key}`;
    const doc = docOf(field);
    if (!doc.description) throw new Error(`${name}: give it .meta({ description })`);
    const unwrapped = unwrap(field);
    const row: OptionRow = {
      name,
      type: typeOf(field, name),
      default: defaultOf(unwrapped, doc, name),
      description: doc.description,
    };
    const { inner } = unwrapped;
    return inner instanceof z.ZodObject ? [row, ...optionRows(inner, `${name}.`)] : [row];
  });
}

const PLAIN_TYPES: ReadonlySet<string> = new Set(['string', 'number', 'boolean', 'object']);

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/**
 * The table `name` names: `createLightning`, `plugin`, or one group of either with its fields
 * (`createLightning.alerts`), for a doc that explains that group.
 */
export function optionsTable(name: string): string {
  const [table = '', ...group] = name.split('.');
  if (!(table in OPTION_SCHEMAS)) throw new Error(`no options table ${table} (in ${name})`);
  const under = group.join('.');
  const rows = optionRows(OPTION_SCHEMAS[table as TableName])
    .filter((r) => under === '' || r.name === under || r.name.startsWith(`${under}.`))
    .map((r) => {
      // A plain type goes without saying (the default shows it); another is named.
      const type = PLAIN_TYPES.has(r.type) ? '' : ` (\`${cell(r.type)}\`)`;
      return `| \`${r.name}\`${type} | ${cell(r.default)} | ${cell(r.description)} |`;
    });
  if (rows.length === 0) throw new Error(`no option ${under} in ${table}`);
  return ['| option | default | what it does |', '|---|---|---|', ...rows].join('\n');
}

export const markers = (name: string) =>
  [`<!-- options:${name} -->`, `<!-- /options:${name} -->`] as const;

/** The text with every table between its markers made anew. */
export function withTables(text: string): string {
  let out = text;
  let from = 0;
  for (;;) {
    const found = /<!-- options:([\w.]+) -->/.exec(out.slice(from));
    if (!found) return out;
    const name = found[1] as string;
    const [open, close] = markers(name);
    const start = from + found.index;
    const end = out.indexOf(close, start);
    if (end === -1) throw new Error(`${open} has no ${close} after it`);
    const table = `${open}\n${optionsTable(name)}\n`;
    out = out.slice(0, start) + table + out.slice(end);
    from = start + table.length + close.length;
  }
}

/** The docs a table may be in: README.md and docs/*.md, as paths from the repository's root. */
export function docFiles(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

export const readDoc = (root: string, path: string) => readFileSync(join(root, path), 'utf8');
