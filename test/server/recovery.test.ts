/**
 * Money is never lost: what an operator killing processes and losing storage found (issue 12),
 * each against a real game server and the emulator.
 *
 * - a create whose process died mid-call becomes `unknown` when its grace period ends;
 * - a verified callback moves a `creating` intent at once, and the late answer reads what won;
 * - a create answer that arrives after the grace period still wins over `unknown`;
 * - a reward whose create answer was lost ends `expired` once its deadline has passed;
 * - a process that starts re-reads every open intent (the start-up sweep);
 * - callbacks never push the next re-read later;
 * - a helper never resolves null when the ledger lost its intent;
 * - an operator lists the unknowns and records a decision.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { request } from 'undici';
import { AmbiguousResultError } from '../../src/api/errors.js';
import { type Emulator, ManualClock, startEmulator } from '../../src/emulator/index.js';
import { InvalidArgumentError } from '../../src/errors.js';
import type { Intent } from '../../src/ledger/intent.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import type { LedgerStore } from '../../src/ledger/store.js';
import { IntentLostError } from '../../src/server/operations/errors.js';
import { newCallbackToken } from '../../src/server/tokens.js';
import { eventually } from '../support/eventually.js';
import { type Game, quietLogger, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

const quiet = { enabled: false } as const;

function collect(game: Game, event: 'settled' | 'unknown' = 'settled') {
  const seen: Intent[] = [];
  const push = (intent: Intent) => {
    seen.push(intent);
  };
  if (event === 'settled') game.lightning.on('settled', push);
  else game.lightning.on('unknown', push);
  return seen;
}

/** The one open intent of `playerId`, once the ledger holds it. */
async function openIntentOf(game: Game, playerId: string): Promise<Intent> {
  let found: Intent | undefined;
  await eventually(
    async () => {
      found = (await game.lightning.books.ledger.openByPlayer(playerId))[0];
      return found !== undefined;
    },
    5000,
    `an open intent of ${playerId}`,
  );
  return found as Intent;
}

