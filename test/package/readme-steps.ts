/**
 * The README's steps, read from README.md as a reader copies them: the Install block (the
 * packed tarball in place of `colyseus-lightning`, which is not published; its `.npmrc` line
 * uncommented where github.com is out of reach, as the README says), the four files, and the
 * Run block. pack.test.ts and first-hour.ts run exactly these, so they and the README cannot
 * drift.
 */
import { execFile } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export function readme(): string {
  return readFileSync(join(root, 'README.md'), 'utf8');
}

/** The lines of the first ```sh block after `after` in the README. */
function shBlock(text: string, after: string): string[] {
  const from = text.indexOf(after);
  if (from < 0) throw new Error(`README.md has no "${after}"`);
  const block = text.slice(from).match(/```sh\n([\s\S]*?)```/)?.[1];
  if (!block) throw new Error(`README.md has no sh block after "${after}"`);
  return block.trimEnd().split('\n');
}

/** The README's Install lines, to run in order from an empty folder. */
export function installLines(
  text: string,
  how: { tarball: string; withoutGithub: boolean },
): string[] {
  return shBlock(text, '## Install\n').map((line) => {
    // "uncomment the `.npmrc` line before installing" where github.com is out of reach.
    if (how.withoutGithub && /^# echo .*\.npmrc/.test(line)) return line.slice(2);
    if (!line.startsWith('npm install')) return line;
    return line.replace(/(?<=\s)colyseus-lightning(?=\s|$)/, how.tarball);
  });
}

/** The folder the Install lines make (`mkdir duel && cd duel`), relative to where they ran. */
export function projectFolder(lines: string[]): string {
  const folder = lines.join('\n').match(/^mkdir (\S+) && cd \1$/m)?.[1];
  if (!folder) throw new Error('the Install lines make no project folder (mkdir x && cd x)');
  return folder;
}

/** The README's code files (```ts blocks that start with `// <file>.ts`), by path. */
export function readmeFiles(text: string): { path: string; body: string }[] {
  return [...text.matchAll(/```ts\n\/\/ ([\w./-]+\.ts)[^\n]*\n([\s\S]*?)```/g)].map((m) => ({
    path: m[1] as string,
    body: `// ${m[1]}\n${m[2]}`,
  }));
}

/**
 * The README's Run block: the lines that build (run in order, each ends), the server's line
 * (`npx tsx`) and the page's (esbuild's `--serve`), both of which run until stopped.
 */
export function runLines(text: string): { build: string[]; server: string; page: string } {
  const lines = shBlock(text, 'Run it:');
  const server = lines.filter((l) => /\bnpx tsx\b/.test(l));
  const page = lines.filter((l) => /--serve\b/.test(l));
  if (server.length !== 1 || page.length !== 1)
    throw new Error(`the Run block has ${server.length} server and ${page.length} page lines`);
  return {
    build: lines.filter((l) => !server.includes(l) && !page.includes(l)),
    server: server[0] as string,
    page: page[0] as string,
  };
}

/** Runs lines as one `sh -e` script in `cwd`; rejects with what they printed. */
export async function sh(lines: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await run('sh', ['-ec', lines.join('\n')], {
      cwd,
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(
      `these README lines failed in ${cwd}:\n${lines.join('\n')}\n${stdout}${stderr}`,
    );
  }
}

/**
 * A new project made by the README's Install lines under `parent`; resolves with its path.
 * The lines before the one that installs the package run while `tarball` is still being made.
 * Where github.com does not resolve, or the install fails on it, with the `.npmrc` line.
 */
export async function installAsTheReadmeSays(
  parent: string,
  tarball: Promise<string>,
): Promise<string> {
  const text = readme();
  const attempt = async (withoutGithub: boolean) => {
    const placeholder = '\0tarball\0';
    const lines = installLines(text, { tarball: placeholder, withoutGithub });
    const project = join(parent, projectFolder(lines));
    const at = lines.findIndex((l) => l.includes(placeholder));
    if (at < 0) throw new Error('the Install lines never install colyseus-lightning');
    rmSync(project, { recursive: true, force: true });
    mkdirSync(parent, { recursive: true });
    await sh(lines.slice(0, at), parent); // it ends in the project folder (mkdir x && cd x)
    const path = await tarball;
    await sh(
      lines.slice(at).map((l) => l.replace(placeholder, path)),
      project,
    );
    return project;
  };
  const withoutGithub = () => {
    console.log('      (github.com unreachable: the README line .npmrc legacy-peer-deps=true)');
    return attempt(true);
  };
  // A name that does not resolve needs no 16 s attempt to say so.
  if (!(await resolves('github.com'))) return withoutGithub();
  return attempt(false).catch((err: Error) => {
    if (!/github\.com|uWebSockets/.test(err.message)) throw err;
    return withoutGithub();
  });
}

async function resolves(host: string): Promise<boolean> {
  try {
    await lookup(host);
    return true;
  } catch {
    return false;
  }
}

/** The README's code files written into `project` as a reader copies them; their paths. */
export function writeReadmeFiles(project: string): string[] {
  return readmeFiles(readme()).map(({ path, body }) => {
    mkdirSync(dirname(join(project, path)), { recursive: true });
    writeFileSync(join(project, path), body);
    return path;
  });
}
