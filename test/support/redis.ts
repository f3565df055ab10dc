/**
 * A throwaway redis-server for tests: started on a free loopback port in its own temporary
 * directory, stopped (SIGKILL if it lingers) by `stop()`, which also removes the directory.
 * No test depends on a server already running.
 *
 * By default it runs as a money ledger must: AOF on with `appendfsync always`, so `kill()`
 * (SIGKILL) then `start()` on the same port and directory finds every acknowledged write.
 * `{ durable: false }` runs it as Redis and Debian ship it (AOF off, no snapshots).
 * `{ replicaOf }` starts a replica of another test server.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './ports.js';
import { readyLine } from './ready-line.js';

export interface RedisServerOptions {
  /** AOF with fsync on every write (default true); false: AOF off, no snapshots. */
  durable?: boolean;
  /** `appendfsync` when durable; default 'always'. */
  appendfsync?: 'always' | 'everysec' | 'no';
  /** Start as a replica of this server. */
  replicaOf?: { port: number };
}

export interface RedisServer {
  port: number;
  url: string;
  /** Where its AOF lives; kept across kill() and start(). */
  dir: string;
  /** A new client of this server; the caller closes it. */
  client(): Redis;
  /** SIGKILL, as a crash: nothing is flushed that was not already. Resolves once it exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory (after kill() or stop()). */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  stop(): Promise<void>;
}

const REDIS_BIN = process.env.REDIS_SERVER ?? 'redis-server';

export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'lightning-redis-'));
  const durable = options.durable ?? true;
  // A replica's first sync starts at once, not after Redis's default 5 s diskless delay.
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
  args.push('--repl-diskless-sync-delay', '0');
  if (durable) {
    args.push('--appendonly', 'yes', '--appendfsync', options.appendfsync ?? 'always');
  } else {
    args.push('--appendonly', 'no');
  }
  if (options.replicaOf) args.push('--replicaof', '127.0.0.1', String(options.replicaOf.port));

  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const launch = async (): Promise<void> => {
    const proc = spawn(REDIS_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    await readyLine(proc, 'Ready to accept connections', 'redis-server', 10_000);
  };

  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    if (!running()) return;
    child?.kill(signal);
    const timer = setTimeout(() => child?.kill('SIGKILL'), 2000);
    await exited;
    clearTimeout(timer);
  };

  await launch();
  const url = `redis://127.0.0.1:${port}`;
  return {
    port,
    url,
    dir,
    client: () => new Redis(url),
    kill: () => halt('SIGKILL'),
    async start() {
      if (!running()) await launch();
    },
    async stop() {
      await halt('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