describe('recovery: money is never lost', function () {
  this.timeout(20_000);
  let games: Game[] = [];
  let emulator: Emulator | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    for (const game of games.splice(0).reverse()) await game.stop();
    await emulator?.close();
    emulator = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  async function start(options: Parameters<typeof startGame>[1] = {}): Promise<Game> {
    const game = await startGame({ empty: EmptyRoom }, options);
    games.push(game);
    return game;
  }

  it('a create whose process died mid-call becomes unknown when the grace period ends', async () => {
    const clock = new ManualClock(Date.now());
    const game = await start({ clock, reconciler: quiet, api: { timeoutMs: 60_000 } });
    const unknown = collect(game, 'unknown');
    // The service never answers: as far as the ledger can tell, the process died mid-call.
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      mode: 'hang',
    });
    const call = game.lightning
      .reward({ playerId: 'crash', amountMsat: 500_000, description: 'x' })
      .catch((err: unknown) => err);
    const creating = await openIntentOf(game, 'crash');
    expect(creating.status).to.equal('creating');
    expect(creating.nextCheckAt).to.equal(creating.createdAt + 30_000);

    clock.advance(29_000);
    await game.lightning.operator.reconciler.runOnce();
    expect((await game.lightning.books.ledger.get(creating.id))?.status).to.equal('creating');
    clock.advance(1_000);
    await game.lightning.operator.reconciler.runOnce();
    const now = await game.lightning.books.ledger.get(creating.id);
    expect(now?.status).to.equal('unknown');
    expect(unknown.map((i) => i.id)).to.deep.equal([creating.id]);
    // It is due again when it can be called expired: its deadline plus the margin.
    expect(now?.nextCheckAt).to.equal((creating.expiresAt as number) + 60_000);
    // The service goes away, which ends the hung call; the intent stays where the check put it.
    await game.emulator.close();
    expect(await call).to.be.instanceOf(AmbiguousResultError);
    expect((await game.lightning.books.ledger.get(creating.id))?.status).to.equal('unknown');
  });

  it('a verified callback moves a creating intent at once; the late answer reads what won', async () => {
    const game = await start({ reconciler: quiet, api: { timeoutMs: 3_000, maxRetries: 0 } });
    const settled = collect(game);
    // The service acts, then the answer never comes back (until the client gives up).
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      mode: 'process-then-hang',
      times: 1,
    });
    const call = game.lightning.reward({ playerId: 'fast', amountMsat: 500_000, description: 'x' });
    await eventually(
      () => game.emulator.control.withdrawalRequests().length === 1,
      5000,
      'created',
    );
    const [request] = game.emulator.control.withdrawalRequests();
    const creating = await openIntentOf(game, 'fast');
    expect(creating.status).to.equal('creating');

    game.emulator.control.claimWithdrawal(request?.id as string);
    await eventually(() => settled.length === 1, 5000, 'settled by the callback');
    expect(settled[0]).to.include({ id: creating.id, status: 'completed', remoteId: request?.id });
    // The create call then times out: the helper resolves with what the ledger holds.
    const answer = await call;
    expect(answer).to.include({ id: creating.id, status: 'completed' });
    expect(settled).to.have.length(1);
    const history = (await game.lightning.books.ledger.get(creating.id))?.history.map((h) => h.to);
    expect(history).to.deep.equal(['creating', 'pending', 'completed']);
  });

  it('a create answer that comes after the grace period still wins over unknown', async () => {
    const clock = new ManualClock(Date.now());
    const game = await start({ clock, reconciler: quiet });
    const unknown = collect(game, 'unknown');
    // The answer takes 2 s of real time; the grace period passes at once on the manual clock.
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      latencyMs: 2_000,
      times: 1,
    });
    const call = game.lightning.reward({ playerId: 'late', amountMsat: 30_000, description: 'x' });
    const creating = await openIntentOf(game, 'late');
    clock.advance(30_000);
    await game.lightning.operator.reconciler.runOnce();
    expect(unknown.map((i) => i.id)).to.deep.equal([creating.id]);

    const answered = await call;
    expect(answered).to.include({ id: creating.id, status: 'pending' });
    expect(answered.code).to.be.a('string');
    expect(answered.history.map((h) => h.to)).to.deep.equal(['creating', 'unknown', 'pending']);
    expect(answered.history.at(-1)?.note).to.match(/after the grace period/);
  });

  it('a reward whose create answer was lost ends expired after its deadline, settled once', async () => {
    const clock = new ManualClock(Date.now());
    const game = await start({ clock, reconciler: quiet, api: { timeoutMs: 300, maxRetries: 0 } });
    const settled = collect(game);
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      mode: 'process-then-destroy',
      times: 1,
    });
    const failed = await game.lightning
      .reward({ playerId: 'p', amountMsat: 30_000, description: 'x', expiresIn: 600 })
      .catch((err: unknown) => err);
    expect(failed).to.be.instanceOf(AmbiguousResultError);
    const [intent] = await game.lightning.operator.unknowns();
    expect(intent).to.include({ status: 'unknown', code: null });
    expect(intent?.nextCheckAt).to.equal((intent?.expiresAt as number) + 60_000);

    // Before the deadline (plus its margin) it stays unknown: a callback may still prove it.
    clock.advance(600_000);
    await game.lightning.operator.reconciler.runOnce();
    expect((await game.lightning.books.ledger.get(intent?.id as string))?.status).to.equal(
      'unknown',
    );
    clock.advance(60_000);
    await game.lightning.operator.reconciler.runOnce();
    await game.lightning.operator.reconciler.runOnce();
    const ended = await game.lightning.books.ledger.get(intent?.id as string);
    expect(ended?.status).to.equal('expired');
    expect(ended?.history.at(-1)?.note).to.match(/never given to anyone.*deadline has passed/);
    expect(settled.map((i) => i.id)).to.deep.equal([intent?.id]);
    expect(await game.lightning.operator.unknowns()).to.deep.equal([]);
    // Nothing was sent twice.
    expect(game.emulator.control.count('POST', '/v0/withdrawal-requests')).to.equal(1);
  });

  it('a process that starts re-reads every open intent: what settled while it was down', async () => {
    emulator = await startEmulator();
    dir = mkdtempSync(join(tmpdir(), 'lightning-sweep-'));
    const ledger = join(dir, 'ledger.sqlite');
    const clock = new ManualClock(Date.now());
    const first = await start({ emulator, ledger, clock, reconciler: quiet });
    const reward = await first.lightning.reward({
      playerId: 'p',
      amountMsat: 40_000,
      description: 'x',
    });
    expect(reward.nextCheckAt).to.be.greaterThan(clock.now());
    await first.stop();
    games = [];
    // While no process runs, the player claims; the service's one callback finds nobody.
    emulator.control.claimWithdrawal(reward.remoteId as string);
    await emulator.control.callbacks.idle();

    // The clock has not moved: only the sweep can make the intent due.
    const second = await start({ emulator, ledger, clock, reconciler: { intervalMs: 50 } });
    const settled = collect(second);
    await eventually(() => settled.length === 1, 10_000, 'recovered by the start-up sweep');
    expect(settled[0]).to.include({ id: reward.id, status: 'completed' });
  });

  it('callbacks, repeated or forged, never push the next re-read later', async () => {
    const game = await start({ reconciler: quiet });
    const reward = await game.lightning.reward({
      playerId: 'p',
      amountMsat: 40_000,
      description: 'x',
    });
    const before = await game.lightning.books.ledger.get(reward.id);
    for (let i = 0; i < 8; i++) {
      const res = await request(game.callbackUrl(reward.callbackToken as string), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: reward.remoteId, status: 'completed' }),
      });
      await res.body.dump();
      expect(res.statusCode).to.equal(200);
    }
    const after = await game.lightning.books.ledger.get(reward.id);
    expect(after?.status).to.equal('pending');
    expect(after?.nextCheckAt).to.be.at.most(before?.nextCheckAt as number);
    expect(after?.checks).to.equal(before?.checks);
  });

  it('a helper never resolves null: a lost intent rejects, and unknown says what was created', async () => {
    const store = new ForgetfulLedger();
    const errors: string[] = [];
    const game = await start({
      ledger: store,
      reconciler: quiet,
      logger: { ...quietLogger, error: (m: string) => errors.push(m) },
    });
    const unknown: [Intent, Error][] = [];
    game.lightning.on('unknown', (intent, err) => unknown.push([intent, err]));
    const failed = await game.lightning
      .reward({ playerId: 'p', amountMsat: 40_000, description: 'x' })
      .catch((err: unknown) => err);
    expect(failed).to.be.instanceOf(IntentLostError);
    const [request] = game.emulator.control.withdrawalRequests();
    expect((failed as IntentLostError).remoteId).to.equal(request?.id);
    expect(unknown).to.have.length(1);
    expect(unknown[0]?.[0]).to.include({ remoteId: request?.id, code: request?.invoice.request });
    expect(errors).to.have.length(1);
    expect(errors[0]).to.include(request?.id as string);
    expect(errors[0]).to.not.include(request?.invoice.request as string);
    await store.close();
  });

  it('callbacks on tokens the ledger does not hold are logged, at most once a minute', async () => {
    const warnings: string[] = [];
    const game = await start({
      reconciler: quiet,
      logger: { ...quietLogger, warn: (m: string) => warnings.push(m) },
    });
    for (let i = 0; i < 6; i++) {
      const res = await request(game.callbackUrl(newCallbackToken()), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      await res.body.dump();
      expect(res.statusCode).to.equal(404);
    }
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.match(/does not hold/);
  });

  it('an operator lists the unknowns and records a decision in the history', async () => {
    const game = await start({ reconciler: quiet, api: { timeoutMs: 300, maxRetries: 0 } });
    const settled = collect(game);
    game.emulator.control.faults.add({
      method: 'POST',
      path: '/v0/withdrawal-requests',
      mode: 'process-then-destroy',
      times: 1,
    });
    await game.lightning
      .reward({ playerId: 'p', amountMsat: 30_000, description: 'x' })
      .catch(() => {});
    const [intent] = await game.lightning.operator.unknowns();
    expect(intent?.status).to.equal('unknown');

    const bad = await game.lightning.operator
      .resolve(intent?.id as string, 'pending' as never, 'x')
      .catch((e: unknown) => e);
    expect(bad).to.be.instanceOf(InvalidArgumentError);
    const noNote = await game.lightning.operator
      .resolve(intent?.id as string, 'failed', ' ')
      .catch((e: unknown) => e);
    expect(noNote).to.be.instanceOf(InvalidArgumentError);

    const resolved = await game.lightning.operator.resolve(
      intent?.id as string,
      'failed',
      'dashboard shows the request was never claimed; voided it there',
    );
    expect(resolved.status).to.equal('failed');
    expect(resolved.history.at(-1)?.note).to.equal(
      'resolved by operator: dashboard shows the request was never claimed; voided it there',
    );
    expect(settled.map((i) => i.id)).to.deep.equal([intent?.id]);
    const again = await game.lightning.operator
      .resolve(intent?.id as string, 'completed', 'x')
      .catch((e: unknown) => e);
    expect(again).to.be.instanceOf(InvalidArgumentError);
    expect(await game.lightning.operator.unknowns()).to.deep.equal([]);
  });
});

