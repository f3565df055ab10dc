/**
 * The fault soak: thousands of rewards, entry fees, point spends and match steps asked for by
 * real SDK clients in many rooms of three game processes that share one PostgreSQL ledger and
 * one Redis (presence), against one emulator that answers 5xx and 429, hangs, processes and
 * then drops or hangs the connection, and drops, duplicates, delays and reorders its callbacks.
 * Midway one game process is SIGKILLed with creates in flight and started again (its open
 * matches time out); later the ledger's PostgreSQL is SIGKILLed and started again. Players'
 * wallets pay and claim from the codes on their screens; some players have a Lightning
 * address, so their payouts are payments.
 *
 * When the ops are done: closing time (every live room decides its current match), then every
 * intent gets time to end (their short deadlines, the reconciler's short grace period and
 * margin); an operator resolves the address payments whose answer was lost, from the service's
 * records; then time jumps past the match codes' deadlines (a minute at least) for the emulator
 * and every process at once, the late claims are made, and the unclaimed codes expire. Then the
 * invariants of soak/invariants.ts and soak/money.ts are checked against the emulator's records,
 * the ledger and its journal, and every figure is returned for printing. `runSoak` never throws
 * for a broken invariant: the result says `ok: false`.
 *
 * Cost: a few seconds of start-up, then about `ops / opsPerSecond` seconds of load, then the
 * entries' lifetime (10 s) and the margin while the last ones end, a second or two per time
 * jump, and the reading of the journal.
 */
import type pg from 'pg';
import { LN_ADDRESS_DOMAIN } from '../src/emulator/index.js';
import type { Intent } from '../src/ledger/intent.js';
import { fromPot } from '../src/ledger/journal.js';
import { PostgresLedger } from '../src/ledger/postgres.js';
import type { LedgerStore } from '../src/ledger/store.js';
import type { Report } from '../test/cluster/processes.js';
import { eventually } from '../test/support/eventually.js';
import { readBooks, readLedger } from './books.js';
import { Chaos, type ChaosOptions } from './chaos.js';
import { Cluster, type Node } from './cluster.js';
import { type Figure, seconds } from './figures.js';
import {
  type Check,
  checkInvariants,
  lostInKill,
  type PointBalance,
  type Records,
} from './invariants.js';
import { type Books, payoutsHeld, refundsAndPots, reissuesDue } from './money.js';
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
  /** A match's entry fee, in sats: the least and the most. */
  matchFeeSats: [number, number];
  /** Share of players with a Lightning address (their payouts and refunds are payments). */
  addressShare: number;
  /** Of those, the shares whose address does not resolve, and whose payments fail after acceptance. */
  addressInvalidShare: number;
  addressFailShare: number;
  pointsPerPlayer: number;
  /** When, as a share of the ops asked for, a game process is SIGKILLed (then restarted). */
  killProcessAt: number;
  /** When the ledger's PostgreSQL is SIGKILLed; started again after `ledgerDownMs`. */
  killLedgerAt: number;
  ledgerDownMs: number;
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
  /** After each time jump, how long the run may take to end what fell due. */
  jumpSettleMs: number;
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
  const mix = overrides.mix ?? { reward: 0.25, fee: 0.2, spend: 0.15, match: 0.25, tab: 0.15 };
  return {
    seed: Date.now() % 1_000_000,
    processes: 3,
    roomsPerProcess,
    playersPerRoom,
    opsPerSecond: long ? 150 : 40,
    mix,
    expiresIn: 10,
    // At least 20 sats: a share of a two-fee pot stays above the service's 10-sat withdrawal.
    matchFeeSats: [20, 50],
    addressShare: 0.3,
    addressInvalidShare: 0.15,
    addressFailShare: 0.2,
    // Enough for most spends; the last ones of a busy player run short (refused, not debited).
    pointsPerPlayer: Math.round((ops / players) * mix.spend * 25),
    killProcessAt: 0.35,
    killLedgerAt: 0.65,
    ledgerDownMs: 800,
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
    wallet: {
      payRate: 0.75,
      lateRate: 0.05,
      secondRate: 0.1,
      maxDelayMs: 3_000,
      matchLateRate: 0.15,
      potLateRate: 0.2,
    },
    opTimeoutMs: 30_000,
    latenessMs: 8_000,
    killWindowMs: 1_000,
    settleMs: 20_000,
    jumpSettleMs: 20_000,
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
  what: 'game process' | 'postgres';
  node?: string;
  at: number;
  /** Ops sent to the process and not yet answered when it died. */
  opsInFlight?: number;
  /** Intents of its rooms still `creating` right after it died. */
  creatingLeft?: number;
  /** Until it served again, ms. */
  downMs: number;
}

