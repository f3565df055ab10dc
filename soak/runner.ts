/**
 * The fault soak: thousands of rewards, entry fees and point spends asked for by real SDK
 * clients in many rooms of three game processes that share one Redis (AOF on), against one
 * emulator that answers 5xx and 429, hangs, processes and then drops or hangs the connection,
 * and drops, duplicates, delays and reorders its callbacks. Midway one game process is
 * SIGKILLed with creates in flight and started again; later Redis itself is SIGKILLed and
 * started again. Players' wallets pay and claim from the codes on their screens.
 *
 * When the ops are done and every intent had time to end (their short deadlines, the
 * reconciler's short grace period and margin), the invariants of soak/invariants.ts are
 * checked against the emulator's records and the ledger, and every figure is returned for
 * printing. `runSoak` never throws for a broken invariant: the result says `ok: false`.
 *
 * Cost: a few seconds of start-up, then about `ops / opsPerSecond` seconds of load, then the
 * entries' lifetime (10 s) and the margin while the last ones end.
 */
import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { Intent } from '../src/ledger/intent.js';
import { PostgresLedger } from '../src/ledger/postgres.js';
import { RedisLedger } from '../src/ledger/redis.js';
import type { LedgerStore } from '../src/ledger/store.js';
import type { Report } from '../test/cluster/processes.js';
import { eventually } from '../test/support/eventually.js';
import { Chaos, type ChaosOptions } from './chaos.js';
import { Cluster, type Node } from './cluster.js';
import type { Figure } from './figures.js';
import {
  type Check,
  checkInvariants,
  lostInKill,
  type PointBalance,
  type Records,
} from './invariants.js';
import {
  emailOf,
  foreignSightings,
  type OpKind,
  type OpResult,
  Player,
  type WalletOptions,
  Wallets,
} from './players.js';
import { Random } from './random.js';
import { soakFigures } from './report.js';

export interface SoakOptions {
  ops: number;
  seed: number;
  processes: number;
  roomsPerProcess: number;
  playersPerRoom: number;
  /** The pace the players aim at together (each waits for its answer before the next). */
  opsPerSecond: number;
  mix: Record<OpKind, number>;
  /** Lifetime of rewards and fees, seconds (10 is the least the helpers accept). */
  expiresIn: number;
  pointsPerPlayer: number;
  /** When, as a share of the ops asked for, a game process is SIGKILLed (then restarted). */
  killProcessAt: number;
  /** Where the ledger lives: Redis (with presence), or PostgreSQL (presence stays on Redis). */
  ledger: 'redis' | 'postgres';
  /** When the ledger's server (Redis or PostgreSQL) is SIGKILLed; started again after `redisDownMs`. */
  killRedisAt: number;
  redisDownMs: number;
  /** The game processes' reconciler options: short enough that everything ends in the run. */
  reconciler: {
    intervalMs: number;
    firstCheckMs: number;
    maxBackoffMs: number;
    checksPerSecond: number;
    leaseMs: number;
    creatingGraceMs: number;
    expiryMarginMs: number;
  };
  /** The game processes' API client options. */
  api: { timeoutMs: number; maxRetries: number; retry: Record<string, number> };
  chaos: ChaosOptions;
  wallet: Omit<WalletOptions, 'expiresInMs'>;
  /** A player gives up waiting for an answer after this long. */
  opTimeoutMs: number;
  /** How late past its grace or deadline a `creating` or `unknown` may end. */
  latenessMs: number;
  /** Moves recorded this long before a process kill may have lost their events with it. */
  killWindowMs: number;
  /** After the last op and the last deadline, how long the run may take to end everything. */
  settleMs: number;
  /** Progress lines; default silent. */
  log: (line: string) => void;
}

