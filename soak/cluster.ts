/**
 * The soak's world: one redis-server (presence and the matchmaker's driver), one PostgreSQL
 * (the ledger, fsync on, restartable), one emulator in this process, and game-server processes (soak/game-server.ts, driven by test/cluster's
 * GameProcess). Callbacks go round a ring: process i gives the service process i+1's address,
 * so every callback lands on a process that does not host the intent's room, as behind a load
 * balancer. A process can be killed (SIGKILL) and started again on its port; so can
 * PostgreSQL. The emulator and every process read one soak clock (soak/clock.ts): `jump` moves
 * all of them forward together.
 *
 * Cost: three Node processes, a redis-server and a PostgreSQL besides this one.
 */
import { type Emulator, startEmulator } from '../src/emulator/index.js';
import { GameProcess, type NodeConfig, type Report } from '../test/cluster/processes.js';
import { freePort } from '../test/support/ports.js';
import { type PostgresServer, startPostgres } from '../test/support/postgres.js';
import { type RedisServer, startRedis } from '../test/support/redis.js';
import { SoakClock } from './clock.js';

const FIXTURE = new URL('./game-server.ts', import.meta.url).pathname;

export interface ClusterOptions {
  processes: number;
  reconciler: Record<string, unknown>;
  /** More createLightning options for every process (api, breaker). */
  lightning: Record<string, unknown>;
  lingerMs: number;
}

/** One process slot: its current process, and every room it created in this incarnation. */
export interface Node {
  name: string;
  config: NodeConfig;
  process: GameProcess;
  /** Incremented by each restart. */
  incarnation: number;
  rooms: string[];
}

export class Cluster {
  readonly redis: RedisServer;
  /** The ledger's server. */
  readonly postgres: PostgresServer;
  readonly emulator: Emulator;
  readonly nodes: Node[];
  readonly reports: Report[];
  /** The emulator's clock; each process keeps its own at the same offset. */
  readonly clock: SoakClock;
  readonly #past: string[] = [];

  private constructor(
    redis: RedisServer,
    postgres: PostgresServer,
    emulator: Emulator,
    nodes: Node[],
    reports: Report[],
    clock: SoakClock,
  ) {
    this.redis = redis;
    this.postgres = postgres;
    this.emulator = emulator;
    this.nodes = nodes;
    this.reports = reports;
    this.clock = clock;
  }

  static async start(options: ClusterOptions): Promise<Cluster> {
    const reports: Report[] = [];
    const redis = await startRedis();
    const postgres = await startPostgres();
    const clock = new SoakClock();
    const emulator = await startEmulator({ walletMsat: 10 ** 13, clock });
    const ports = new Set<number>();
    while (ports.size < options.processes) ports.add(await freePort());
    const list = [...ports];
    const configs = list.map(
      (port, i): NodeConfig => ({
        name: `node${i}`,
        port,
        publicUrl: `http://127.0.0.1:${list[(i + 1) % list.length]}`,
        redisUrl: redis.url,
        apiUrl: emulator.url,
        apiKey: emulator.apiKey,
        reconciler: options.reconciler,
        fixture: FIXTURE,
        env: {
          SOAK_OPTIONS: JSON.stringify(options.lightning),
          SOAK_LINGER_MS: String(options.lingerMs),
          LEDGER_URL: postgres.url,
        },
      }),
    );
    try {
      const processes = await Promise.all(configs.map((c) => GameProcess.start(c, reports)));
      const nodes = configs.map((config, i) => ({
        name: config.name,
        config,
        process: processes[i] as GameProcess,
        incarnation: 0,
        rooms: [],
      }));
      return new Cluster(redis, postgres, emulator, nodes, reports, clock);
    } catch (err) {
      await emulator.close();
      await redis.stop();
      await postgres.stop();
      throw err;
    }
  }

  async createRooms(node: Node, count: number): Promise<string[]> {
    const created: string[] = [];
    for (let i = 0; i < count; i++) {
      created.push(await node.process.request<string>({ cmd: 'createRoom' }));
    }
    node.rooms.push(...created);
    return created;
  }

  /** SIGKILL: its rooms, leases and in-flight calls die with it. */
  async kill(node: Node): Promise<void> {
    await node.process.kill();
  }

  /** Starts a fresh process in the slot, on the same port; it has no rooms yet. */
  async restart(node: Node): Promise<void> {
    this.#past.push(node.process.output);
    const env = { ...node.config.env, SOAK_CLOCK_OFFSET: String(this.clock.offset) };
    node.process = await GameProcess.start({ ...node.config, env }, this.reports);
    node.incarnation++;
    node.rooms = [];
  }

  /**
   * Time passes `ms` in an instant, for the emulator and every live process alike; then the
   * emulator applies the expiries that fell due (and sends their callbacks).
   */
  async jump(ms: number): Promise<void> {
    const offset = this.clock.offset + ms;
    this.clock.setOffset(offset);
    await Promise.all(
      this.nodes
        .filter((n) => n.process.alive)
        .map((n) => n.process.request({ cmd: 'clock', offset })),
    );
    this.emulator.control.tick();
  }

  /** Asks one live process (the first) to run a command: an operator's or the game's. */
  request<T>(command: Record<string, unknown>): Promise<T> {
    const node = this.nodes.find((n) => n.process.alive);
    if (!node) throw new Error('no game process is alive');
    return node.process.request<T>(command);
  }

  /** Every live process has made every report it made before this call's answer. */
  async sync(): Promise<void> {
    await Promise.all(
      this.nodes.filter((n) => n.process.alive).map((n) => n.process.request({ cmd: 'sync' })),
    );
  }

  /**
   * Processes that died without being killed by the soak (each slot's current process: a killed
   * one was replaced), with how they ended and their last words.
   */
  deaths(): string[] {
    return this.nodes
      .filter((n) => !n.process.alive)
      .map((n) => {
        const { exitCode, signalCode } = n.process.child;
        const last = n.process.output.trim().split('\n').slice(-40).join('\n    ');
        return `${n.name} (incarnation ${n.incarnation}) exited (${signalCode ?? `code ${exitCode}`}); its last output:\n    ${last}`;
      });
  }

  /** What the processes' loggers printed (`[nodeN] ...`), every incarnation's. */
  output(): string {
    return [...this.#past, ...this.nodes.map((n) => n.process.output)]
      .flatMap((o) => o.split('\n'))
      .filter((line) => /^\[node\d+\]/.test(line))
      .join('\n');
  }

  async stop(): Promise<void> {
    // SOAK_DUMP=1: each process's last words, for a run whose processes died.
    if (process.env.SOAK_DUMP) {
      for (const n of this.nodes) console.error(`=== ${n.name}\n${n.process.output.slice(-4000)}`);
    }
    await Promise.all(this.nodes.map((n) => n.process.kill()));
    await this.emulator.close();
    await this.redis.stop();
    await this.postgres.stop();
  }
}
