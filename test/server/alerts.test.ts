/**
 * Issue 24: alerts. Each kind against the emulator, on the game's ManualClock where time
 * matters: raised once when its condition starts to hold (one `alert` event, one log line,
 * listed by `lightning.operator.alerts()`), not again while it holds, cleared once when it stops. Checks
 * run with each audit (`lightning.books.audit()` here: the reconciler is off) or on their own interval.
 */
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { ManualClock } from '../../src/emulator/index.js';
import { ConfigurationError } from '../../src/errors.js';
import { createLightning } from '../../src/lightning.js';
import type { Alert } from '../../src/server/alert-kinds.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

const REQUESTS = '/v0/withdrawal-requests';

describe('alerts (issue 24)', function () {
  this.timeout(30_000);
  const games: Game[] = [];
  afterEach(async () => {
    for (const game of games.splice(0).reverse()) await game.stop();
  });

  interface Watched {
    game: Game;
    clock: ManualClock;
    seen: Alert[];
    lines: string[];
  }

  async function start(options: Parameters<typeof startGame>[1] = {}): Promise<Watched> {
    const clock = new ManualClock(Date.now());
    const lines: string[] = [];
    const logger = {
      info: (m: string) => lines.push(`info ${m}`),
      warn: (m: string) => lines.push(`warn ${m}`),
      error: (m: string) => lines.push(`error ${m}`),
    };
    const game = await startGame(
      { empty: EmptyRoom },
      { clock, logger, reconciler: { enabled: false }, audit: { enabled: false }, ...options },
    );
    games.push(game);
    const seen: Alert[] = [];
    game.lightning.on('alert', (a) => seen.push(a));
    return { game, clock, seen, lines };
  }

  /** What the events said, in order: `raised cover-low`, `cleared cover-low`. */
  const said = (seen: Alert[]) => seen.map((a) => `${a.state} ${a.key}`);
  const logged = (lines: string[]) => lines.filter((l) => l.includes('alert '));

  /**
   * Runs the audit (and so the alerts' check) `times` times and expects what was said to stay
   * what it was after the first: an alert is never repeated while it holds.
   */
  async function holds(w: Watched, times = 2): Promise<void> {
    const before = said(w.seen);
    for (let i = 0; i < times; i++) await w.game.lightning.books.audit();
    expect(said(w.seen)).to.deep.equal(before);
  }

  async function pausePayouts(game: Game): Promise<void> {
    game.emulator.control.faults.add({ method: 'POST', path: REQUESTS, status: 503, times: 1 });
    await game.lightning
      .reward({ playerId: 'alice', amountMsat: 21_000, description: 'x' })
      .catch(() => {});
    expect(game.lightning.operator.paused).to.not.equal(null);
  }

  it('are off unless set: a pause raises nothing', async () => {
    const w = await start({ breaker: { failures: 1, players: 1 } });
    await pausePayouts(w.game);
    await w.game.lightning.books.audit();
    expect(w.seen).to.deep.equal([]);
    expect(w.game.lightning.operator.alerts()).to.deep.equal([]);
  });

  it('payouts paused: raised once while the breaker holds them, cleared once on resume', async () => {
    const w = await start({ alerts: {}, breaker: { failures: 1, players: 1 } });
    await w.game.lightning.books.audit();
    expect(w.seen).to.deep.equal([]);
    await pausePayouts(w.game);
    await w.game.lightning.books.audit();
    expect(said(w.seen)).to.deep.equal(['raised payouts-paused']);
    expect(w.seen[0]).to.include({ kind: 'payouts-paused', cause: 'payouts', state: 'raised' });
    expect(w.game.lightning.operator.alerts().map((a) => a.key)).to.deep.equal(['payouts-paused']);
    await holds(w);

    w.game.lightning.operator.resume();
    await w.game.lightning.books.audit();
    expect(said(w.seen)).to.deep.equal(['raised payouts-paused', 'cleared payouts-paused']);
    expect(w.game.lightning.operator.alerts()).to.deep.equal([]);
    await holds(w);
    expect(logged(w.lines)).to.have.length(2);
    expect(logged(w.lines)[0]).to.match(/^warn alert raised: payouts are paused/);
    expect(logged(w.lines)[1]).to.match(/^info alert cleared: payouts are paused/);
  });

  it('is checked on its own interval too, without an audit', async () => {
    const w = await start({ alerts: { intervalMs: 10 }, breaker: { failures: 1, players: 1 } });
    await pausePayouts(w.game);
    await eventually(() => w.seen.length === 1, 5_000, 'the pause alerted');
    w.game.lightning.operator.resume();
    await eventually(() => w.seen.length === 2, 5_000, 'the alert cleared');
    expect(said(w.seen)).to.deep.equal(['raised payouts-paused', 'cleared payouts-paused']);
  });

  it('cover below alerts.coverBelowMsat: raised once, cleared once it is back above', async () => {
    const w = await start({ alerts: { coverBelowMsat: 500_000 } });
    w.game.emulator.control.setWallet(1_000_000);
    await w.game.lightning.books.audit();
    expect(w.seen).to.deep.equal([]);

    w.game.emulator.control.setWallet(400_000);
    await w.game.lightning.books.audit();
    expect(said(w.seen)).to.deep.equal(['raised cover-low']);
    expect(w.seen[0]).to.include({ coverMsat: '400000', thresholdMsat: '500000' });
    await holds(w);

    w.game.emulator.control.setWallet(900_000);
    await w.game.lightning.books.audit();
    expect(said(w.seen)).to.deep.equal(['raised cover-low', 'cleared cover-low']);
    await holds(w);
    expect(logged(w.lines)).to.have.length(2);
  });

  it('an unknown older than alerts.unknownAfterMs: raised once, cleared once it is resolved', async () => {
    const w = await start({ alerts: { unknownAfterMs: 60_000 } });
    w.game.emulator.control.faults.add({ method: 'POST', path: REQUESTS, status: 503, times: 1 });
    await w.game.lightning
      .reward({ playerId: 'alice', amountMsat: 21_000, description: 'x' })
      .catch(() => {});
    const [unknown] = await w.game.lightning.operator.unknowns();
    expect(unknown?.status).to.equal('unknown');
    await w.game.lightning.books.audit();
    expect(w.seen).to.deep.equal([]);

    w.clock.advance(60_000);
    await w.game.lightning.books.audit();
    expect(said(w.seen)).to.deep.equal(['raised unknown-old']);
    expect(w.seen[0]).to.include({ intentId: unknown?.id, intentKind: 'reward', count: 1 });
    await holds(w);

    await w.game.lightning.operator.resolve(
      unknown?.id as string,
      'failed',
      'never created, per dashboard',
    );
    await w.game.lightning.books.audit();
    expect(said(w.seen)).to.deep.equal(['raised unknown-old', 'cleared unknown-old']);
    await holds(w);
  });

  it('an audit finding: raised once while the audit finds it, cleared once it does not', async () => {
    const w = await start({ alerts: {} });
    // A code the wallet cannot cover: the audit finds cover short on every run until it can.
    await w.game.lightning.reward({ playerId: 'alice', amountMsat: 21_000, description: 'x' });
    w.game.emulator.control.setWallet(0);
    await w.game.lightning.books.audit();
    expect(said(w.seen)).to.deep.equal(['raised audit-finding:cover-short']);
    const [raised] = w.seen;
    expect(raised?.kind === 'audit-finding' && raised.finding.type).to.equal('cover-short');
    await holds(w);

    w.game.emulator.control.setWallet(1_000_000);
    await w.game.lightning.books.audit();
    expect(said(w.seen)).to.deep.equal([
      'raised audit-finding:cover-short',
      'cleared audit-finding:cover-short',
    ]);
    await holds(w);
  });

  it('the service answering only 5xx for alerts.serviceFailingMs: raised once, cleared by an answer', async () => {
    const w = await start({ alerts: { serviceFailingMs: 60_000 } });
    const fault = w.game.emulator.control.faults.add({
      method: 'GET',
      path: '/v0/wallet',
      status: 503,
    });
    await w.game.lightning.books.audit();
    w.clock.advance(59_999);
    await w.game.lightning.books.audit();
    expect(w.seen).to.deep.equal([]);

    w.clock.advance(1);
    await w.game.lightning.books.audit();
    expect(said(w.seen)).to.deep.equal(['raised service-failing']);
    expect(w.seen[0]).to.include({ status: 503 });
    await holds(w);

    w.game.emulator.control.faults.remove(fault);
    await w.game.lightning.books.audit();
    expect(said(w.seen)).to.deep.equal(['raised service-failing', 'cleared service-failing']);
    await holds(w);
  });

  it('refuses bad options before anything starts', () => {
    const bad = [
      [{ alerts: { unknownAfterMs: -1 } }, 'alerts.unknownAfterMs'],
      [{ alerts: { coverBelowMsat: 1.5 } }, 'alerts.coverBelowMsat'],
      [{ alerts: { nagMs: 5 } }, 'alerts'],
      [{ meterProvider: {} }, 'meterProvider'],
    ] as const;
    for (const [options, field] of bad) {
      expect(() => createLightning(options as never), field)
        .to.throw(ConfigurationError)
        .with.property('message')
        .that.includes(field);
    }
  });
});