/** The defaults for `ops` operations: more players for more ops. */
export function soakOptions(overrides: Partial<SoakOptions> & { ops: number }): SoakOptions {
  const ops = overrides.ops;
  const long = ops > 1_000;
  const roomsPerProcess = overrides.roomsPerProcess ?? (long ? 8 : 4);
  const playersPerRoom = overrides.playersPerRoom ?? 3;
  const players = 3 * roomsPerProcess * playersPerRoom;
  const mix = overrides.mix ?? { reward: 0.4, fee: 0.35, spend: 0.25 };
  return {
    seed: Date.now() % 1_000_000,
    processes: 3,
    roomsPerProcess,
    playersPerRoom,
    opsPerSecond: long ? 150 : 40,
    mix,
    expiresIn: 10,
    // Enough for most spends; the last ones of a busy player run short (refused, not debited).
    pointsPerPlayer: Math.round((ops / players) * mix.spend * 25),
    killProcessAt: 0.35,
    ledger: 'redis',
    killRedisAt: 0.65,
    redisDownMs: 800,
    reconciler: {
      intervalMs: 100,
      firstCheckMs: 1_000,
      maxBackoffMs: 2_000,
      checksPerSecond: 200,
      leaseMs: 5_000,
      creatingGraceMs: 1_500,
      expiryMarginMs: 1_000,
    },
    api: {
      // Longer than the grace period, so that some create answers come after it.
      timeoutMs: 3_000,
      maxRetries: 2,
      retry: { baseDelayMs: 10, maxDelayMs: 100, maxRetryAfterMs: 1_500 },
    },
    chaos: { faultsPerSecond: long ? 15 : 10, maxActive: 6, weatherMs: 1_500 },
    wallet: { payRate: 0.75, lateRate: 0.05, secondRate: 0.1, maxDelayMs: 3_000 },
    opTimeoutMs: 30_000,
    latenessMs: 8_000,
    killWindowMs: 1_000,
    settleMs: 20_000,
    log: () => {},
    ...overrides,
  };
}

/** One op as the runner saw it. */
export interface OpRecord extends OpResult {
  node: string;
  incarnation: number;
}

export interface Crash {
  what: 'game process' | 'redis' | 'postgres';
  node?: string;
  at: number;
  /** Ops sent to the process and not yet answered when it died. */
  opsInFlight?: number;
  /** Intents of its rooms still `creating` right after it died. */
  creatingLeft?: number;
  /** Until it served again, ms. */
  downMs: number;
}

/** Everything a run saw; soak/report.ts turns it into figures. */
export interface SoakRun {
  options: SoakOptions;
  ops: OpRecord[];
  intents: Intent[];
  reports: readonly Report[];
  crashes: Crash[];
  checks: Check[];
  cluster: Cluster;
  chaos: Chaos;
  wallets: Wallets;
  players: Player[];
  points: PointBalance[];
  times: { start: number; opsStart: number; opsEnd: number; settled: number | null; end: number };
}

export interface SoakResult {
  ok: boolean;
  seed: number;
  figures: Figure[];
  checks: Check[];
  /** What the game processes printed on stderr (their errors), for a failure's report. */
  output: string;
}

const CURRENCY = 'USDZ';

export async function runSoak(input: Partial<SoakOptions> & { ops: number }): Promise<SoakResult> {
  const o = soakOptions(input);
  const random = new Random(o.seed);
  const start = Date.now();
  o.log(
    `soak: ${o.ops} ops, seed ${o.seed}; starting redis${o.ledger === 'postgres' ? ', postgresql' : ''}, the emulator and ${o.processes} game processes`,
  );
  const cluster = await Cluster.start({
    processes: o.processes,
    reconciler: o.reconciler,
    lightning: { api: o.api, breaker: { failures: 0 } },
    lingerMs: 600_000,
    ledger: o.ledger,
  });
  const redis: Redis = cluster.redis.client();
  redis.on('error', () => {});
  const pool = cluster.postgres?.pool({ max: 8 });
  const ledger: LedgerStore = pool ? new PostgresLedger(pool) : new RedisLedger(redis);
  try {
    return await soak(o, random, cluster, redis, ledger, pool, start);
  } finally {
    await ledger.close();
    await pool?.end();
    redis.disconnect();
    await cluster.stop();
  }
}

