import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { matchMaker, Room } from '@colyseus/core';
import { expect } from 'chai';
import { request } from 'undici';
import { AmbiguousResultError, InsufficientPointsError } from '../../src/api/errors.js';
import { ManualClock, startEmulator } from '../../src/emulator/index.js';
import { ConfigurationError } from '../../src/errors.js';
import type { Intent } from '../../src/ledger/intent.js';
import { createLightning } from '../../src/lightning.js';
import { roomChannel, type SettlementMessage } from '../../src/server/settlement.js';
import { eventually } from '../support/eventually.js';
import { type Game, quietLogger, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

/** Reconciler settings that make a dropped callback show up within a fraction of a second. */
const eager = { intervalMs: 25, firstCheckMs: 50, maxBackoffMs: 200, checksPerSecond: 1000 };

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.statusCode, text: await res.body.text() };
}

/**
 * Waits until the emulator has sent every callback queued so far and the game has answered
 * each; returns those about `remoteId`, all delivered and answered 200. The route answers
 * only after it has applied the callback (ledger written, `settled` emitted, room told
 * through presence, which is synchronous here), so whatever a callback caused, duplicate
 * or not, has happened by then.
 */
async function callbacksAnswered(game: Game, remoteId: string | null) {
  await game.emulator.control.callbacks.idle();
  const about = game.emulator.control.callbackLog.filter((c) => c.resourceId === remoteId);
  expect(about.map((c) => [c.outcome, c.httpStatus])).to.deep.equal(
    about.map(() => ['delivered', 200]),
  );
  return about;
}

function collect(game: Game) {
  const settled: Intent[] = [];
  game.lightning.on('settled', (intent) => settled.push(intent));
  return settled;
}

