/**
 * The code a Markdown doc holds (fenced blocks and inline spans), and the names in it that the
 * names test (test/docs-names.test.ts) checks against the real objects: `lightning.…` chains,
 * `plugins.lightning.…` helpers, dotted option names, and the keys of the object literals passed
 * to `createLightning({ … })` and `lightning.plugin({ … })`.
 */

export interface Named {
  name: string;
  /** 1-based, in the doc. */
  line: number;
}

interface Region {
  start: number;
  text: string;
}

/** Fenced blocks, then the inline spans of the text outside them, with their offsets. */
export function codeRegions(doc: string): Region[] {
  const regions: Region[] = [];
  const fence = /^```[^\n]*\n([\s\S]*?)^```/gm;
  let outside = doc;
  for (const m of doc.matchAll(fence)) {
    const body = m[1] as string;
    regions.push({ start: m.index + m[0].indexOf('\n') + 1, text: body });
    // Blank the block out (same length) so that the spans below are only the prose's.
    outside =
      outside.slice(0, m.index) + ' '.repeat(m[0].length) + outside.slice(m.index + m[0].length);
  }
  for (const m of outside.matchAll(/`([^`]+)`/g)) {
    regions.push({ start: m.index + 1, text: m[1] as string });
  }
  return regions;
}

export function lineAt(doc: string, offset: number): number {
  let line = 1;
  for (let i = doc.indexOf('\n'); i !== -1 && i < offset; i = doc.indexOf('\n', i + 1)) line++;
  return line;
}

/** Matches of `pattern` (group 1 the name) in the doc's code. */
export function namesIn(doc: string, pattern: RegExp): Named[] {
  return codeRegions(doc).flatMap((region) =>
    [...region.text.matchAll(pattern)].map((m) => ({
      name: m[1] as string,
      line: lineAt(doc, region.start + m.index),
    })),
  );
}

const IDENT = /^(?:([A-Za-z_$][\w$]*)|'([^']*)'|"([^"]*)")/;
const CLOSE: Record<string, string> = { '{': '}', '(': ')', '[': ']' };

function skipSpace(src: string, from: number): number {
  let i = from;
  for (;;) {
    while (i < src.length && /\s/.test(src[i] as string)) i++;
    if (src.startsWith('//', i))
      i = src.indexOf('\n', i) === -1 ? src.length : src.indexOf('\n', i);
    else if (src.startsWith('/*', i))
      i = src.indexOf('*/', i) === -1 ? src.length : src.indexOf('*/', i) + 2;
    else return i;
  }
}

function skipString(src: string, from: number): number {
  const quote = src[from];
  let i = from + 1;
  while (i < src.length && src[i] !== quote) i += src[i] === '\\' ? 2 : 1;
  return i + 1;
}

/** Past one value: up to the `,` or the closing bracket at its own depth, neither consumed. */
function skipValue(src: string, from: number): number {
  const open: string[] = [];
  let i = from;
  while (i < src.length) {
    const c = src[i] as string;
    if (src.startsWith('//', i) || src.startsWith('/*', i)) {
      i = skipSpace(src, i);
      continue;
    }
    if (c === "'" || c === '"' || c === '`') {
      i = skipString(src, i);
      continue;
    }
    if (c in CLOSE) open.push(CLOSE[c] as string);
    else if (open.length === 0 && (c === ',' || c === '}' || c === ')' || c === ']')) return i;
    else if (c === open[open.length - 1]) open.pop();
    i++;
  }
  return i;
}

/**
 * The keys of the object literal at `src[at]` (a `{`), nested ones dotted; undefined when the
 * text there is not an object literal this reader follows.
 */