async function soak(
  o: SoakOptions,
  random: Random,
  cluster: Cluster,
  redis: Redis,
  ledger: LedgerStore,
  pool: pg.Pool | undefined,
  start: number,
): Promise<SoakResult> {
  const { emulator } = cluster;
  const control = emulator.control;
  const players: Player[] = [];
  const points: PointBalance[] = [];
  const ops: OpRecord[] = [];
  const crashes: Crash[] = [];
  const inflight = new Map<string, number>();
  const loops: Promise<void>[] = [];
  let issued = 0;
  let nextPlayer = 0;

  const wallets = new Wallets(emulator, random, { ...o.wallet, expiresInMs: o.expiresIn * 1000 });
  const chaos = new Chaos(emulator, random, o.chaos);
  const totalPlayers = o.processes * o.roomsPerProcess * o.playersPerRoom;
  const thinkMs = (totalPlayers / o.opsPerSecond) * 1000;

  const amount = (kind: OpKind) =>
    kind === 'reward'
      ? random.int(10, 60) * 1_000
      : kind === 'fee'
        ? random.int(1, 30) * 1_000
        : random.int(1, 40);

  let onIssued = () => {};
  const loop = async (player: Player, node: Node) => {
    while (player.connected && issued < o.ops) {
      issued++;
      onIssued();
      const kind = random.weighted(o.mix);
      const incarnation = node.incarnation;
      inflight.set(node.name, (inflight.get(node.name) ?? 0) + 1);
      const result = await player.op(kind, amount(kind), o.expiresIn, o.opTimeoutMs);
      inflight.set(node.name, (inflight.get(node.name) ?? 1) - 1);
      ops.push({ ...result, node: node.name, incarnation });
      await pause(random.int(Math.round(thinkMs * 0.5), Math.round(thinkMs * 1.5)));
    }
  };

  /** New rooms on the node, each with its players, who start asking at once. */
  const populate = async (node: Node) => {
    const rooms = await cluster.createRooms(node, o.roomsPerProcess);
    const joined = await Promise.all(
      rooms.flatMap((roomId) =>
        Array.from({ length: o.playersPerRoom }, async () => {
          const playerId = `player-${++nextPlayer}`;
          const userId = control.createUser({ email: emailOf(playerId), referenceId: playerId });
          control.setPoints(userId, CURRENCY, o.pointsPerPlayer);
          points.push({ playerId, userId, initial: o.pointsPerPlayer, now: o.pointsPerPlayer });
          return Player.join(node.process.url, node.name, roomId, playerId);
        }),
      ),
    );
    players.push(...joined);
    return joined;
  };

  for (const node of cluster.nodes) await populate(node);
  o.log(`soak: ${players.length} players in ${o.processes * o.roomsPerProcess} rooms; asking`);

  const look = setInterval(() => wallets.look(players), 100);
  chaos.start();
  const opsStart = Date.now();

  // The two crashes, one after the other, when the ops reach their marks.
  let crashed = Promise.resolve();
  let processKilled = false;
  let redisKilled = false;
  onIssued = () => {
    if (!processKilled && issued >= o.ops * o.killProcessAt) {
      processKilled = true;
      crashed = crashed.then(() => killProcess(cluster.nodes.at(-1) as Node));
    }
    if (!redisKilled && issued >= o.ops * o.killRedisAt) {
      redisKilled = true;
      crashed = crashed.then(() => killRedis());
    }
  };

  const killProcess = async (node: Node) => {
    // Creates in flight: slow the next creates down (the service still performs them), and
    // wait until the victim's players have a few ops out.
    for (const path of ['/v0/withdrawal-requests', '/v0/static-charges']) {
      chaos.add('latency', 'create (kill)', { method: 'POST', path, latencyMs: 1_000, times: 6 });
    }
    await eventually(() => (inflight.get(node.name) ?? 0) >= 3, 5_000, 'ops in flight').catch(
      () => {},
    );
    const opsInFlight = inflight.get(node.name) ?? 0;
    const at = Date.now();
    await cluster.kill(node);
    let creatingLeft = 0;
    for (const roomId of node.rooms) {
      creatingLeft += (await ledger.openByRoom(roomId)).filter(
        (i) => i.status === 'creating',
      ).length;
    }
    o.log(
      `soak: SIGKILLed ${node.name} with ${opsInFlight} ops in flight, ${creatingLeft} creating`,
    );
    await cluster.restart(node);
    crashes.push({
      what: 'game process',
      node: node.name,
      at,
      opsInFlight,
      creatingLeft,
      downMs: Date.now() - at,
    });
    const joined = await populate(node);
    o.log(`soak: ${node.name} is back with ${joined.length} new players`);
    for (const player of joined) loops.push(loop(player, node));
  };

  const killRedis = async () => {
    const at = Date.now();
    const server = cluster.postgres ?? cluster.redis;
    const what = cluster.postgres ? 'postgres' : 'redis';
    await server.kill();
    await pause(o.redisDownMs);
    await server.start();
    crashes.push({ what, at, downMs: Date.now() - at });
    o.log(`soak: ${what} SIGKILLed and started again after ${Date.now() - at} ms`);
  };

  for (const player of [...players]) loops.push(loop(player, nodeOf(cluster, player)));
  for (let seen = 0; seen < loops.length; ) {
    seen = loops.length;
    await Promise.all(loops);
  }
  await crashed;
  const opsEnd = Date.now();
  chaos.stop();
  o.log(
    `soak: ${ops.length} ops answered in ${((opsEnd - opsStart) / 1000).toFixed(1)} s; waiting for every intent to end`,
  );

  // Every intent ends by its deadline plus the margin; the wallets' late acts come after it.
  const ids = points.map((p) => p.playerId);
  const openCount = async () => {
    const open = await Promise.all(ids.map((id) => ledger.openByPlayer(id)));
    return open.reduce((sum, list) => sum + list.length, 0);
  };
  const settleBy = opsEnd + o.expiresIn * 1000 + o.reconciler.expiryMarginMs + o.settleMs;
  let settled: number | null = null;
  try {
    await eventually(
      async () => wallets.waiting === 0 && (await openCount()) === 0,
      Math.max(0, settleBy - Date.now()),
      'every intent to end',
    );
    settled = Date.now();
  } catch {
    o.log(`soak: ${await openCount()} intents still open at the deadline`);
  }
  clearInterval(look);
  wallets.stop();
  await control.callbacks.idle();

  // Rooms that live must have heard every end; wait for their hooks, then for every report.
  const liveRooms = new Set(cluster.nodes.filter((n) => n.process.alive).flatMap((n) => n.rooms));
  let intents = await readLedger(redis, ledger, pool);
  const hooked = () => {
    const of = (event: string) =>
      new Set(cluster.reports.filter((r) => r.event === event).map((r) => r.id));
    const heard = of('room');
    // An end nobody reported was written by a process that died: its message died too.
    const reported = of('settled');
    return intents.every(
      (i) =>
        i.roomId === null ||
        !liveRooms.has(i.roomId) ||
        !isEnded(i) ||
        !reported.has(i.id) ||
        heard.has(i.id),
    );
  };
  await eventually(hooked, 10_000, 'room hooks').catch(() => {});
  await cluster.sync();
  intents = await readLedger(redis, ledger, pool);

  for (const p of points) p.now = control.points(p.userId, CURRENCY);
  const records: Records = {
    intents,
    withdrawalRequests: control.withdrawalRequests(),
    staticCharges: control.staticCharges().map((c) => ({ ...c, amount: c.minAmount })),
    transfers: control.transfers(),
    points,
    reports: cluster.reports,
    liveRooms,
    kills: crashes.filter((c) => c.what === 'game process').map((c) => c.at),
    crashes,
    settings: {
      creatingGraceMs: o.reconciler.creatingGraceMs,
      expiryMarginMs: o.reconciler.expiryMarginMs,
      resendMs: 2_000,
      latenessMs: o.latenessMs,
      killWindowMs: o.killWindowMs,
    },
  };
  const checks = checkInvariants(records);
  // Screens: each connected player sees exactly its room's intents of its own, as the ledger has them.
  const screens = await screensAgree(players, intents, lostInKill(records));
  checks.push(screens, {
    name: "no player saw another player's entry",
    checked: players.length,
    violations: foreignSightings(wallets, intents),
  });
  await Promise.all(players.map((p) => p.leave()));
  const run: SoakRun = {
    options: o,
    ops,
    intents,
    reports: cluster.reports,
    crashes,
    checks,
    cluster,
    chaos,
    wallets,
    players,
    points,
    times: { start, opsStart, opsEnd, settled, end: Date.now() },
  };
  return {
    ok: checks.every((c) => c.violations.length === 0),
    seed: o.seed,
    figures: soakFigures(run),
    checks,
    output: cluster.output(),
  };
}