describe('server core', () => {
  let game: Game;
  afterEach(async () => {
    await game?.stop();
  });

  describe('verified callbacks', () => {
    it('a claimed reward settles through its callback, and the room hears it once', async () => {
      game = await startGame({ empty: EmptyRoom }, { reconciler: { enabled: false } });
      const room = await game.colyseus.createRoom('empty');
      const heard: SettlementMessage[] = [];
      await matchMaker.presence.subscribe(roomChannel(room.roomId), (m: SettlementMessage) =>
        heard.push(m),
      );
      const settled = collect(game);

      const reward = await game.lightning.reward({
        playerId: 'alice',
        roomId: room.roomId,
        amountMsat: 50_000,
        description: 'Winner',
      });
      expect(reward).to.include({ status: 'pending', kind: 'reward', playerId: 'alice' });
      expect(reward.code).to.match(/^lnurl1/i);
      expect(game.emulator.control.claimWithdrawal(reward.remoteId as string)).to.include({
        status: 'OK',
      });

      expect(await callbacksAnswered(game, reward.remoteId)).to.have.length(1);
      expect(settled).to.have.length(1);
      expect(settled[0]).to.include({ id: reward.id, status: 'completed' });
      const stored = await game.lightning.books.ledger.get(reward.id);
      expect(stored?.history.map((h) => h.to)).to.deep.equal(['creating', 'pending', 'completed']);
      expect(heard.map((m) => m.status)).to.deep.equal(['pending', 'completed']);
    });

    it('duplicated callbacks change nothing after the first', async () => {
      game = await startGame({ empty: EmptyRoom }, { reconciler: { enabled: false } });
      game.emulator.control.callbacks.set({ duplicate: 5 });
      const settled = collect(game);
      const reward = await game.lightning.reward({
        playerId: 'bob',
        amountMsat: 20_000,
        description: 'x',
      });
      game.emulator.control.claimWithdrawal(reward.remoteId as string);
      // All six copies applied (each answered after its check), and one settlement.
      expect(await callbacksAnswered(game, reward.remoteId)).to.have.length(6);
      expect(settled).to.have.length(1);
      const stored = await game.lightning.books.ledger.get(reward.id);
      expect(stored?.history.map((h) => h.to)).to.deep.equal(['creating', 'pending', 'completed']);
    });

    it('a forged body changes nothing: the API is asked, not the body', async () => {
      game = await startGame({ empty: EmptyRoom }, { reconciler: { enabled: false } });
      const settled = collect(game);
      const reward = await game.lightning.reward({
        playerId: 'eve',
        amountMsat: 20_000,
        description: 'x',
      });
      const token = reward.callbackToken as string;
      const forged = { id: reward.remoteId, status: 'completed', amount: '20000' };
      const answer = await post(game.callbackUrl(token), forged);
      expect(answer.status).to.equal(200);
      const stored = await game.lightning.books.ledger.get(reward.id);
      expect(stored?.status).to.equal('pending');
      expect(settled).to.have.length(0);
      // And a body naming someone else's resource cannot adopt it either.
      const other = await game.lightning.reward({
        playerId: 'mallory',
        amountMsat: 20_000,
        description: 'y',
      });
      game.emulator.control.claimWithdrawal(other.remoteId as string);
      await post(game.callbackUrl(token), { id: other.remoteId, status: 'completed' });
      expect((await game.lightning.books.ledger.get(reward.id))?.status).to.equal('pending');
    });

    it('an unknown token gets 404 with an empty body; a huge body gets 413', async () => {
      game = await startGame({ empty: EmptyRoom }, { reconciler: { enabled: false } });
      const base = `http://127.0.0.1:${game.port}/lightning/callbacks`;
      for (const token of ['A'.repeat(32), 'short', 'not%20a%20token']) {
        const answer = await post(`${base}/${token}`, { id: 'x', status: 'completed' });
        expect(answer).to.deep.equal({ status: 404, text: '' });
      }
      const reward = await game.lightning.reward({
        playerId: 'p',
        amountMsat: 20_000,
        description: 'x',
      });
      const big = await post(game.callbackUrl(reward.callbackToken as string), 'x'.repeat(70_000));
      expect(big.status).to.equal(413);
    });

    it('concurrent callbacks and checks on one intent apply exactly once', async () => {
      game = await startGame({ empty: EmptyRoom }, { reconciler: { enabled: false } });
      const settled = collect(game);
      const reward = await game.lightning.reward({
        playerId: 'p',
        amountMsat: 20_000,
        description: 'x',
      });
      game.emulator.control.callbacks.set({ drop: true });
      game.emulator.control.claimWithdrawal(reward.remoteId as string);
      const url = game.callbackUrl(reward.callbackToken as string);
      const answers = await Promise.all([
        ...Array.from({ length: 40 }, () => post(url, { id: reward.remoteId })),
        ...Array.from({ length: 10 }, () => game.lightning.books.refresh(reward.id)),
      ]);
      expect(answers.slice(0, 40).every((a) => (a as { status: number }).status === 200)).to.equal(
        true,
      );
      expect(settled).to.have.length(1);
      const stored = await game.lightning.books.ledger.get(reward.id);
      expect(stored?.history.filter((h) => h.to === 'completed')).to.have.length(1);
    });
  });

  describe('the reconciler', () => {
    it('settles a reward whose callback was dropped', async () => {
      game = await startGame({ empty: EmptyRoom }, { reconciler: eager });
      game.emulator.control.callbacks.set({ drop: true });
      const settled = collect(game);
      const reward = await game.lightning.reward({
        playerId: 'p',
        amountMsat: 20_000,
        description: 'x',
      });
      game.emulator.control.claimWithdrawal(reward.remoteId as string);
      await eventually(() => settled.length === 1, 5000, 'reconciled settlement');
      expect(settled[0]).to.include({ id: reward.id, status: 'completed' });
      expect(game.emulator.control.sentCallbacks().every((c) => c.outcome === 'dropped')).to.equal(
        true,
      );
    });

    it('moves a reward to expired when it expires without a callback', async () => {
      const clock = new ManualClock(Date.now());
      const emulator = await startEmulator({ clock, callbacks: { drop: true } });
      try {
        game = await startGame({ empty: EmptyRoom }, { emulator, reconciler: eager });
        const settled = collect(game);
        const reward = await game.lightning.reward({
          playerId: 'p',
          amountMsat: 20_000,
          description: 'x',
          expiresIn: 60,
        });
        clock.advance(61_000);
        await eventually(() => settled.length === 1, 5000, 'expiry');
        expect(settled[0]).to.include({ id: reward.id, status: 'expired' });
        expect(game.emulator.control.claimWithdrawal(reward.remoteId as string).status).to.equal(
          'ERROR',
        );
      } finally {
        await game.stop();
        await emulator.close();
      }
    });

    it('never polls a pending intent more than the rate cap allows', async () => {
      // The cap is a budget per pass (checksPerSecond x intervalMs / 1000 = 1 here), with one
      // pass per interval. The passes of one second run here by hand, on a clock that moves
      // one interval per pass, while ten intents are due far more often than the cap allows:
      // what is counted does not depend on how fast this machine runs the timer.
      const clock = new ManualClock(Date.now());
      const settings = { ...eager, checksPerSecond: 20, intervalMs: 50, enabled: false };
      game = await startGame({ empty: EmptyRoom }, { reconciler: settings, clock });
      for (let i = 0; i < 10; i++) {
        await game.lightning.reward({ playerId: `p${i}`, amountMsat: 20_000, description: 'x' });
      }
      const reads$ = () => game.emulator.control.count('GET', /^\/v0\/withdrawal-requests\/[^/]+$/);
      const before = reads$();
      let checked = 0;
      for (let pass = 0; pass < 1000 / settings.intervalMs; pass++) {
        clock.advance(settings.intervalMs);
        const n = await game.lightning.operator.reconciler.runOnce();
        expect(n, `pass ${pass}`).to.be.at.most(1);
        checked += n;
      }
      const reads = reads$() - before;
      expect(reads).to.equal(checked);
      expect(reads).to.be.greaterThan(0);
      expect(reads).to.be.at.most(settings.checksPerSecond);
    });
  });

  describe('ambiguous creates', () => {
    it('a create that times out after reaching the service becomes unknown, is never re-sent, and expires after its deadline', async () => {
      const clock = new ManualClock(Date.now());
      game = await startGame(
        { empty: EmptyRoom },
        {
          reconciler: { ...eager, enabled: false },
          clock,
          api: { timeoutMs: 200, retry: { baseDelayMs: 1 } },
        },
      );
      const unknown: Intent[] = [];
      game.lightning.on('unknown', (i) => unknown.push(i));
      game.emulator.control.faults.add({
        method: 'POST',
        path: '/v0/withdrawal-requests',
        mode: 'process-then-hang',
        times: 1,
      });
      let caught: unknown;
      try {
        await game.lightning.reward({ playerId: 'p', amountMsat: 20_000, description: 'x' });
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(AmbiguousResultError);
      expect(unknown).to.have.length(1);
      const intent = await game.lightning.books.ledger.get(unknown[0]?.id as string);
      expect(intent?.status).to.equal('unknown');
      // Only the reconciler could send it again: an hour later, past every schedule it could
      // have, one whole pass (every due intent checked) has run.
      const settled = collect(game);
      clock.advance(3_600_000);
      await game.lightning.operator.reconciler.runOnce();
      expect(game.emulator.control.count('POST', '/v0/withdrawal-requests')).to.equal(1);
      expect(game.emulator.control.withdrawalRequests()).to.have.length(1);
      // Nobody ever got its code, and its deadline has passed: nobody can claim it now.
      const ended = await game.lightning.books.ledger.get(intent?.id as string);
      expect(ended?.status).to.equal('expired');
      expect(ended?.history.at(-1)?.note).to.match(/never given to anyone/);
      expect(settled.map((i) => i.id)).to.deep.equal([intent?.id]);
    });

    it('an unknown reward is resolved by a callback that proves it is ours', async () => {
      game = await startGame({ empty: EmptyRoom }, { reconciler: { enabled: false } });
      game.emulator.control.faults.add({
        method: 'POST',
        path: '/v0/withdrawal-requests',
        mode: 'process-then-destroy',
        times: 1,
      });
      const settled = collect(game);
      const failed = await game.lightning
        .reward({ playerId: 'p', amountMsat: 20_000, description: 'x' })
        .catch((e) => e);
      expect(failed).to.be.instanceOf(AmbiguousResultError);
      const [created] = game.emulator.control.withdrawalRequests();
      expect(created).to.not.equal(undefined);
      game.emulator.control.claimWithdrawal(created?.id as string);
      await eventually(() => settled.length === 1, 3000, 'resolution');
      expect(settled[0]).to.include({ status: 'completed', remoteId: created?.id });
    });
  });

  describe('entry fees and points', () => {
    it('an entry fee is paid through the static charge and settles once', async () => {
      game = await startGame({ empty: EmptyRoom }, { reconciler: { enabled: false } });
      const settled = collect(game);
      const fee = await game.lightning.chargeEntryFee({
        playerId: 'p',
        amountMsat: 10_000,
        description: 'Entry',
        successMessage: 'Good luck',
      });
      expect(fee).to.include({ kind: 'entryFee', status: 'pending' });
      const charge = game.emulator.control.staticCharges().find((c) => c.id === fee.remoteId);
      expect(charge).to.include({ minAmount: '10000', maxAmount: '10000', allowedSlots: 1 });
      expect(game.emulator.control.payStaticCharge(fee.remoteId as string, 10_000).status).to.equal(
        'OK',
      );
      expect(await callbacksAnswered(game, fee.remoteId)).to.have.length(1);
      expect(settled).to.have.length(1);
      expect(settled[0]).to.include({ id: fee.id, status: 'completed' });
    });

    it('an unpaid entry fee expires at its deadline, and the charge is closed', async () => {
      const clock = new ManualClock(Date.now());
      game = await startGame({ empty: EmptyRoom }, { reconciler: eager, clock });
      const settled = collect(game);
      const fee = await game.lightning.chargeEntryFee({
        playerId: 'p',
        amountMsat: 10_000,
        description: 'Entry',
        expiresIn: 30,
      });
      clock.advance(31_000);
      await eventually(() => settled.length === 1, 5000, 'fee expiry');
      expect(settled[0]).to.include({ id: fee.id, status: 'expired' });
      expect(game.emulator.control.payStaticCharge(fee.remoteId as string, 10_000).status).to.equal(
        'ERROR',
      );
    });

    it('spends points once; a short balance fails with no debit', async () => {
      game = await startGame({ empty: EmptyRoom }, { reconciler: { enabled: false } });
      const userId = game.emulator.control.createUser({ email: 'p@example.com', referenceId: 'p' });
      game.emulator.control.setPoints(userId, 'USDZ', 500);
      const spent = await game.lightning.spendPoints({ playerId: 'p', userId, amount: 300 });
      expect(spent).to.include({ status: 'completed', amount: '300', unit: 'USDZ' });
      expect(game.emulator.control.points(userId, 'USDZ')).to.equal(200);
      const short = await game.lightning
        .spendPoints({ playerId: 'p', userId, amount: 300 })
        .catch((e) => e);
      expect(short).to.be.instanceOf(InsufficientPointsError);
      expect(game.emulator.control.points(userId, 'USDZ')).to.equal(200);
      const open = await game.lightning.books.ledger.openByPlayer('p');
      expect(open.map((i) => [i.status, i.history.map((h) => h.to)])).to.deep.equal([]);
    });
  });

  describe('durability', () => {
    it('a file ledger survives a restart, and the open intent settles afterwards', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'lightning-'));
      const file = join(dir, 'ledger.sqlite');
      const emulator = await startEmulator();
      try {
        // The first server's reconciler is off: nothing settles before it stops.
        game = await startGame(
          { empty: EmptyRoom },
          { emulator, ledger: file, reconciler: { ...eager, enabled: false } },
        );
        const reward = await game.lightning.reward({
          playerId: 'p',
          amountMsat: 20_000,
          description: 'x',
        });
        await game.stop();
        // Claimed while the game server is down: the callback finds nobody.
        game.emulator.control.claimWithdrawal(reward.remoteId as string);
        await emulator.control.callbacks.idle();

        game = await startGame({ empty: EmptyRoom }, { emulator, ledger: file, reconciler: eager });
        const settled = collect(game);
        await eventually(() => settled.length === 1, 5000, 'settled after restart');
        expect(settled[0]).to.include({ id: reward.id, status: 'completed' });
      } finally {
        await game.stop();
        await emulator.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('a settlement for a room that no longer exists is kept and emitted', async () => {
      game = await startGame({ empty: EmptyRoom }, { reconciler: { enabled: false } });
      const room = await game.colyseus.createRoom('empty');
      const reward = await game.lightning.reward({
        playerId: 'p',
        roomId: room.roomId,
        amountMsat: 20_000,
        description: 'x',
      });
      await room.disconnect();
      const settled = collect(game);
      game.emulator.control.claimWithdrawal(reward.remoteId as string);
      await eventually(() => settled.length === 1, 3000, 'orphan settlement');
      expect(settled[0]).to.include({ id: reward.id, roomId: room.roomId, status: 'completed' });
      expect((await game.lightning.books.ledger.get(reward.id))?.status).to.equal('completed');
    });
  });

  describe('options', () => {
    it('refuses to start in production without a key, and a real key without an https publicUrl', async () => {
      const previous = process.env.NODE_ENV;
      process.env.NODE_ENV = 'production';
      try {
        const error = catching(() => createLightning({ logger: quietLogger }));
        expect(error).to.be.instanceOf(ConfigurationError);
        expect(error.message).to.match(/apiKey/);
      } finally {
        process.env.NODE_ENV = previous;
      }
      const noUrl = catching(() => createLightning({ apiKey: 'k', logger: quietLogger }));
      expect(noUrl.message).to.match(/publicUrl/);
      const http = catching(() =>
        createLightning({ apiKey: 'k', publicUrl: 'http://game.example.com', logger: quietLogger }),
      );
      expect(http).to.include({ code: 'LN_CONFIGURATION', field: 'options.publicUrl' });
      expect(http.message).to.match(/https/);
    });

    it('takes the API client’s own tuning under `api`: what the client refuses, it refuses there too', async () => {
      const base = { apiKey: 'k', publicUrl: 'https://game.example.com', logger: quietLogger };
      // A path override the client does not know, or one that is no path, is refused at once.
      const unknown = catching(() =>
        createLightning({ ...base, api: { paths: { withdrawalRequest: '/v0/x' } } } as never),
      );
      expect(unknown).to.include({ code: 'LN_CONFIGURATION' });
      expect(unknown.message).to.match(/api\.paths/);
      const noPath = catching(() =>
        createLightning({ ...base, api: { paths: { withdrawalRequestsCreate: 'v0/x' } } } as never),
      );
      expect(noPath.message).to.match(/must start with "\/"/);
      // And every setting the client takes is taken (the connect timeout among them).
      const lightning = createLightning({
        ...base,
        api: {
          connectTimeoutMs: 2_000,
          paths: { withdrawalRequestsCreate: '/v0/withdrawal-requests' },
        },
      });
      expect(lightning).to.have.property('ready');
    });

    it('starts the embedded emulator without a key, and says so once', async () => {
      const lines: string[] = [];
      const lightning = createLightning({
        logger: { info: (m) => lines.push(m), warn: () => {}, error: () => {} },
        reconciler: { enabled: false },
      });
      expect(() => lightning.service.api).to.throw(ConfigurationError, /ready/);
      expect(lines).to.deep.equal([]);
      await Promise.all([lightning.ready(), lightning.ready()]);
      try {
        expect(lightning.service.emulator).to.not.equal(null);
        expect(lines.filter((l) => /emulator/.test(l))).to.have.length(1);
        expect((await lightning.service.api.wallet.get()).balance).to.be.greaterThan(0);
        // The embedded ledger, seen through its reads (an in-memory SQLite: nothing open yet).
        expect(await lightning.books.ledger.unknowns()).to.deep.equal([]);
      } finally {
        await lightning.close();
      }
    });
  });
});

function catching(fn: () => unknown): Error & Record<string, unknown> {
  try {
    fn();
  } catch (err) {
    return err as Error & Record<string, unknown>;
  }
  throw new Error('expected a throw');
}
