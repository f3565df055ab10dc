/**
 * Starts a benchmark helper in its own process (its own core and event loop), reads the one
 * JSON line it prints once ready, and stops it. TypeScript children run through tsx.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface Child<Info> {
  process: ChildProcess;
  info: Info;
  /** Further JSON lines the child prints (answers to `send`). */
  next(): Promise<unknown>;
  send(message: unknown): void;
  /** `send`, then the child's next line: a command and its answer. */
  ask<T>(command: unknown): Promise<T>;
  stop(): Promise<void>;
}

export async function startChild<Info>(
  script: string | URL,
  args: string[] = [],
  nodeArgs: string[] = [],
): Promise<Child<Info>> {
  const path = script instanceof URL ? fileURLToPath(script) : script;
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path, ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
  const queue: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  lines.on('line', (line) => {
    // Libraries in the child may print to stdout too (Colyseus does); only JSON is ours.
    if (!line.startsWith('{')) {
      if (process.env.BENCH_VERBOSE) process.stderr.write(`[child] ${line}\n`);
      return;
    }
    const waiter = waiting.shift();
    if (waiter) waiter(line);
    else queue.push(line);
  });
  const exited = once(child, 'exit');
  const next = async (): Promise<unknown> => {
    const line =
      queue.shift() ??
      (await Promise.race([
        new Promise<string>((resolve) => waiting.push(resolve)),
        exited.then(([code]) => {
          throw new Error(`${path} exited (${code}) before answering`);
        }),
      ]));
    return JSON.parse(line);
  };
  const info = (await next()) as Info;
  return {
    process: child,
    info,
    next,
    send(message) {
      child.stdin?.write(`${JSON.stringify(message)}\n`);
    },
    async ask<T>(command: unknown): Promise<T> {
      child.stdin?.write(`${JSON.stringify(command)}\n`);
      return (await next()) as T;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
