/**
 * Many processes, one Redis and one PostgreSQL: three Colyseus processes (children,
 * fixtures/node.ts) share a real redis-server through RedisPresence and RedisDriver and a real
 * PostgreSQL through PostgresLedger, with the emulator (in this process) as the payments
 * service.
 *
 * Callback routing: process i gives the service `publicUrl` = process i+1's address, so every
 * callback lands on a process that does not host the intent's room (a ring, standing in for a
 * load balancer that may pick any process). The receiver verifies the callback against the
 * API, wins the ledger's compare-and-set, emits `settled`, and publishes on the room's
 * presence channel; the room's own process hears it through Redis.
 *
 * Order matters: the tests share the cluster, and the last one kills a process.
 */
import assert from 'node:assert/strict';
import { request } from 'undici';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import { eventually } from '../support/eventually.js';
import { needPostgres, needRedis } from '../support/needs.js';
import { freePort } from '../support/ports.js';
import { type PostgresServer, startPostgres } from '../support/postgres.js';
import { type RedisServer, startRedis } from '../support/redis.js';
import { GameProcess, type Report } from './processes.js';

/** Polls soon and often, so that a dropped callback is recovered within about a second. */
const RECONCILER = {
  intervalMs: 100,
  firstCheckMs: 1_000,
  maxBackoffMs: 1_000,
  checksPerSecond: 200,
  leaseMs: 2_000,
};

interface Started {
  id: string;
  kind: 'reward' | 'entryFee';
  remoteId: string;
  roomId: string;
  callbackToken: string;
  /** Index of the process hosting the room. */
  home: number;
}