function nodeOf(cluster: Cluster, player: Player): Node {
  const node = cluster.nodes.find((n) => n.name === player.node);
  if (!node) throw new Error(`no node ${player.node}`);
  return node;
}

function isEnded(intent: Intent): boolean {
  return intent.status === 'completed' || intent.status === 'expired' || intent.status === 'failed';
}

/** Think time of a player, or the length of an outage: a pace, not a wait for something. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Every intent in the ledger, read one by one (the soak's ledger holds nothing else). */
async function readLedger(
  redis: Redis,
  ledger: LedgerStore,
  pool: pg.Pool | undefined,
): Promise<Intent[]> {
  const ids: string[] = [];
  if (pool) {
    const { rows } = await pool.query<{ id: string }>('SELECT id FROM lightning.intents');
    for (const row of rows) ids.push(row.id);
  } else {
    const prefix = `${(ledger as RedisLedger).prefix}intent:`;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) ids.push(key.slice(prefix.length));
    } while (cursor !== '0');
  }
  const intents: Intent[] = [];
  for (let k = 0; k < ids.length; k += 200) {
    const batch = await Promise.all(ids.slice(k, k + 200).map((id) => ledger.get(id)));
    for (const intent of batch) if (intent) intents.push(intent);
  }
  return intents;
}

