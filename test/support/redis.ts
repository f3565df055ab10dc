/**
 * A throwaway redis-server for tests: started on a free loopback port in its own temporary
 * directory, stopped (SIGKILL if it lingers) by `stop()`, which also removes the directory.
 * No test depends on a server already running. It carries what Colyseus puts on Redis
 * (RedisPresence, RedisDriver), never money, so it runs as Redis ships: no AOF, no snapshots.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { readyLine } from './ready-line.js';

export interface RedisServer {
  port: number;
  url: string;
  /** Stops it and removes its directory. */
  stop(): Promise<void>;
}

const REDIS_BIN = process.env.REDIS_SERVER ?? 'redis-server';

export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'lightning-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
  args.push('--appendonly', 'no');

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
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      await halt('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
