/**
 * Fair shares of the game's outbound rate (issue 30), with the real scheduler in front of an
 * emulator that enforces the same rate, both on one manual clock (a token every 100 ms of it):
 * one player's flood of actions does not hold another player's action behind it (players are
 * served in turn); a player's paid fee is proven by a re-read served as that player's action,
 * not behind a queue of payouts; and a flood of players still leaves queued payouts their floor.
 * Every assertion counts requests in the emulator's log, in the order they reached it.
 */
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.js';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import type { LoggedRequest } from '../../src/emulator/request-log.js';
import type { Intent } from '../../src/ledger/intent.js';
import type { Lightning } from '../../src/lightning.js';
import { eventually } from '../support/eventually.js';
import { type Game, quietLogger, startGame } from '../support/game.js';

const DEPLETE = '/api/v1/widget/users/deplete';
const CHARGES = '/v0/static-charges';
const REQUESTS = '/v0/withdrawal-requests';
/** The game's rate: one token every 100 ms of the manual clock. */
const RATE = { perSecond: 10, burst: 1 };
/**
 * The service's: the same rate, with room for a request that reaches it late (the manual clock
 * runs about ten times faster than real time here).
 */
const SERVICE_RATE = { perSecond: 10, burst: 5 };
const FLOOD = 15;

describe('fair shares of the outbound rate', function () {
  this.timeout(30_000);
  let clock: ManualClock;
  let emulator: Emulator;
  let game: Game;
  let lightning: Lightning;

  async function start(reconciler: { enabled: boolean; intervalMs?: number }): Promise<void> {
    clock = new ManualClock(1_700_000_000_000);
    emulator = await startEmulator({ logger: quietLogger, clock, rateLimit: SERVICE_RATE });
    game = await startGame(
      {},
      { emulator, clock, rateLimit: RATE, reconciler, logger: quietLogger },
    );
    lightning = game.lightning;
  }

  afterEach(async () => {
    // Calls still waiting for a token (the queue's) end as the clock moves on.
    const moving = setInterval(() => clock.advance(1_000), 5);
    try {
      await game?.stop();
      await emulator?.close();
    } finally {
      clearInterval(moving);
    }
  });

  /** Moves the clock a token's time per poll until `done` holds. */
  function driveUntil(done: () => boolean, what: string): Promise<unknown> {
    return eventually(
      () => {
        if (!done()) clock.advance(100);
        return done();
      },
      20_000,
      what,
    );
  }

  /** Moves the clock until every call of `calls` has ended. */
  async function settle(calls: Promise<unknown>[], what: string): Promise<void> {
    let ended = 0;
    for (const call of calls) void call.finally(() => ended++).catch(() => {});
    await driveUntil(() => ended === calls.length, what);
    await Promise.all(calls);
  }

  const log = (): readonly LoggedRequest[] => emulator.control.requests;
  const isPost = (path: string) => (r: LoggedRequest) =>
    r.method === 'POST' && r.path === path && r.limited === undefined;
  const count = (from: number, to: number, match: (r: LoggedRequest) => boolean) =>
    log().slice(from, to).filter(match).length;

  /** A player with points to spend, spending one point `times` at once. */
  function flood(times = FLOOD): Promise<unknown>[] {
    const userId = emulator.control.createUser({
      email: 'flood@example.com',
      referenceId: 'flood',
    });
    emulator.control.setPoints(userId, 'USDZ', 1_000);
    return Array.from({ length: times }, (_, i) =>
      lightning.spendPoints({
        playerId: 'flood',
        roomId: 'r1',
        userId,
        amount: 1,
        description: `spend ${i}`,
      }),
    );
  }

  const fee = (playerId: string): Promise<Intent> =>
    lightning.chargeEntryFee({ playerId, roomId: 'r1', amountMsat: 10_000, description: 'fee' });

  it('one player’s flood of actions: another player’s action is served within the next 4 tokens', async () => {
    await start({ enabled: false });
    const flooding = flood();
    // A few of the flood served: every one of its calls is waiting by now. The other player's
    // call waits from a few ms after it is made: a token or two may go meanwhile.
    await driveUntil(() => count(0, log().length, isPost(DEPLETE)) >= 2, 'the flood starts');
    const from = log().length;
    const honest = fee('honest');
    await driveUntil(() => count(from, log().length, isPost(CHARGES)) === 1, 'the fee is created');
    const at = log().findIndex((r, i) => i >= from && isPost(CHARGES)(r));
    const before = count(from, at, isPost(DEPLETE));
    expect(before, 'flood calls served before the other player’s').to.be.at.most(4);
    expect((await honest).status).to.equal('pending');
    await settle(flooding, 'the flood ends');
  });

  it('a player flood leaves queued payouts their floor: 1 token in 4 goes to them while it waits', async () => {
    await start({ enabled: false });
    const flooding = flood(24);
    await driveUntil(() => count(0, log().length, isPost(DEPLETE)) >= 2, 'the flood starts');
    const from = log().length;
    const payouts = Array.from({ length: 4 }, (_, i) =>
      lightning.reward({ playerId: `winner${i}`, amountMsat: 20_000, description: 'prize' }),
    );
    await settle([...flooding, ...payouts], 'the flood and the payouts end');
    const run = log().slice(from);
    const floodEnds = run.findLastIndex(isPost(DEPLETE));
    const payoutsFirst = run.slice(0, floodEnds).filter(isPost(REQUESTS)).length;
    // About 22 of the flood still waited: once it took 8 tokens, a payout every 4th token.
    expect(payoutsFirst, 'payouts sent while the flood waited').to.be.at.least(3);
  });

  it('with payouts queued, a paid fee’s callback re-read goes before the queue’s next payouts', async () => {
    await start({ enabled: true, intervalMs: 20 });
    const charged = fee('honest');
    await driveUntil(() => count(0, log().length, isPost(CHARGES)) === 1, 'the fee is created');
    const created = await charged;
    const queued = await lightning.rewardMany(
      Array.from({ length: 100 }, (_, i) => ({
        playerId: `winner${i}`,
        amountMsat: 20_000,
        description: 'prize',
      })),
    );
    expect(queued.intents.every((intent) => intent.status === 'queued')).to.equal(true);
    // The queue drains: some payouts made, many more waiting for their token.
    await driveUntil(() => count(0, log().length, isPost(REQUESTS)) >= 3, 'the queue drains');
    const from = log().length;
    emulator.control.payStaticCharge(created.remoteId as string);
    const reRead = (r: LoggedRequest) =>
      r.method === 'GET' && r.path === `${CHARGES}/${created.remoteId}`;
    await driveUntil(() => log().slice(from).some(reRead), 'the callback’s re-read');
    const at = log().findIndex((r, i) => i >= from && reRead(r));
    expect(count(from, at, isPost(REQUESTS)), 'payouts served first').to.be.at.most(2);
    await eventually(
      async () => (await lightning.books.ledger.get(created.id))?.status === 'completed',
      5_000,
      'the fee is paid',
    );
  });
});
