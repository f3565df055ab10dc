/**
 * A throwaway PostgreSQL server for tests and benchmarks: a fresh cluster (initdb's, made once
 * and copied) in its own temporary directory, then `postgres` on a free loopback port; `stop()`
 * shuts it down and removes the directory. No test depends on a server already running. Start
 * one per test file and give each test its own schema.
 *
 * The binaries come from `PG_BIN`, else the newest /usr/lib/postgresql/<n>/bin (Debian's
 * `postgresql` package), else PATH. PostgreSQL refuses to run as root, so when this process is
 * root both initdb and the server run as an unprivileged user (`PG_USER`, else `postgres`, else
 * `nobody`) through setpriv, in a directory that user owns.
 *
 * By default it runs as a money ledger must: fsync on, synchronous_commit on, full page writes,
 * so `kill()` (SIGKILL to the server and every backend at once, as a crash) then `start()` on
 * the same port and directory finds every acknowledged commit. `{ durable: false }` turns all
 * three off (tests about atomicity, not durability).
 *
 * Its directory is on tmpfs (/dev/shm) where there is one, unless `{ disk: true }` (the
 * benchmarks: a user's server writes to a disk). What kill() makes, every server process killed
 * at once, loses only what PostgreSQL had not yet handed to the kernel, on any medium; so the
 * crash tests prove the same there, while each commit's fsync, a wait on the disk that only a
 * power cut (which no test makes) would need, costs nothing.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';
import { readyLine } from './ready-line.js';

export interface PostgresServerOptions {
  /** fsync, synchronous_commit and full_page_writes on (default true); false: all off. */
  durable?: boolean;
  /** Its directory on the disk (os.tmpdir()) even where tmpfs is at hand (default false). */
  disk?: boolean;
}

export interface PostgresServer {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust authentication, loopback only). */
  url: string;
  /** Where its data lives; kept across kill() and start(). */
  dir: string;
  /** A new pool on this server; the caller ends it. Idle-client errors are swallowed. */
  pool(config?: pg.PoolConfig): pg.Pool;
  /** SIGKILL to the server and all its backends, as a crash. Resolves once it exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory (after kill() or stop()). */
  start(): Promise<void>;
  /** Stops it (fast shutdown) and removes its directory. */
  stop(): Promise<void>;
}

/** A schema name of its own for a test's ledger: tests on one server never share one. */
export function freshSchema(): string {
  return `t_${randomUUID().replaceAll('-', '')}`;
}