describe('cluster: three processes on one Redis and one PostgreSQL', function () {
  this.timeout(60_000);
  let redis: RedisServer;
  let pg: PostgresServer;
  let emulator: Emulator;
  let ledger: PostgresLedger;
  let nodes: GameProcess[] = [];
  const reports: Report[] = [];
  const rooms: string[] = [];

  before(async function () {
    this.timeout(40_000);
    needRedis(this);
    needPostgres(this);
    redis = await startRedis();
    pg = await startPostgres();
    emulator = await startEmulator();
    // Opened here first: the ledger's schema exists before the processes connect.
    ledger = new PostgresLedger(pg.url);
    await ledger.open();
    const ports = new Set<number>();
    while (ports.size < 3) ports.add(await freePort());
    const list = [...ports];
    nodes = await Promise.all(
      list.map((port, i) =>
        GameProcess.start(
          {
            name: `node${i}`,
            port,
            publicUrl: `http://127.0.0.1:${list[(i + 1) % 3]}`,
            redisUrl: redis.url,
            apiUrl: emulator.url,
            apiKey: emulator.apiKey,
            reconciler: RECONCILER,
            env: { LEDGER_URL: pg.url },
          },
          reports,
        ),
      ),
    );
    for (const node of nodes) rooms.push(await node.request<string>({ cmd: 'createRoom' }));
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') {
      for (const node of nodes) console.error(`--- ${node.name} output ---\n${node.output}`);
    }
  });

  after(async function () {
    this.timeout(20_000);
    await Promise.all(nodes.map((node) => node.kill()));
    await ledger?.close();
    await emulator?.close();
    await redis?.stop();
    await pg?.stop();
  });

  const of = (event: string, id: string) => reports.filter((r) => r.event === event && r.id === id);

  async function start(home: number, kind: Started['kind'], playerId: string): Promise<Started> {
    const node = nodes[home] as GameProcess;
    const intent = await node.request<Omit<Started, 'home'>>({
      cmd: kind,
      roomId: rooms[home],
      playerId,
      amountMsat: kind === 'reward' ? 20_000 : 10_000,
    });
    assert.ok(intent.remoteId, `${kind} on ${node.name} has no remote id`);
    return { ...intent, home };
  }

  /** Whether every lease a live process took on these intents has been given back. */
  function leasesReturned(ids: string[], alive: GameProcess[]): boolean {
    return alive.every((node) =>
      ids.every((id) => {
        const mine = reports.filter((r) => r.node === node.name);
        const claims = mine.filter((r) => r.event === 'claim' && r.ids?.includes(id)).length;
        const releases = mine.filter((r) => r.event === 'release' && r.id === id).length;
        return releases >= claims;
      }),
    );
  }

  /**
   * Waits, once every intent has ended, until nothing more about them can be on its way, so
   * that what a test counts afterwards is final:
   * - every callback the emulator sent has been answered (a process answers a callback only
   *   after applying it: `settled` reported, room told);
   * - no live process holds a lease on one of them (a check reports what it did, then its
   *   release), and none can take one again (ended intents are never due);
   * - every live process answers a `sync`: after the deliveries it had started, and behind
   *   every report it made before (its `published` messages too), on the same IPC channel;
   * - then each live room's process has heard every message a live process published for them
   *   (a process publishes only the moves of another process's rooms: its own rooms are
   *   handed theirs).
   */
  async function quiet(intents: Started[]): Promise<void> {
    const alive = nodes.filter((node) => node.alive);
    const ids = intents.map((s) => s.id);
    const living = new Set(alive.map((node) => node.name));
    await emulator.control.callbacks.idle();
    await eventually(
      async () => {
        if (!leasesReturned(ids, alive)) return false;
        await Promise.all(alive.map((node) => node.request({ cmd: 'sync' })));
        for (const s of intents) {
          const home = nodes[s.home] as GameProcess;
          if (!home.alive) continue;
          const published = reports.filter(
            (r) => r.event === 'published' && r.id === s.id && living.has(r.node),
          );
          const heard = reports.filter(
            (r) => r.event === 'message' && r.id === s.id && r.node === home.name,
          );
          if (heard.length < published.length) return false;
        }
        // A lease reported just before the sync answer may still be out.
        return leasesReturned(ids, alive);
      },
      10_000,
      () => 'the cluster to go quiet',
    );
  }

  /** The player's wallet: claims the reward or pays the fee at the emulator. */
  function pay(s: Started): void {
    const result =
      s.kind === 'reward'
        ? emulator.control.claimWithdrawal(s.remoteId)
        : emulator.control.payStaticCharge(s.remoteId);
    assert.equal((result as { status?: string }).status ?? 'OK', 'OK', JSON.stringify(result));
  }

  it('settles rewards and entry fees from every process through callbacks sent to another process', async () => {
    const started: Started[] = [];
    // Paid as soon as created, so that the callback comes long before the first re-read.
    for (let home = 0; home < 3; home++) {
      for (const [kind, player] of [
        ['reward', 'alice'],
        ['reward', 'bob'],
        ['entryFee', 'carol'],
      ] as const) {
        const s = await start(home, kind, `${player}-${home}`);
        pay(s);
        started.push(s);
      }
    }
    await eventually(
      () => started.every((s) => of('room', s.id).length > 0),
      10_000,
      'every room to hear its settlement',
    );
    await quiet(started);
    for (const s of started) {
      const receiver = nodes[(s.home + 1) % 3] as GameProcess;
      const settled = of('settled', s.id);
      assert.equal(settled.length, 1, `${s.id} settled ${settled.length} times`);
      assert.equal(settled[0]?.status, 'completed');
      assert.equal(settled[0]?.node, receiver.name, 'settled by the callback receiver');
      const heard = of('room', s.id);
      assert.deepEqual(
        heard.map((r) => [r.node, r.heardBy, r.status]),
        [[`node${s.home}`, s.roomId, 'completed']],
      );
      const callbacks = emulator.control
        .sentCallbacks()
        .filter((c) => c.resourceId === s.remoteId && c.outcome === 'delivered');
      assert.ok(callbacks.length >= 1);
      for (const c of callbacks) assert.ok(c.url.startsWith(`${receiver.url}/`), c.url);
    }
  });

  it('with callbacks dropped, the reconcilers settle everything, one process polling an intent at a time', async () => {
    emulator.control.callbacks.set({ drop: true });
    const started: Started[] = [];
    for (let home = 0; home < 3; home++) {
      for (let k = 0; k < 4; k++) started.push(await start(home, 'reward', `dave-${home}-${k}`));
      for (let k = 0; k < 2; k++) started.push(await start(home, 'entryFee', `erin-${home}-${k}`));
    }
    // Let every intent be polled while still open, a couple of times, before it is paid.
    const reads = (s: Started) =>
      emulator.control.count(
        'GET',
        `/v0/${s.kind === 'reward' ? 'withdrawal-requests' : 'static-charges'}/${s.remoteId}`,
      );
    await eventually(
      () => started.every((s) => reads(s) >= 2),
      10_000,
      'every intent to be polled twice while open',
    );
    for (const s of started) pay(s);
    await eventually(
      () => started.every((s) => of('settled', s.id).length > 0),
      15_000,
      'the reconcilers to settle everything',
    );
    await eventually(
      () => started.every((s) => of('room', s.id).length > 0),
      10_000,
      'every room to hear its settlement',
    );
    await quiet(started);

    let polls = 0;
    const pollers = new Set<string>();
    let movedBetweenProcesses = 0;
    for (const s of started) {
      assert.equal(of('settled', s.id).length, 1, `${s.id} settled more than once`);
      assert.equal(of('room', s.id).length, 1, `${s.id}: its room heard it once`);
      // Lease spans per process: from claimDue's answer to the start of release.
      const spans: { node: string; from: number; to: number }[] = [];
      for (const claim of reports.filter((r) => r.event === 'claim' && r.ids?.includes(s.id))) {
        const release = reports.find(
          (r) =>
            r.event === 'release' &&
            r.id === s.id &&
            r.node === claim.node &&
            (r.at as number) >= (claim.at as number),
        );
        assert.ok(release, `${claim.node} never released ${s.id}`);
        spans.push({ node: claim.node, from: claim.at as number, to: release.at as number });
      }
      spans.sort((a, b) => a.from - b.from);
      for (let k = 1; k < spans.length; k++) {
        assert.ok(
          (spans[k - 1]?.to as number) <= (spans[k]?.from as number),
          `${s.id} was polled by ${spans[k - 1]?.node} and ${spans[k]?.node} at once`,
        );
      }
      // Every re-read the service saw happened inside one process's lease.
      const path = `/v0/${s.kind === 'reward' ? 'withdrawal-requests' : 'static-charges'}/${s.remoteId}`;
      const reads = emulator.control.requests.filter((r) => r.method === 'GET' && r.path === path);
      assert.equal(reads.length, spans.length, `${s.id}: one read per lease`);
      for (const read of reads) {
        assert.ok(
          spans.some((span) => span.from <= read.at && read.at <= span.to),
          `${s.id}: a read outside every lease`,
        );
      }
      assert.ok(spans.length >= 2, `${s.id} was polled ${spans.length} times`);
      polls += spans.length;
      for (const span of spans) pollers.add(span.node);
      if (new Set(spans.map((span) => span.node)).size > 1) movedBetweenProcesses++;
    }
    assert.ok(pollers.size >= 2, 'the processes share the polling');
    console.log(
      `      ${started.length} intents, ${polls} polls by ${pollers.size} processes, ` +
        `${movedBetweenProcesses} intents polled by more than one process, never two at once`,
    );
  });

  it('applies 200 concurrent duplicate callbacks spread over the processes once', async () => {
    emulator.control.callbacks.set({ drop: true });
    const s = await start(0, 'reward', 'frank');
    pay(s);
    const answers = await Promise.all(
      Array.from({ length: 200 }, async (_, k) => {
        const node = nodes[k % 3] as GameProcess;
        const res = await request(`${node.url}/lightning/callbacks/${s.callbackToken}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ id: s.remoteId, status: 'completed' }),
        });
        await res.body.dump();
        return res.statusCode;
      }),
    );
    assert.deepEqual(new Set(answers), new Set([200]));
    await eventually(() => of('room', s.id).length > 0, 5_000, 'the room to hear it');
    await quiet([s]);
    assert.equal(of('settled', s.id).length, 1);
    assert.equal(of('room', s.id).length, 1);
    const stored = await ledger.get(s.id);
    assert.deepEqual(
      stored?.history.map((h) => h.to),
      ['creating', 'pending', 'completed'],
    );
  });

  it('loses nothing when a process is killed with intents in flight: another settles them, once', async () => {
    emulator.control.callbacks.set({ drop: true });
    const victim = nodes[2] as GameProcess;
    const survivors = [nodes[0], nodes[1]] as GameProcess[];
    // Only the victim polls at first, so that it surely holds leases when it dies.
    for (const node of survivors) await node.request({ cmd: 'reconciler', enabled: false });
    const started: Started[] = [];
    for (let k = 0; k < 3; k++) started.push(await start(2, 'reward', `gina-${k}`));
    started.push(await start(2, 'entryFee', 'gina-fee'));
    started.push(await start(0, 'reward', 'hank'));
    started.push(await start(1, 'entryFee', 'ivy'));
    for (const s of started) pay(s);
    // Slow re-reads down so that a check is still in flight when the victim dies.
    const slow = [
      emulator.control.faults.add({
        method: 'GET',
        path: '/v0/withdrawal-requests/*',
        latencyMs: 1_500,
      }),
      emulator.control.faults.add({
        method: 'GET',
        path: '/v0/static-charges/*',
        latencyMs: 1_500,
      }),
    ];
    const ids = new Set(started.map((s) => s.id));
    const claimedByVictim = await eventually(
      () => {
        const mine = reports
          .filter((r) => r.event === 'claim' && r.node === victim.name)
          .flatMap((r) => r.ids ?? [])
          .filter((id) => ids.has(id));
        return mine.length > 0 ? mine : null;
      },
      10_000,
      'the victim to lease some intents',
    );
    await victim.kill();
    const killedAt = Date.now();
    for (const fault of slow) fault.remove();
    for (const node of survivors) await node.request({ cmd: 'reconciler', enabled: true });

    await eventually(
      () => started.every((s) => of('settled', s.id).length > 0),
      15_000,
      'the survivors to settle everything',
    );
    await quiet(started);
    for (const s of started) {
      const settled = of('settled', s.id);
      assert.equal(settled.length, 1, `${s.id} settled ${settled.length} times`);
      assert.notEqual(settled[0]?.node, victim.name);
      assert.equal(settled[0]?.status, 'completed');
    }
    // The victim's leases ran out and its intents went to the others.
    for (const id of claimedByVictim) {
      const later = reports.filter(
        (r) => r.event === 'claim' && r.node !== victim.name && r.ids?.includes(id),
      );
      assert.ok(later.length > 0, `${id} was never claimed again`);
    }
    // Its room is gone with it: its settlements stay in the ledger, announced once.
    for (const s of started.filter((x) => x.home === 2)) {
      assert.equal(of('room', s.id).length, 0);
      assert.equal((await ledger.get(s.id))?.status, 'completed');
    }
    const lastSettled = Math.max(...started.map((s) => of('settled', s.id)[0]?.received as number));
    console.log(
      `      victim held ${claimedByVictim.length} leases; all ${started.length} intents settled ` +
        `${lastSettled - killedAt} ms after the kill (lease ${RECONCILER.leaseMs} ms)`,
    );
    assert.deepEqual(await ledger.openByRoom(rooms[2] as string), []);
  });
});