function objectKeys(src: string, at: number, prefix: string, out: Named[]): number | undefined {
  let i = at + 1;
  for (;;) {
    i = skipSpace(src, i);
    if (src[i] === '}') return i + 1;
    if (src.startsWith('...', i)) {
      i = skipValue(src, i + 3);
    } else {
      const m = IDENT.exec(src.slice(i));
      if (!m) return undefined;
      const key = m[1] ?? m[2] ?? m[3] ?? '';
      out.push({ name: `${prefix}${key}`, line: i });
      i = skipSpace(src, i + m[0].length);
      if (src[i] === ':') {
        i = skipSpace(src, i + 1);
        const end =
          src[i] === '{' ? objectKeys(src, i, `${prefix}${key}.`, out) : skipValue(src, i);
        if (end === undefined) return undefined;
        i = end;
      } else if (src[i] === '(') {
        i = skipValue(src, i);
      }
    }
    i = skipSpace(src, i);
    if (src[i] === ',') i++;
    else if (src[i] === '}') return i + 1;
    else return undefined;
  }
}

/** Option names in the object literals passed to `call(` in the doc's code (`line` in the doc). */
export function optionKeysIn(doc: string, call: RegExp): Named[] {
  return codeRegions(doc).flatMap((region) =>
    [...region.text.matchAll(call)].flatMap((m) => {
      const brace = skipSpace(region.text, m.index + m[0].length);
      if (region.text[brace] !== '{') return [];
      const keys: Named[] = [];
      objectKeys(region.text, brace, '', keys);
      return keys.map((k) => ({ name: k.name, line: lineAt(doc, region.start + k.line) }));
    }),
  );
}

const LEADING = /^\.?([A-Za-z_$][\w$]*)/;
const cells = (row: string) =>
  row
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());

/**
 * Members named in a table whose first header cell is an object's chain ending in a dot
 * (`` `lightning.operator.` ``): each row's first cell's spans, `resolve(id, …)`, are its members.
 */
export function tableMembers(doc: string): Named[] {
  const lines = doc.split('\n');
  const out: Named[] = [];
  let prefix: string | undefined;
  lines.forEach((line, index) => {
    if (!line.startsWith('|')) {
      prefix = undefined;
      return;
    }
    const first = cells(line)[0] ?? '';
    const previous = lines[index - 1] ?? '';
    if (!previous.startsWith('|')) {
      prefix = /^`([\w$.]+)\.`$/.exec(first)?.[1];
      return;
    }
    if (prefix === undefined || /^:?-+:?$/.test(first)) return;
    for (const span of first.matchAll(/`([^`]+)`/g)) {
      const member = LEADING.exec(span[1] as string)?.[1];
      if (member) out.push({ name: `${prefix}.${member}`, line: index + 1 });
    }
  });
  return out;
}

/**
 * Members listed after a chain in a code block, as a summary does:
 * `lightning.books     balances(), journal(query), ledger` (a list ending in a comma goes on
 * on the next line), and `lightning.ready() / close()` (siblings of the first call).
 */
export function listedMembers(doc: string): Named[] {
  const out: Named[] = [];
  for (const region of codeRegions(doc)) {
    if (!region.text.includes('\n')) continue;
    const first = lineAt(doc, region.start);
    let group: string | undefined;
    region.text.split('\n').forEach((line, i) => {
      const at = first + i;
      const listed = /^(lightning(?:\.[\w$]+)+) {2,}(.+?)(?: {2,}|$)/.exec(line);
      const more = group === undefined ? null : /^ {4,}(\S.*?)(?: {2,}|$)/.exec(line);
      const list = listed?.[2] ?? more?.[1];
      group = listed?.[1] ?? (more ? group : undefined);
      if (list !== undefined && group !== undefined) {
        for (const item of list.split(/,\s*/)) {
          const member = LEADING.exec(item)?.[1];
          if (member) out.push({ name: `${group}.${member}`, line: at });
        }
        if (!list.trimEnd().endsWith(',')) group = undefined;
      }
      const calls = /^(lightning(?:\.[\w$]+)*)\.[\w$]+\([^)]*\)((?:\s*\/\s*[\w$]+\([^)]*\))+)/.exec(
        line,
      );
      for (const sibling of calls?.[2]?.matchAll(/\/\s*([\w$]+)\(/g) ?? []) {
        out.push({ name: `${calls?.[1]}.${sibling[1]}`, line: at });
      }
    });
  }
  return out;
}