/** What the run did after the ops: closing time, the operator, the time jumps. */
export interface Endgame {
  /** What each live room did with its current match at closing time (`settle`, `abort`, errors). */
  closings: string[];
  /** Unknown address payments an operator resolved from the service's records. */
  resolved: { id: string; status: string; note: string }[];
  /** Each jump of the clocks: from and to, in the jumped clocks' time (epoch ms). */
  jumps: { from: number; to: number }[];
  /** Match codes claimed after their deadline (once time had passed it). */
  lateClaims: number;
  /** When each step of the end was done, ms after the last op. */
  steps: { what: string; ms: number }[];
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
  endgame: Endgame;
  books: Books;
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
    `soak: ${o.ops} ops, seed ${o.seed}; starting redis, postgresql, the emulator and ${o.processes} game processes`,
  );
  const cluster = await Cluster.start({
    processes: o.processes,
    reconciler: o.reconciler,
    // The live audit at the soak's pace: an ended match whose escrow still holds money (its
    // process killed before it paid again) is paid by whichever process audits next.
    lightning: {
      api: o.api,
      breaker: { failures: 0 },
      audit: { intervalMs: 1_000, settleMs: 2_000 },
    },
    lingerMs: 600_000,
  });
  const pool = cluster.postgres.pool({ max: 8 });
  const ledger: LedgerStore = new PostgresLedger(pool);
  try {
    return await soak(o, random, cluster, ledger, pool, start);
  } finally {
    await ledger.close();
    await pool.end();
    await cluster.stop();
  }
}

