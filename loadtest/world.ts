/**
 * The load test's world: one redis-server (presence and driver), one PostgreSQL (the ledger, in
 * its own server), the emulator in this process with a rate limit per key, and the game
 * processes (loadtest/game-server.ts, driven by test/cluster's GameProcess). Callbacks go round
 * a ring as in the soak (soak/cluster.ts): process i gives the service process i+1's address,
 * so a callback lands on a process other than the one that made the request, as behind a load
 * balancer, and the request's callback URL names the process that made it. A process can be
 * SIGKILLed and started again on its port.
 *
 * Cost: the game processes, a redis-server and a PostgreSQL besides this one.
 */
import { type Emulator, startEmulator } from '../src/emulator/index.js';
import { GameProcess, type NodeConfig, type Report } from '../test/cluster/processes.js';
import { freePort } from '../test/support/ports.js';
import { type PostgresServer, startPostgres } from '../test/support/postgres.js';
import { type RedisServer, startRedis } from '../test/support/redis.js';
import type { GameSettings } from './settings.js';

const FIXTURE = new URL('./game-server.ts', import.meta.url).pathname;

/** The reconciler of every process: a killed process's leases lapse and its matches time out within the run. */
const RECONCILER = {
  intervalMs: 250,
  firstCheckMs: 2_000,
  maxBackoffMs: 5_000,
  leaseMs: 5_000,
  creatingGraceMs: 15_000,
  expiryMarginMs: 5_000,
};

export interface Node {
  name: string;
  config: NodeConfig;
  process: GameProcess;
  /** CPU of each earlier incarnation (a killed one's last reading), ms. */
  incarnation: number;
}

export class World {
  readonly redis: RedisServer;
  readonly postgres: PostgresServer;
  readonly emulator: Emulator;
  readonly nodes: Node[];
  readonly reports: Report[];

  private constructor(
    redis: RedisServer,
    postgres: PostgresServer,
    emulator: Emulator,
    nodes: Node[],
    reports: Report[],
  ) {
    this.redis = redis;
    this.postgres = postgres;
    this.emulator = emulator;
    this.nodes = nodes;
    this.reports = reports;
  }

  static async start(processes: number, rate: number, settings: GameSettings): Promise<World> {
    const reports: Report[] = [];
    const redis = await startRedis();
    const postgres = await startPostgres();
    const emulator = await startEmulator({
      walletMsat: 10 ** 13,
      rateLimit: { perSecond: rate, burst: rate },
      logger: { warn: () => {} },
    });
    const ports = new Set<number>();
    while (ports.size < processes) ports.add(await freePort());
    const list = [...ports];
    const configs = list.map(
      (port, i): NodeConfig => ({
        name: `node${i}`,
        port,
        publicUrl: `http://127.0.0.1:${list[(i + 1) % list.length]}`,
        redisUrl: redis.url,
        apiUrl: emulator.url,
        apiKey: emulator.apiKey,
        reconciler: RECONCILER,
        fixture: FIXTURE,
        env: { LEDGER_URL: postgres.url, LOADTEST: JSON.stringify(settings) },
      }),
    );
    try {
      // One at a time: the first creates the ledger's schema, the others find it.
      const started: GameProcess[] = [];
      for (const config of configs) started.push(await GameProcess.start(config, reports, 60_000));
      const nodes = configs.map((config, i) => ({
        name: config.name,
        config,
        process: started[i] as GameProcess,
        incarnation: 0,
      }));
      return new World(redis, postgres, emulator, nodes, reports);
    } catch (err) {
      await emulator.close();
      await redis.stop();
      await postgres.stop();
      throw err;
    }
  }

  /** The process whose address a request's callback URL names made the request (the ring). */
  makerOf(callbackUrl: string | null): string {
    const port = callbackUrl ? Number(new URL(callbackUrl).port) : Number.NaN;
    const at = this.nodes.findIndex((n) => n.config.port === port);
    if (at < 0) return 'unknown';
    return (this.nodes[(at - 1 + this.nodes.length) % this.nodes.length] as Node).name;
  }

  /** SIGKILL: its rooms, leases and in-flight calls die with it. */
  async kill(node: Node): Promise<void> {
    await node.process.kill();
  }

  /** A fresh process in the slot, on the same port. */
  async restart(node: Node): Promise<void> {
    node.process = await GameProcess.start(node.config, this.reports, 60_000);
    node.incarnation++;
  }

  live(): Node[] {
    return this.nodes.filter((n) => n.process.alive);
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.process.kill()));
    await this.emulator.close();
    await this.redis.stop();
    await this.postgres.stop();
  }
}