/**
 * A ledger that loses an intent once the service has been called, as a database restored from
 * a backup between the record and the answer does.
 */
class ForgetfulLedger extends SqliteLedger implements LedgerStore {
  readonly #lost = new Set<string>();

  override async create(...args: Parameters<SqliteLedger['create']>): Promise<Intent> {
    const intent = await super.create(...args);
    this.#lost.add(intent.id);
    return intent;
  }

  override async get(id: string): Promise<Intent | null> {
    return this.#lost.has(id) ? null : super.get(id);
  }

  override async transition(...args: Parameters<SqliteLedger['transition']>) {
    return this.#lost.has(args[0]) ? null : super.transition(...args);
  }

  override async update(...args: Parameters<SqliteLedger['update']>) {
    return this.#lost.has(args[0]) ? null : super.update(...args);
  }
}

describe('recovery: a hung re-read never holds the reconciler back', function () {
  this.timeout(20_000);
  let game: Game | undefined;
  afterEach(async () => game?.stop());

  it('settles a second intent while the re-read of the first still hangs', async () => {
    // Issue 12 (found by the soak): a pass waited for its slowest re-read, so one read that
    // hung for (retries + 1) x the API timeout held every other check of the process back.
    game = await startGame(
      { empty: EmptyRoom },
      {
        reconciler: { intervalMs: 25, firstCheckMs: 50, maxBackoffMs: 200, checksPerSecond: 1000 },
        api: { timeoutMs: 8_000, maxRetries: 0 },
      },
    );
    game.emulator.control.callbacks.set({ drop: true });
    const stuck = await game.lightning.reward({
      playerId: 'a',
      amountMsat: 20_000,
      description: 'x',
    });
    game.emulator.control.faults.add({
      method: 'GET',
      path: `/v0/withdrawal-requests/${stuck.remoteId}`,
      mode: 'hang',
    });
    await eventually(
      () => game?.emulator.control.count('GET', `/v0/withdrawal-requests/${stuck.remoteId}`) === 1,
      3_000,
      'the first re-read to hang',
    );
    const other = await game.lightning.reward({
      playerId: 'b',
      amountMsat: 20_000,
      description: 'y',
    });
    game.emulator.control.claimWithdrawal(other.remoteId as string);
    // Its callback was dropped: only the reconciler can see the claim, and the hung read lasts 8 s.
    await eventually(
      async () => (await game?.lightning.books.ledger.get(other.id))?.status === 'completed',
      3_000,
      'the second reward read and settled while the first read hangs',
    );
    expect((await game.lightning.books.ledger.get(stuck.id))?.status).to.equal('pending');
    // The service goes away, which ends the hung read, so the game stops at once.
    await game.emulator.close();
  });
});