async function soak(
  o: SoakOptions,
  random: Random,
  cluster: Cluster,
  ledger: LedgerStore,
  pool: pg.Pool,
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
  /** Every room ever created, the killed process's included. */
  const rooms: string[] = [];
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
        : kind === 'match'
          ? random.int(...o.matchFeeSats) * 1_000
          : kind === 'tab'
            ? random.int(5, 30) * 1_000
            : random.int(1, 40);

  let onIssued = () => {};
  const loop = async (player: Player, node: Node) => {
    while (player.connected && issued < o.ops) {
      issued++;
      onIssued();
      const kind = random.weighted(o.mix);
      const incarnation = node.incarnation;
      inflight.set(node.name, (inflight.get(node.name) ?? 0) + 1);
      const dice =
        kind === 'match'
          ? [random.next(), random.next(), random.next()]
          : kind === 'tab'
            ? [random.next()]
            : [];
      const result = await player.op(kind, amount(kind), o.expiresIn, o.opTimeoutMs, dice);
      inflight.set(node.name, (inflight.get(node.name) ?? 1) - 1);
      ops.push({ ...result, node: node.name, incarnation });
      await pause(random.int(Math.round(thinkMs * 0.5), Math.round(thinkMs * 1.5)));
    }
  };

  /** Some players have a Lightning address; some of those cannot be paid (refused, or failing). */
  const addressOf = (playerId: string): string | undefined => {
    if (!random.chance(o.addressShare)) return undefined;
    const address = `${playerId}@${LN_ADDRESS_DOMAIN}`;
    const roll = random.next();
    if (roll < o.addressInvalidShare) control.setLnAddress(address, { valid: false });
    else if (roll < o.addressInvalidShare + o.addressFailShare)
      control.setLnAddress(address, { failPayments: true });
    return address;
  };

  /** New rooms on the node, each with its players, who start asking at once. */
  const populate = async (node: Node) => {
    const created = await cluster.createRooms(node, o.roomsPerProcess);
    rooms.push(...created);
    const joined = await Promise.all(
      created.flatMap((roomId) =>
        Array.from({ length: o.playersPerRoom }, async () => {
          const playerId = `player-${++nextPlayer}`;
          const userId = control.createUser({ email: emailOf(playerId), referenceId: playerId });
          control.setPoints(userId, CURRENCY, o.pointsPerPlayer);
          points.push({ playerId, userId, initial: o.pointsPerPlayer, now: o.pointsPerPlayer });
          return Player.join(node.process.url, node.name, roomId, playerId, addressOf(playerId));
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
  let ledgerKilled = false;
  onIssued = () => {
    if (!processKilled && issued >= o.ops * o.killProcessAt) {
      processKilled = true;
      crashed = crashed.then(() => killProcess(cluster.nodes.at(-1) as Node));
    }
    if (!ledgerKilled && issued >= o.ops * o.killLedgerAt) {
      ledgerKilled = true;
      crashed = crashed.then(() => killLedger());
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

  const killLedger = async () => {
    const at = Date.now();
    await cluster.postgres.kill();
    await pause(o.ledgerDownMs);
    await cluster.postgres.start();
    crashes.push({ what: 'postgres', at, downMs: Date.now() - at });
    o.log(`soak: postgres SIGKILLed and started again after ${Date.now() - at} ms`);
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

  // Closing time: every live room decides its current match (settled among those who paid, or
  // aborted); abandoned matches and the killed process's are left to time out.
  const endgame: Endgame = {
    closings: [],
    resolved: [],
    jumps: [],
    lateClaims: 0,
    steps: [],
  };
  const closeMatches = async () => {
    const answers = await Promise.all(
      cluster.nodes
        .filter((n) => n.process.alive)
        .map((n) =>
          n.process
            .request<(string | null)[]>({ cmd: 'closeMatches' })
            .catch((err: Error) => [`error ${err.message}`]),
        ),
    );
    endgame.closings.push(...answers.flat().filter((a): a is string => a !== null));
  };
  await closeMatches();

  // What may stay open until time passes: a match's claim code (a minute at least: pending, or
  // unknown until its deadline), and the match that waits for one; an address payment whose
  // answer was lost stays unknown until an operator looks.
  const openIntents = async () =>
    (await Promise.all(rooms.map((roomId) => ledger.openByRoom(roomId)))).flat();
  const waitsForTime = (i: Intent) =>
    fromPot(i) && i.kind === 'reward' && (i.status === 'pending' || i.status === 'unknown');
  const forOperator = (i: Intent) => i.kind === 'payment' && i.status === 'unknown';
  const quiet = (open: Intent[]) =>
    open.every(
      (i) =>
        waitsForTime(i) ||
        forOperator(i) ||
        (i.kind === 'match' &&
          i.status === 'pending' &&
          open.some((j) => j.groupId === i.id && waitsForTime(j))),
    );
  /** Waits until only what waits for time or an operator is open; false if `until` came first. */
  /**
   * Waits until `done` holds of the open intents, the wallets have acted, and no payout or
   * refund that ended unpaid still waits to be issued again (a read of the whole ledger, made
   * only once the rest holds, at most five times a second); false if `until` came first.
   */
  const settleUntil = async (label: string, until: number, done = quiet): Promise<boolean> => {
    let open: Intent[] = [];
    let closedAt = Date.now();
    let scannedAt = 0;
    let due: Intent[] = [];
    const reissued = async () => {
      if (Date.now() - scannedAt < 200) return false;
      scannedAt = Date.now();
      due = reissuesDue(await readLedger(ledger, pool));
      return due.length === 0;
    };
    try {
      await eventually(
        async () => {
          open = await openIntents();
          // A room whose decision failed (an error at closing time) is asked again.
          if (
            Date.now() - closedAt > 3_000 &&
            open.some((i) => i.kind === 'match' && i.status === 'creating')
          ) {
            closedAt = Date.now();
            await closeMatches();
          }
          return wallets.waiting === 0 && done(open) && (await reissued());
        },
        Math.max(0, until - Date.now()),
        label,
      );
      return true;
    } catch {
      o.log(
        `soak: ${label}: ${open.length} intents still open (${[...new Set(open.map((i) => `${i.kind} ${i.status}`))].join(', ')}), ${due.length} attempts not yet issued again`,
      );
      return false;
    }
  };
  // The operator: an address payment whose answer was lost is resolved from the service's records.
  const operate = async () => {
    const payments = control.payments();
    for (const intent of (await openIntents()).filter(forOperator)) {
      const token = `/callbacks/${intent.callbackToken}`;
      const payment = payments.find((p) => p.callbackUrl?.endsWith(token) === true);
      if (payment && payment.status !== 'completed' && payment.status !== 'failed') continue;
      const status = payment?.status === 'completed' ? 'completed' : 'failed';
      const note = payment
        ? `the service's payment ${payment.id} is ${payment.status}`
        : 'the service holds no payment of it';
      try {
        await cluster.request({ cmd: 'resolve', id: intent.id, status, note });
        endgame.resolved.push({ id: intent.id, status, note });
      } catch (err) {
        o.log(`soak: the operator could not resolve ${intent.id}: ${(err as Error).message}`);
      }
    }
  };

  const settleBy = opsEnd + o.expiresIn * 1000 + o.reconciler.expiryMarginMs + o.settleMs;
  let settled: number | null = null;
  const phase = (what: string) => {
    endgame.steps.push({ what, ms: Date.now() - opsEnd });
    o.log(`soak: ${what} ${seconds(Date.now() - opsEnd)} after the last op`);
  };
  let calm = await settleUntil('every intent to end or wait for time', settleBy);
  phase('all but the match codes ended');
  await operate();
  calm =
    calm && (await settleUntil("the operator's resolutions to end", Date.now() + o.jumpSettleMs));

  phase('the operator resolved what was left unknown');
  // Before time passes: each settled match's winners hold their codes, listed by claims().
  const before = await readLedger(ledger, pool);
  const early: Check[] = [
    payoutsHeld(before, 'before the deadlines'),
    ...refundsAndPots(before, [], 'before the deadlines').slice(0, 1),
    await claimsListed(cluster, ledger, before),
  ];

  // Time passes the match codes' deadlines, for the emulator and every process at once; the late
  // claims are made; the unclaimed codes expire, lost ones are issued again (up to 3 attempts).
  const margin = o.reconciler.expiryMarginMs;
  const overdue = (i: Intent) =>
    waitsForTime(i) && (i.expiresAt ?? 0) + margin <= cluster.clock.now();
  for (let round = 0; round < 4; round++) {
    const waiting = (await openIntents()).filter(waitsForTime);
    if (waiting.length === 0) break;
    const from = cluster.clock.now();
    const to = Math.max(from, ...waiting.map((i) => (i.expiresAt ?? 0) + margin + 1_000));
    await cluster.jump(to - from);
    endgame.jumps.push({ from, to });
    endgame.lateClaims += wallets.actAfterDeadline();
    o.log(`soak: time jumped ${seconds(to - from)} past ${waiting.length} match codes' deadlines`);
    const ended = await settleUntil(
      `time jump ${round + 1}`,
      Date.now() + o.jumpSettleMs,
      (open) => quiet(open) && !open.some(overdue),
    );
    calm = ended && calm;
    await operate();
    phase(`jump ${round + 1} settled`);
  }
  if (
    await settleUntil(
      'every intent to end',
      Date.now() + o.jumpSettleMs,
      (open) => open.length === 0,
    )
  ) {
    if (calm) settled = Date.now();
  }
  phase('every intent ended');
  clearInterval(look);
  wallets.stop();
  await control.callbacks.idle();

  // Rooms that live must have heard every end; wait for their hooks, then for every report.
  const liveRooms = new Set(cluster.nodes.filter((n) => n.process.alive).flatMap((n) => n.rooms));
  let intents = await readLedger(ledger, pool);
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
  // The game's own audit, run now by every live process: it must find what the soak finds.
  const audits = await Promise.all(
    cluster.nodes
      .filter((n) => n.process.alive)
      .map((n) =>
        n.process
          .request<string[]>({ cmd: 'audit' })
          .catch((err: Error) => [`the audit failed: ${err.message}`]),
      ),
  );
  await cluster.sync();
  intents = await readLedger(ledger, pool);

  for (const p of points) p.now = control.points(p.userId, CURRENCY);
  const books = await readBooks(ledger, intents);
  if (process.env.SOAK_DEBUG_DIR) {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${process.env.SOAK_DEBUG_DIR}/intents.json`, JSON.stringify(intents, null, 1));
    writeFileSync(`${process.env.SOAK_DEBUG_DIR}/reports.json`, JSON.stringify(cluster.reports));
    writeFileSync(
      `${process.env.SOAK_DEBUG_DIR}/endgame.json`,
      JSON.stringify({ endgame, offset: cluster.clock.offset, opsEnd }),
    );
  }
  const records: Records = {
    intents,
    withdrawalRequests: control.withdrawalRequests(),
    staticCharges: control.staticCharges().map((c) => ({ ...c, amount: c.minAmount })),
    payments: control.payments(),
    books,
    transfers: control.transfers(),
    points,
    reports: cluster.reports,
    liveRooms,
    kills: crashes.filter((c) => c.what === 'game process').map((c) => c.at),
    crashes,
    jumps: endgame.jumps,
    settings: {
      creatingGraceMs: o.reconciler.creatingGraceMs,
      expiryMarginMs: o.reconciler.expiryMarginMs,
      resendMs: 2_000,
      latenessMs: o.latenessMs,
      killWindowMs: o.killWindowMs,
    },
  };
  const checks = [...early, ...checkInvariants(records)];
  checks.push({
    name: 'no game process died but the one the soak killed',
    checked: cluster.nodes.length,
    violations: cluster.deaths(),
  });
  const during = cluster.reports.filter((r) => r.event === 'audit');
  // A true alarm the operator then answered (a winner's address payment left unknown) is what
  // the audit is for: excused, and counted; anything else it found is a violation.
  const found = [...new Set([...during.flatMap((r) => r.findings as string[]), ...audits.flat()])];
  const answered = (f: string) => endgame.resolved.some((r) => f.includes(r.id));
  // A time jump makes every code whose deadline it crossed overdue in an instant, by up to the
  // jump: an audit that runs before the reconcilers caught up sees them still unknown. The
  // ledger's own check above ("no unknown past its deadline") measures those without the jump.
  const jumpedPast = (f: string) => {
    const intent = intents.find((i) => f.includes(`${i.id} is still unknown`));
    const deadline = (intent?.expiresAt ?? Number.NaN) + o.reconciler.expiryMarginMs;
    return endgame.jumps.some((j) => deadline >= j.from && deadline <= j.to);
  };
  const excused = found.filter((f) => !answered(f) && jumpedPast(f));
  checks.push({
    name: `the game's live audit found nothing but what the operator then resolved (${found.filter(answered).length} such) or a time jump made overdue (${excused.length} such)`,
    checked: audits.length + during.length,
    violations: found.filter((f) => !answered(f) && !jumpedPast(f)),
  });
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
    endgame,
    books,
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

/**
 * Every match claim code still pending is among `lightning.books.claims(playerId)` of its player, as a
 * lobby or a web page would list it.
 */
async function claimsListed(
  cluster: Cluster,
  ledger: LedgerStore,
  intents: Intent[],
): Promise<Check> {
  const name = "every pending match code is listed by its player's claims()";
  const codes = intents.filter((i) => fromPot(i) && i.kind === 'reward' && i.status === 'pending');
  const playerIds = [...new Set(codes.map((i) => i.playerId))];
  let listed: Record<string, string[]> = {};
  try {
    if (playerIds.length > 0) listed = await cluster.request({ cmd: 'claims', playerIds });
  } catch (err) {
    return {
      name,
      checked: codes.length,
      violations: [`claims() failed: ${(err as Error).message}`],
    };
  }
  // Players' wallets still claim while the lists are read: a code missing from its list that
  // is no longer pending when read again was claimed (or lapsed) in between, and is not a miss.
  const violations: string[] = [];
  let movedMeanwhile = 0;
  for (const code of codes) {
    if ((listed[code.playerId] ?? []).includes(code.id)) continue;
    const now = await ledger.get(code.id);
    if (now !== null && now.status !== 'pending') movedMeanwhile++;
    else violations.push(`${code.playerId}'s claims() lacks ${code.id} (${now?.status ?? 'gone'})`);
  }
  const note = movedMeanwhile > 0 ? `${movedMeanwhile} claimed while the lists were read` : '';
  return { name, checked: codes.length, violations, ...(note ? { note } : {}) };
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