/**
 * What each connected player's client shows agrees with the ledger: every intent of that
 * player in that room is on the screen with the ledger's status, and nothing else is.
 */
async function screensAgree(
  players: Player[],
  intents: Intent[],
  lost: ReadonlySet<string>,
): Promise<Check> {
  let excused = 0;
  const connected = players.filter((p) => p.connected);
  const mismatches = () => {
    const found: string[] = [];
    excused = 0;
    for (const player of connected) {
      const own = intents.filter(
        (i) => i.roomId === player.roomId && i.playerId === player.playerId,
      );
      const shown = new Map(player.entries().map((e) => [e.id, e]));
      for (const intent of own) {
        const entry = shown.get(intent.id);
        if (lost.has(intent.id) && entry?.status !== intent.status) {
          excused++;
          shown.delete(intent.id);
          continue;
        }
        if (!entry)
          found.push(`${player.playerId} never saw ${intent.kind} ${intent.id} (${intent.status})`);
        else if (entry.status !== intent.status)
          found.push(
            `${player.playerId} sees ${intent.id} ${entry.status}, the ledger ${intent.status}`,
          );
        shown.delete(intent.id);
      }
      for (const extra of shown.keys())
        found.push(`${player.playerId} sees ${extra}, not in the ledger`);
    }
    return found;
  };
  let found = mismatches();
  await eventually(
    () => {
      found = mismatches();
      return found.length === 0;
    },
    5_000,
    'screens',
  ).catch(() => {});
  return {
    name: "each player's screen shows its intents as the ledger ends them",
    checked: connected.length,
    violations: found,
    excused,
  };
}
