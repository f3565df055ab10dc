/**
 * Money is never taken (issue 13, finding 5): limits per player and payout budgets, enforced in
 * the ledger's own atomic step so that they hold across processes. Before, 1,000 `again`
 * messages made 1,000 static charges, and a player who paid two of their open fees was charged
 * twice and counted once.
 *
 * - a second entry fee for the same player and room returns the open one: one charge, however
 *   many calls, in one process or two;
 * - a named `key` holds one open fee per key;
 * - `limits.maxOpenPerPlayer` refuses with LimitExceededError, nothing recorded or sent, across
 *   two processes;
 * - `limits.maxOpenPerGame` (issue 22, finding 8: 40 free guests made 40 charges, and each
 *   per-player limit bounds one identity only) refuses a new player's charge or reward once the
 *   game holds that many open intents, nothing recorded or sent, across two processes; an
 *   ended intent frees a place, and a settled match still pays its players;
 * - budgets refuse with BudgetExceededError before anything is sent: the largest reward, and a
 *   player's, a room's and the game's rolling windows, across two processes.
 *
 * "Two processes" here are two Lightning servers with their own PostgresLedger pools on one
 * PostgreSQL schema: the atomic step is the ledger's, whichever process asks.
 */
import { expect } from 'chai';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { BudgetExceededError, LimitExceededError } from '../../src/errors.js';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import { createLightning, type Lightning } from '../../src/lightning.js';
import type { LightningOptions } from '../../src/server/options.js';
import { quietLogger } from '../support/game.js';
import { needPostgres } from '../support/needs.js';
import { freshSchema, type PostgresServer, startPostgres } from '../support/postgres.js';

