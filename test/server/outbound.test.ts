/**
 * The outbound scheduler (issues 26, 30) on a manual clock and an in-process bucket: calls wait
 * for a token rather than fail, a player's own action goes before payouts and payouts before
 * re-reads (the player least served lately first, payouts at least 1 token in 4 while players wait), a 429's hold holds everyone, and a store that fails leaves the process its own
 * bucket.
 */
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.js';
import { ConfigurationError } from '../../src/errors.js';
import { LocalRateBucket, type RateStore } from '../../src/ledger/rate.js';
import type { CallPriority } from '../../src/port/gate.js';
import { OutboundScheduler } from '../../src/server/outbound.js';
import { eventually } from '../support/eventually.js';
import { quietLogger } from '../support/game.js';

describe('outbound scheduler', () => {
  let clock: ManualClock;
  let store: RateStore;
  let scheduler: OutboundScheduler;
  const served: string[] = [];

  function start(limit = { perSecond: 10, burst: 1 }, over: RateStore = new LocalRateBucket()) {
    clock = new ManualClock(1_700_000_000_000);
    store = over;
    served.length = 0;
    scheduler = new OutboundScheduler({ store, limit, clock, logger: quietLogger });
  }

  const call = (priority: CallPriority, name: string) =>
    scheduler.acquire(priority).then(() => served.push(name));

  /** Moves the clock one token's time at a time until `n` calls were served. */
  async function serve(n: number, stepMs = 100): Promise<void> {
    await eventually(() => {
      if (served.length < n) clock.advance(stepMs);
      return served.length >= n;
    });
  }

  afterEach(() => scheduler?.close());

  it('serves waiting calls a player action first, then payouts, then re-reads, each in order', async () => {
    start();
    await call('read', 'first');
    // The bucket is empty now: everything below waits, whatever order it came in.
    const all = [
      call('read', 'read 1'),
      call('payout', 'payout 1'),
      call('read', 'read 2'),
      call('player', 'fee'),
      call('payout', 'payout 2'),
      call('player', 'spend'),
    ];
    await eventually(() => scheduler.waiting === 6);
    await serve(7);
    await Promise.all(all);
    expect(served).to.deep.equal([
      'first',
      'fee',
      'spend',
      'payout 1',
      'payout 2',
      'read 1',
      'read 2',
    ]);
  });

  it("serves players fairly (the least served first), their re-reads as their actions, a payout after every 3 or 4 players' tokens while both wait", async () => {
    start();
    await call('read', 'first');
    const as = (player: string, priority: CallPriority, name: string) =>
      scheduler.asPlayer(player, () => call(priority, name));
    const all = [
      ...Array.from({ length: 16 }, (_, i) => as('flood', 'player', `flood ${i}`)),
      call('payout', 'payout 1'),
      call('payout', 'payout 2'),
      as('honest', 'read', 'honest re-read'),
      call('read', 'background read'),
    ];
    await eventually(() => scheduler.waiting === 20);
    await serve(21);
    await Promise.all(all);
    // The honest player's re-read goes second: the flood's first call waited longer.
    expect(served.slice(0, 4)).to.deep.equal(['first', 'flood 0', 'honest re-read', 'flood 1']);
    // While players and payouts both wait, a payout after 4 tokens to players who took few,
    // after 3 once the flood took many.
    const p1 = served.indexOf('payout 1');
    const p2 = served.indexOf('payout 2');
    expect(p1).to.equal(5);
    expect(p2 - p1).to.be.within(4, 5);
    expect(served.indexOf('flood 15')).to.be.greaterThan(p2);
    expect(served.at(-1)).to.equal('background read');
  });

  it('a crowd of players who each took few still leaves payouts every 5th token', async () => {
    start();
    await call('read', 'first');
    const crowd = Array.from({ length: 40 }, (_, i) =>
      scheduler.asPlayer(`player ${i}`, () => call('player', `player ${i}`)),
    );
    const payouts = Array.from({ length: 10 }, (_, i) => call('payout', `payout ${i}`));
    await eventually(() => scheduler.waiting === 50);
    await serve(51);
    await Promise.all([...crowd, ...payouts]);
    const firstTwenty = served.slice(1, 21);
    expect(firstTwenty.filter((name) => name.startsWith('payout'))).to.have.length(4);
    expect(firstTwenty.filter((name) => name.startsWith('player'))).to.have.length(16);
  });

  it("payouts keep a share of the game's bucket while another process's players take every token", async () => {
    start({ perSecond: 10, burst: 5 });
    // Two processes on one bucket: this one drains payouts, the other serves a crowd.
    const other = new OutboundScheduler({
      store,
      limit: { perSecond: 10, burst: 5 },
      clock,
      logger: quietLogger,
    });
    try {
      const payouts = Array.from({ length: 10 }, (_, i) => call('payout', `payout ${i}`));
      const crowd = Array.from({ length: 60 }, (_, i) =>
        other
          .asPlayer(`player ${i}`, () => other.acquire('player'))
          .then(() => served.push(`player ${i}`)),
      );
      await eventually(() => scheduler.waiting + other.waiting === 70 - served.length);
      await serve(50);
      // The crowd's players leave no token behind; still, a payout at least every 5 tokens.
      const payoutsServed = served.slice(0, 50).filter((name) => name.startsWith('payout'));
      expect(payoutsServed.length).to.be.at.least(8);
      await serve(70);
      await Promise.all([...payouts, ...crowd]);
    } finally {
      other.close();
    }
  });

  it('a player on the third step of a visit is not passed by every newcomer', async () => {
    start();
    const as = (player: string, name: string) =>
      scheduler.asPlayer(player, () => call('player', name));
    // The player joined and entered: two tokens lately.
    await as('visitor', 'join');
    const entering = as('visitor', 'enter');
    await serve(2);
    await entering;
    // Its payment's re-read waits; then a stream of newcomers, each with no use yet.
    const mine = as('visitor', 'paid');
    await eventually(() => scheduler.waiting === 1);
    const newcomers = Array.from({ length: 20 }, (_, i) => as(`newcomer ${i}`, `newcomer ${i}`));
    await eventually(() => scheduler.waiting === 21);
    await serve(23);
    await Promise.all([mine, ...newcomers]);
    expect(served.indexOf('paid')).to.equal(2);
  });

  it('leaves the last token to a payout: a re-read takes only a surplus, woken for a payout', async () => {
    start({ perSecond: 10, burst: 2 });
    await call('payout', 'first');
    // One token left: the re-read waits for a second one...
    const read = call('read', 'read');
    await eventually(() => scheduler.waiting === 1);
    expect(served).to.deep.equal(['first']);
    // ...and a payout that comes meanwhile takes the one there, at once (the clock stands still).
    await call('payout', 'payout');
    expect(served).to.deep.equal(['first', 'payout']);
    await serve(3, 10);
    await read;
    expect(served).to.deep.equal(['first', 'payout', 'read']);
  });

  it('hands out no more than the rate: after the burst, one token per 100 ms at 10/s', async () => {
    start({ perSecond: 10, burst: 2 });
    const t0 = clock.now();
    const at: number[] = [];
    const calls = Array.from({ length: 6 }, () =>
      scheduler.acquire('payout').then(() => at.push(clock.now())),
    );
    // The manual clock moves 10 ms at a time: a call is served when its token is due, or later.
    await eventually(() => {
      if (at.length < 6) clock.advance(10);
      return at.length === 6;
    });
    await Promise.all(calls);
    // The burst of 2 at once, then no more than one a 100 ms from the start, in logical time.
    for (let i = 2; i < 6; i++) expect((at[i] as number) - t0).to.be.at.least((i - 1) * 100);
    expect(at[5]).to.be.greaterThan(at[1] as number);
  });

  it('holds every call for a 429 (recorded in the store), then goes on from an empty bucket', async () => {
    start({ perSecond: 10, burst: 5 });
    await scheduler.limited(2_000);
    // The store says so to anyone who asks, this process or another.
    expect(await store.takeToken({ perSecond: 10, burst: 5 }, clock.now())).to.equal(2_000);
    const waiting = call('player', 'after the hold');
    await eventually(() => scheduler.waiting === 1);
    clock.advance(1_999);
    await eventually(() => scheduler.waiting === 1);
    expect(served).to.deep.equal([]);
    clock.advance(101);
    await waiting;
    expect(served).to.deep.equal(['after the hold']);
  });

  it('keeps going on a bucket of its own while the store fails, and says so once', async () => {
    const warnings: string[] = [];
    let failing = true;
    const shared = new LocalRateBucket();
    const flaky: RateStore = {
      takeToken: (limit, now) =>
        failing ? Promise.reject(new Error('connection lost')) : shared.takeToken(limit, now),
      holdCalls: (until) =>
        failing ? Promise.reject(new Error('connection lost')) : shared.holdCalls(until),
    };
    start({ perSecond: 10, burst: 1 }, flaky);
    scheduler = new OutboundScheduler({
      store: flaky,
      limit: { perSecond: 10, burst: 1 },
      clock,
      logger: { ...quietLogger, warn: (m) => warnings.push(m) },
    });
    // Its own bucket starts empty (the shared one may be spent): a token's time per call.
    const first = [call('payout', 'a'), call('payout', 'b')];
    await serve(2);
    await Promise.all(first);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.match(/store failed \(connection lost\)/);
    failing = false;
    await call('payout', 'c');
    expect(served).to.deep.equal(['a', 'b', 'c']);
  });

  it('a bucket of its own, when the store fails, starts empty: no burst past what the game already spent', async () => {
    let failing = false;
    const shared = new LocalRateBucket();
    const flaky: RateStore = {
      takeToken: (limit, now, keep) =>
        failing ? Promise.reject(new Error('connection lost')) : shared.takeToken(limit, now, keep),
      holdCalls: (until) =>
        failing ? Promise.reject(new Error('connection lost')) : shared.holdCalls(until),
    };
    start({ perSecond: 10, burst: 5 }, flaky);
    // The game spent its burst through the shared bucket (so did the service's, by as many).
    for (const name of ['a', 'b', 'c', 'd', 'e']) await call('player', name);
    failing = true;
    const next = ['f', 'g', 'h'].map((name) => call('player', name));
    await eventually(() => scheduler.waiting === 3);
    // The clock stands still: nothing more may go (a full bucket of its own sent all three).
    await new Promise((resolve) => setImmediate(resolve));
    expect(served).to.have.length(5);
    // Then one call per token's time, as the shared bucket would have allowed.
    await serve(6);
    expect(served).to.have.length(6);
    await serve(8);
    await Promise.all(next);
    expect(served).to.deep.equal(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
  });

  it('spends a create’s reserved token on its first attempt, or hands it on unspent', async () => {
    start({ perSecond: 10, burst: 1 });
    const ticket = await scheduler.reserve('payout');
    // Inside the create's send, the first attempt goes at once; a second one waits its turn.
    await scheduler.spend(ticket, () => scheduler.acquire('payout'));
    expect(ticket.unspent).to.equal(false);
    const reserving = scheduler.reserve('player');
    await eventually(() => scheduler.waiting === 1);
    clock.advance(100);
    const refused = await reserving;
    const waiting = call('read', 'waiting');
    await eventually(() => scheduler.waiting === 1);
    // The create was refused before any attempt: its token goes to the call waiting now.
    scheduler.release(refused);
    await waiting;
    // Served with the bucket still empty (the clock did not move): by the handed-on token.
    expect(served).to.deep.equal(['waiting']);
  });

  it('rejects the waiting calls when closed, and every later one', async () => {
    start();
    await call('read', 'first');
    const waiting = scheduler.acquire('payout');
    await eventually(() => scheduler.waiting === 1);
    scheduler.close();
    const err = await waiting.catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ConfigurationError);
    expect(await scheduler.acquire('player').catch((e: unknown) => e)).to.be.instanceOf(
      ConfigurationError,
    );
  });
});
