/**
 * One outbound rate for the whole game (issue 26), against the emulator's own rate limit:
 * a burst of payouts from one process, and from two sharing a PostgreSQL ledger, reaches the service within
 * its limit (no 429 at all) and every payout is made; a Retry-After heard by one process delays
 * the other's calls, as the emulator's request log shows.
 */
import { randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { expect } from 'chai';
import { type Emulator, ManualClock, startEmulator } from '../../src/emulator/index.js';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import { createLightning, type Lightning } from '../../src/lightning.js';
import type { LightningOptions } from '../../src/server/options.js';
import { RATE_CHANNEL, type RateEvent } from '../../src/server/outbound.js';
import { eventually } from '../support/eventually.js';
import { quietLogger } from '../support/game.js';
import { needPostgres } from '../support/needs.js';
import { type PostgresServer, startPostgres } from '../support/postgres.js';

const REQUESTS = '/v0/withdrawal-requests';

describe('the game’s outbound rate', function () {
  this.timeout(20_000);
  let emulator: Emulator;
  let pg: PostgresServer | undefined;
  const servers: Lightning[] = [];
  const ledgers: PostgresLedger[] = [];

  beforeEach(async () => {
    // The service's limit: 20 a second per key, 10 at once.
    emulator = await startEmulator({
      logger: quietLogger,
      rateLimit: { perSecond: 20, burst: 10 },
    });
  });

  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
    for (const ledger of ledgers.splice(0)) await ledger.close();
    await emulator.close();
  });

  after(async () => pg?.stop());

  async function server(options: Partial<LightningOptions> = {}): Promise<Lightning> {
    const lightning = createLightning({
      apiKey: emulator.apiKey,
      baseUrl: emulator.url,
      publicUrl: 'http://127.0.0.1:2567',
      logger: quietLogger,
      reconciler: { enabled: false },
      ledger: ':memory:',
      // Well under the service's burst: a request that reaches it up to 400 ms late (a busy
      // machine) is still within its limit.
      rateLimit: { perSecond: 20, burst: 2 },
      ...options,
    } as LightningOptions);
    servers.push(lightning);
    await lightning.ready();
    return lightning;
  }

  /** `n` processes of one game on one PostgreSQL ledger (a schema of their own). */
  async function processesOnOneDatabase(n: number): Promise<Lightning[]> {
    pg ??= await startPostgres({ durable: false });
    const schema = `t_${randomUUID().replaceAll('-', '')}`;
    const all: Lightning[] = [];
    for (let i = 0; i < n; i++) {
      const ledger = new PostgresLedger(pg.url, { schema, durability: 'none' });
      ledgers.push(ledger);
      all.push(await server({ ledger }));
    }
    return all;
  }

  const reward = (lightning: Lightning, playerId: string) =>
    lightning.reward({ playerId, amountMsat: 20_000, description: 'prize' });

  it('one process: a burst of 20 payouts waits for tokens, every one made, no 429', async () => {
    const lightning = await server();
    const made = await Promise.all(
      Array.from({ length: 20 }, (_, i) => reward(lightning, `p${i}`)),
    );
    expect(made.map((intent) => intent.status)).to.deep.equal(Array(20).fill('pending'));
    expect(emulator.control.count('POST', REQUESTS)).to.equal(20);
    expect(emulator.control.limited).to.equal(0);
  });

  it('a create takes its token before it is recorded: none waits as `creating` for a token', async () => {
    // A payout recorded first and then queued for its token would sit in `creating`, where the
    // reconciler takes it for one whose process died mid-call and reports it unknown. The
    // waits are on the game's clock: while it stands still, the ledger shows who is waiting.
    const clock = new ManualClock(Date.now());
    const lightning = await server({ clock });
    const players = Array.from({ length: 12 }, (_, i) => `p${i}`);
    const all = Promise.all(players.map((p) => reward(lightning, p)));
    await eventually(
      () => emulator.control.count('POST', REQUESTS) === 2 && clock.pendingTimers > 0,
      5_000,
      'the burst sent, the rest waiting for a token',
    );
    const recorded = (
      await Promise.all(players.map((p) => lightning.books.ledger.openByPlayer(p)))
    ).flat();
    expect(recorded, 'recorded: the two with a token').to.have.length(2);
    // Now the game's clock catches up with real time at each poll, so the game's rate meets the
    // service's as it would: each waiting payout is recorded only once it has its token. The
    // wait never blocks on the payouts themselves, so the clock keeps moving for any that waits.
    let settled: Awaited<typeof all> | undefined;
    let failed: unknown;
    all.then(
      (intents) => {
        settled = intents;
      },
      (error: unknown) => {
        failed = error ?? new Error('a payout failed');
      },
    );
    const made = await eventually(
      () => {
        if (failed) throw failed;
        clock.set(Math.max(clock.now(), Date.now()));
        return settled;
      },
      10_000,
      () => `every payout made (${emulator.control.count('POST', REQUESTS)} of 12 sent)`,
    );
    expect(made.map((intent) => intent.status)).to.deep.equal(Array(12).fill('pending'));
    for (const intent of made) {
      expect(intent.history.map((h) => h.to)).to.deep.equal(['creating', 'pending']);
    }
    expect(emulator.control.limited).to.equal(0);
  });

  it('two processes on one PostgreSQL: 20 payouts between them, one rate, no 429', async function () {
    needPostgres(this);
    const [a, b] = (await processesOnOneDatabase(2)) as [Lightning, Lightning];
    const made = await Promise.all(
      Array.from({ length: 20 }, (_, i) => reward(i % 2 ? a : b, `p${i}`)),
    );
    expect(made.every((intent) => intent.status === 'pending')).to.equal(true);
    expect(emulator.control.count('POST', REQUESTS)).to.equal(20);
    expect(emulator.control.limited).to.equal(0);
  });

  it('a Retry-After heard by one process delays the other’s calls', async function () {
    needPostgres(this);
    const [a, b] = (await processesOnOneDatabase(2)) as [Lightning, Lightning];
    const holds: RateEvent[] = [];
    const listen = (message: unknown) => holds.push(message as RateEvent);
    subscribe(RATE_CHANNEL, listen);
    try {
      emulator.control.faults.add({
        method: 'POST',
        path: REQUESTS,
        status: 429,
        retryAfter: 1,
        times: 1,
      });
      const first = reward(a, 'a');
      const hold = await eventually(() => holds[0]);
      // B starts only now, with a token in its bucket: the hold alone keeps it waiting.
      const second = reward(b, 'b');
      const made = await Promise.all([first, second]);
      expect(made.map((intent) => intent.status)).to.deep.equal(['pending', 'pending']);
      const posts = emulator.control.requests.filter((r) => r.path === REQUESTS);
      expect(posts).to.have.length(3);
      expect(hold.waitMs).to.equal(1_000);
      // The refused one, then both others at or after the hold's end: A's own and B's.
      for (const later of posts.slice(1)) expect(later.at).to.be.at.least(hold.until);
      expect(hold.until).to.be.at.least((posts[0]?.at ?? 0) + 1_000);
    } finally {
      unsubscribe(RATE_CHANNEL, listen);
    }
  });
});