/** The directory holding initdb and postgres, or '' to use PATH. */
export function postgresBin(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return '';
  const versions = readdirSync(base)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(base, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(base, versions[0], 'bin') : '';
}

/** Whether a PostgreSQL server can be started here (binaries found). */
export function postgresAvailable(): boolean {
  const bin = postgresBin();
  if (bin) return existsSync(join(bin, 'postgres'));
  try {
    execFileSync('postgres', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

interface RunAs {
  uid: number;
  gid: number;
}

/** The unprivileged user to run as when this process is root; null when it is not root. */
function runAs(): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n');
  const wanted = process.env.PG_USER ? [process.env.PG_USER] : ['postgres', 'nobody'];
  for (const name of wanted) {
    const line = passwd.find((l) => l.startsWith(`${name}:`));
    const [, , uid, gid] = line?.split(':') ?? [];
    if (uid !== undefined && gid !== undefined) return { uid: Number(uid), gid: Number(gid) };
  }
  throw new Error(`no unprivileged user (${wanted.join(', ')}) to run PostgreSQL as`);
}

/** The command line that runs `program` as `user` (setpriv), or as this process. */
function command(bin: string, program: string, args: string[], user: RunAs | null) {
  const path = bin ? join(bin, program) : program;
  if (!user) return { file: path, args };
  return {
    file: 'setpriv',
    args: [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', path, ...args],
  };
}

/** The pids of every live descendant of `pid`, read from /proc (Linux). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const found: number[] = [];
  const walk = (p: number) => {
    for (const c of parents.get(p) ?? []) {
      found.push(c);
      walk(c);
    }
  };
  walk(pid);
  return found;
}

/** Whether a process is alive and not a zombie. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * A fresh cluster's files, made by initdb once per binaries, user and medium and then copied
 * for each server: a copy costs a tenth of initdb's CPU. Made aside and renamed into place, so
 * processes starting servers at once never see half a template.
 */
function template(bin: string, user: RunAs | null, base: string): string {
  const key = createHash('sha256')
    .update(`${bin}|${user?.uid ?? process.getuid?.()}`)
    .digest('hex')
    .slice(0, 12);
  const path = join(base, `lightning-pg-template-${key}`);
  if (existsSync(join(path, 'PG_VERSION'))) return path;
  const aside = mkdtempSync(join(base, 'lightning-pg-template-'));
  if (user) chownSync(aside, user.uid, user.gid);
  const data = join(aside, 'data');
  const init = command(
    bin,
    'initdb',
    ['-D', data, '-U', 'postgres', '--auth=trust', '--no-locale', '-E', 'UTF8'],
    user,
  );
  // --no-sync: initdb's own files need no fsync for a throwaway cluster; the server's writes
  // (the ones a test kills it over) are synced by the server's own settings.
  execFileSync(init.file, [...init.args, '--no-sync', '--no-instructions'], { stdio: 'pipe' });
  try {
    renameSync(data, path);
  } catch (err) {
    // Another process made it first: theirs is as good.
    if (!existsSync(join(path, 'PG_VERSION'))) throw err;
  }
  rmSync(aside, { recursive: true, force: true });
  return path;
}

export async function startPostgres(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  const bin = postgresBin();
  const user = runAs();
  const port = await freePort();
  const base = !options.disk && existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const dir = mkdtempSync(join(base, 'lightning-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  // cp -a keeps the owner and the 0700 mode PostgreSQL insists on.
  execFileSync('cp', ['-a', template(bin, user, base), data], { stdio: 'pipe' });

  const durable = options.durable ?? true;
  const flag = durable ? 'on' : 'off';
  const server = command(
    bin,
    'postgres',
    [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `fsync=${flag}`,
      '-c',
      `synchronous_commit=${flag}`,
      '-c',
      `full_page_writes=${flag}`,
    ],
    user,
  );

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const launch = async (): Promise<void> => {
    // Its own process group (setpriv execs postgres, which stays the leader); the backends
    // make groups of their own, so halt() also finds them by parent pid.
    const proc = spawn(server.file, server.args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child = proc;
    exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    await readyLine(proc, 'database system is ready to accept connections', 'postgres', 20_000);
  };

  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  const signalGroup = (signal: NodeJS.Signals) => {
    if (child?.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // The group is gone already.
    }
  };

  // Every process of the server: each backend makes itself a group leader (setsid), so a
  // signal to the postmaster's group misses them; they are found by parent pid instead.
  const processes = (): number[] =>
    child?.pid === undefined ? [] : [child.pid, ...descendants(child.pid)];
  const killAll = (pids: number[]) => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  };

  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    if (!running()) return;
    // SIGKILL: every process at once, as a power cut would (a backend left alive would go on
    // answering its connection for a moment). SIGINT is PostgreSQL's fast shutdown: it ends
    // client sessions instead of waiting for them.
    const pids = processes();
    if (signal === 'SIGKILL') {
      signalGroup('SIGKILL');
      killAll(pids);
    } else child?.kill(signal);
    const timer = setTimeout(() => killAll(processes()), 5000);
    await exited;
    clearTimeout(timer);
    // Backends orphaned by a killed server hold its shared memory; the next start refuses while
    // they live ("pre-existing shared memory block is still in use"): wait until they are gone.
    const deadline = Date.now() + 10_000;
    while (pids.some(alive) && Date.now() < deadline) {
      killAll(pids);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  await launch();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    port,
    url,
    dir,
    pool(config = {}) {
      const pool = new pg.Pool({ connectionString: url, ...config });
      // A killed server breaks idle connections; without a listener that would crash the test.
      pool.on('error', () => {});
      return pool;
    },
    kill: () => halt('SIGKILL'),
    async start() {
      if (!running()) await launch();
    },
    async stop() {
      await halt('SIGINT');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
