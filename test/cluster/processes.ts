/**
 * Starts and drives game-server child processes: the cluster test's (fixtures/node.ts) by
 * default, or another fixture that speaks the same protocol (the soak's). One child per
 * process, on the repo's Node (the fixture bundled once: support/node-child.ts), with an IPC channel for
 * commands and reports. Output is kept and printed only when a test fails.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { eventually } from '../support/eventually.js';
import { nodeArgs } from '../support/node-child.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/node.ts', import.meta.url));

/** A report from a process: `settled`, `room`, `claim`, `release`, `ready`. */
export interface Report {
  node: string;
  event: string;
  id?: string;
  ids?: string[];
  status?: string;
  roomId?: string | null;
  at?: number;
  [key: string]: unknown;
}

export interface NodeConfig {
  name: string;
  port: number;
  publicUrl: string;
  redisUrl: string;
  apiUrl: string;
  apiKey: string;
  reconciler: Record<string, unknown>;
  /** The module to run; default fixtures/node.ts. */
  fixture?: string;
  /** More environment for the fixture. */
  env?: Record<string, string>;
}

export class GameProcess {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  output = '';
  #rid = 0;
  readonly #pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

  private constructor(config: NodeConfig, reports: Report[], args: string[]) {
    this.name = config.name;
    this.port = config.port;
    this.url = `http://127.0.0.1:${config.port}`;
    this.child = spawn(process.execPath, args, {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      env: {
        ...process.env,
        NODE_ENV: 'test',
        NODE_NAME: config.name,
        PORT: String(config.port),
        PUBLIC_URL: config.publicUrl,
        REDIS_URL: config.redisUrl,
        API_URL: config.apiUrl,
        API_KEY: config.apiKey,
        RECONCILER: JSON.stringify(config.reconciler),
        ...config.env,
      },
    });
    this.child.stdout?.on('data', (c: Buffer) => {
      this.output += c.toString();
    });
    this.child.stderr?.on('data', (c: Buffer) => {
      this.output += c.toString();
    });
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    this.child.on('message', (message: Report & { rid?: number; ok?: boolean }) => {
      if (typeof message.rid === 'number') {
        const waiter = this.#pending.get(message.rid);
        this.#pending.delete(message.rid);
        if (message.ok) waiter?.resolve(message.result);
        else waiter?.reject(new Error(`${this.name}: ${String(message.error)}`));
        return;
      }
      reports.push({ ...message, received: Date.now() });
    });
    void this.exited.then(() => {
      for (const waiter of this.#pending.values()) waiter.reject(new Error(`${this.name} exited`));
      this.#pending.clear();
    });
  }

  /** Starts the process and resolves once it listens; its reports go to `reports`. */
  static async start(config: NodeConfig, reports: Report[], timeoutMs = 30_000) {
    // A process started again under the same name must not count its predecessor's `ready`.
    const readies = () => reports.filter((r) => r.node === config.name && r.event === 'ready');
    const before = readies().length;
    const node = new GameProcess(config, reports, await nodeArgs(config.fixture ?? FIXTURE));
    try {
      await eventually(
        () => {
          if (node.child.exitCode !== null) throw new Error(`${config.name} exited during start`);
          return readies().length > before;
        },
        timeoutMs,
        `${config.name} to start`,
      );
    } catch (err) {
      await node.kill();
      throw new Error(`${(err as Error).message}:\n${node.output}`);
    }
    return node;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  request<T = unknown>(command: Record<string, unknown>): Promise<T> {
    const rid = ++this.#rid;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(rid, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ rid, ...command }, (err) => {
        if (err) {
          this.#pending.delete(rid);
          reject(err);
        }
      });
    });
  }

  /** SIGKILL: no shutdown hook runs, leases stay held, in-flight work is lost. */
  async kill(): Promise<void> {
    if (this.alive) this.child.kill('SIGKILL');
    await this.exited;
  }
}