describe('limits and budgets: money is never taken', function () {
  this.timeout(20_000);
  let emulator: Emulator;
  let pg: PostgresServer | undefined;
  const servers: Lightning[] = [];
  const ledgers: PostgresLedger[] = [];

  beforeEach(async () => {
    emulator = await startEmulator();
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
      ...options,
    } as LightningOptions);
    servers.push(lightning);
    await lightning.ready();
    return lightning;
  }

  /** Two servers on one PostgreSQL ledger, as two processes of one game. */
  async function twoProcesses(options: Partial<LightningOptions> = {}): Promise<Lightning[]> {
    pg ??= await startPostgres({ durable: false });
    const schema = freshSchema();
    const pair: Lightning[] = [];
    for (let i = 0; i < 2; i++) {
      const ledger = new PostgresLedger(pg.url, { schema, durability: 'none' });
      ledgers.push(ledger);
      pair.push(await server({ ...options, ledger }));
    }
    return pair;
  }

  const charges = () => emulator.control.count('POST', '/v0/static-charges');
  const requests = () => emulator.control.count('POST', '/v0/withdrawal-requests');
  const fee = { playerId: 'alice', roomId: 'room-1', amountMsat: 21_000, description: 'entry' };
  const prize = (playerId: string, amountMsat: number, roomId = 'room-1') => ({
    playerId,
    roomId,
    amountMsat,
    description: 'prize',
  });

  it('returns the open entry fee instead of charging a player again', async () => {
    const lightning = await server();
    const first = await lightning.chargeEntryFee(fee);
    const second = await lightning.chargeEntryFee(fee);
    expect(second.id).to.equal(first.id);
    expect(second.code).to.equal(first.code);
    expect(charges()).to.equal(1);
    // Another room, or another player, is another seat.
    await lightning.chargeEntryFee({ ...fee, roomId: 'room-2' });
    await lightning.chargeEntryFee({ ...fee, playerId: 'bob' });
    expect(charges()).to.equal(3);
  });

  it('charges once for 50 concurrent calls, from two processes', async function () {
    needPostgres(this);
    const [a, b] = (await twoProcesses()) as [Lightning, Lightning];
    const calls = Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).chargeEntryFee(fee));
    const results = await Promise.all(calls);
    expect(new Set(results.map((r) => r.id)).size).to.equal(1);
    expect(charges()).to.equal(1);
    expect(emulator.control.staticCharges()).to.have.length(1);
  });

  it('holds one open fee per named key', async () => {
    const lightning = await server();
    const m1 = await lightning.chargeEntryFee({ ...fee, key: 'match-1' });
    const m2 = await lightning.chargeEntryFee({ ...fee, key: 'match-2' });
    const again = await lightning.chargeEntryFee({ ...fee, key: 'match-1' });
    expect(m1.id).to.not.equal(m2.id);
    expect(again.id).to.equal(m1.id);
    expect(charges()).to.equal(2);
  });

  it('charges again once the open fee has ended', async () => {
    const lightning = await server();
    const first = await lightning.chargeEntryFee(fee);
    emulator.control.payStaticCharge(first.remoteId as string);
    const paid = await lightning.books.refresh(first.id);
    expect(paid?.status).to.equal('completed');
    const next = await lightning.chargeEntryFee(fee);
    expect(next.id).to.not.equal(first.id);
    expect(charges()).to.equal(2);
  });

  it('refuses past maxOpenPerPlayer across two processes: nothing recorded, nothing sent', async function () {
    needPostgres(this);
    const [a, b] = (await twoProcesses({ limits: { maxOpenPerPlayer: 3 } })) as [
      Lightning,
      Lightning,
    ];
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).reward(prize('alice', 10_000))),
    );
    const refused = results.filter((r) => r.status === 'rejected');
    expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(3);
    for (const r of refused) {
      expect((r as PromiseRejectedResult).reason).to.be.instanceOf(LimitExceededError);
      expect((r as PromiseRejectedResult).reason.code).to.equal('LN_LIMIT_EXCEEDED');
    }
    expect(requests()).to.equal(3);
    expect(await a.books.ledger.openByPlayer('alice')).to.have.length(3);
    // Another player is not held back by alice's limit.
    await b.reward(prize('bob', 10_000));
    expect(requests()).to.equal(4);
  });

  it('refuses the charge past maxOpenPerGame from a new player: nothing recorded, nothing sent', async () => {
    const lightning = await server({ limits: { maxOpenPerGame: 3 } });
    const fees = [];
    for (const playerId of ['guest-1', 'guest-2', 'guest-3']) {
      fees.push(await lightning.chargeEntryFee({ ...fee, playerId }));
    }
    expect(charges()).to.equal(3);
    const err = await lightning
      .chargeEntryFee({ ...fee, playerId: 'guest-4' })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(LimitExceededError);
    expect(err).to.include({
      code: 'LN_LIMIT_EXCEEDED',
      limit: 'maxOpenPerGame',
      max: 3,
      playerId: 'guest-4',
    });
    expect((err as Error).message).to.match(/game/);
    // A reward to a new player is held back the same way.
    const reward = await lightning.reward(prize('guest-5', 10_000)).catch((e: unknown) => e);
    expect(reward).to.include({ limit: 'maxOpenPerGame' });
    // Nothing reached the service, nothing was recorded or journaled.
    expect(charges()).to.equal(3);
    expect(requests()).to.equal(0);
    expect(emulator.control.staticCharges().map((c) => c.internalId)).to.have.members([
      'guest-1',
      'guest-2',
      'guest-3',
    ]);
    for (const playerId of ['guest-4', 'guest-5']) {
      expect(await lightning.books.ledger.openByPlayer(playerId)).to.deep.equal([]);
      expect((await lightning.books.journal({ playerId })).entries).to.deep.equal([]);
    }
    // A fee that ends (paid) frees its place for the next player.
    emulator.control.payStaticCharge(fees[0]?.remoteId as string);
    expect((await lightning.books.refresh(fees[0]?.id as string))?.status).to.equal('completed');
    await lightning.chargeEntryFee({ ...fee, playerId: 'guest-4' });
    expect(charges()).to.equal(4);
  });

  it('refuses past maxOpenPerGame across two processes: nothing recorded, nothing sent', async function () {
    needPostgres(this);
    const [a, b] = (await twoProcesses({ limits: { maxOpenPerGame: 5 } })) as [
      Lightning,
      Lightning,
    ];
    // 12 guests at once, each a new player, half of them through each process.
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? a : b).chargeEntryFee({ ...fee, playerId: `guest-${i}` }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(5);
    for (const r of results.filter((r) => r.status === 'rejected')) {
      const reason = (r as PromiseRejectedResult).reason;
      expect(reason).to.be.instanceOf(LimitExceededError);
      expect(reason).to.include({ limit: 'maxOpenPerGame', max: 5 });
    }
    expect(charges()).to.equal(5);
    expect(emulator.control.staticCharges()).to.have.length(5);
    const open = await Promise.all(
      Array.from({ length: 12 }, (_, i) => b.books.ledger.openByPlayer(`guest-${i}`)),
    );
    expect(open.flat()).to.have.length(5);
  });

  it('lets a settled match pay its players at the cap, and counts its fees, not the match', async () => {
    const lightning = await server({ limits: { maxOpenPerGame: 3 } });
    const match = await lightning.matches.open({ roomId: null, entryFeeMsat: 21_000, rake: 0 });
    const entered = [];
    for (const playerId of ['alice', 'bob']) {
      entered.push(await lightning.matches.enter({ matchId: match.id, playerId }));
    }
    for (const paid of entered) {
      emulator.control.payStaticCharge(paid.remoteId as string);
      expect((await lightning.books.refresh(paid.id))?.status).to.equal('completed');
    }
    // Three other seats fill the game: the open match takes no place of its own.
    for (const playerId of ['p1', 'p2', 'p3']) {
      await lightning.chargeEntryFee({ ...fee, playerId });
    }
    const late = await lightning.matches
      .enter({ matchId: match.id, playerId: 'carol' })
      .catch((e: unknown) => e);
    expect(late).to.include({ limit: 'maxOpenPerGame' });
    // The pot is the players' money: its payout is not held back by the cap.
    const settled = await lightning.matches.settle(match.id, { alice: 1 });
    expect(settled.payouts).to.have.length(1);
    expect(settled.payouts[0]).to.include({ playerId: 'alice', amountMsat: '42000' });
    expect(requests()).to.equal(1);
  });

  it('refuses a reward above maxRewardMsat before anything is recorded', async () => {
    const lightning = await server({ budgets: { maxRewardMsat: 100_000 } });
    const err = await lightning.reward(prize('alice', 100_001)).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(BudgetExceededError);
    expect(err).to.include({ scope: 'payout', limitMsat: '100000', code: 'LN_BUDGET_EXCEEDED' });
    expect(await lightning.books.ledger.openByPlayer('alice')).to.deep.equal([]);
    expect(requests()).to.equal(0);
    await lightning.reward(prize('alice', 100_000));
    expect(requests()).to.equal(1);
  });

  it('holds player, room and game budgets across two processes, exactly', async function () {
    needPostgres(this);
    const hour = 3_600_000;
    const [a, b] = (await twoProcesses({
      budgets: {
        perPlayer: { msat: 50_000, windowMs: hour },
        perRoom: { msat: 80_000, windowMs: hour },
        game: { msat: 100_000, windowMs: hour },
      },
    })) as [Lightning, Lightning];
    // 10 concurrent rewards of 10,000 to alice: the player's 50,000 lets exactly 5 through.
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).reward(prize('alice', 10_000))),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(5);
    const player = (results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason;
    expect(player).to.be.instanceOf(BudgetExceededError);
    expect(player).to.include({ scope: 'player', reservedMsat: '50000', windowMs: hour });
    // bob in the same room: the room has 30,000 left.
    await a.reward(prize('bob', 30_000));
    const room = await b.reward(prize('bob', 1)).catch((e: unknown) => e);
    expect(room).to.include({ scope: 'room', reservedMsat: '80000' });
    // carol in another room: the game has 20,000 left.
    await b.reward(prize('carol', 20_000, 'room-2'));
    const game = await a.reward(prize('dave', 1, 'room-3')).catch((e: unknown) => e);
    expect(game).to.include({ scope: 'game', reservedMsat: '100000' });
    expect(requests()).to.equal(7);
  });

  it('gives a budget back when a reward fails to be created', async () => {
    const lightning = await server({ budgets: { perPlayer: { msat: 10_000, windowMs: 60_000 } } });
    emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      mode: 'status',
      status: 400,
      times: 1,
    });
    await lightning.reward(prize('alice', 10_000)).catch(() => null);
    // The refused create ended `failed`: its 10,000 are free again.
    const ok = await lightning.reward(prize('alice', 10_000));
    expect(ok.status).to.equal('pending');
  });

  it('refuses nonsense limits and budgets at start, naming the option', () => {
    expect(() => createLightning({ limits: { maxOpenPerPlayer: 0 } })).to.throw(/maxOpenPerPlayer/);
    expect(() => createLightning({ limits: { maxOpenPerGame: 0.5 } })).to.throw(/maxOpenPerGame/);
    expect(() =>
      createLightning({ budgets: { perPlayer: { msat: 2 ** 60, windowMs: 1_000 } } }),
    ).to.throw(/perPlayer/);
  });
});
