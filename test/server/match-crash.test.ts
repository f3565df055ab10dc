/**
 * A process SIGKILLed mid-match (issue 14): its players paid, nobody settled or aborted, and the
 * process is gone. Another process on the same ledger aborts the match after its timeout and
 * refunds each paid fee exactly once; no payout is made.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.js';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';
import { nodeArgs } from '../support/node-child.js';

class EmptyRoom extends Room {}

const FIXTURE = fileURLToPath(new URL('./fixtures/match-process.ts', import.meta.url));

describe('matches: a process killed mid-match', function () {
  this.timeout(30_000);
  let emulator: Emulator;
  let child: ChildProcess | undefined;
  let game: Game | undefined;
  let dir: string;

  beforeEach(async () => {
    emulator = await startEmulator();
    dir = mkdtempSync(join(tmpdir(), 'match-crash-'));
  });

  afterEach(async () => {
    child?.kill('SIGKILL');
    await game?.stop();
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is refunded by another process after its timeout, each fee once, nothing paid out', async () => {
    const ledger = join(dir, 'ledger.sqlite');
    const config = JSON.stringify({ apiKey: emulator.apiKey, baseUrl: emulator.url, ledger });
    child = spawn(process.execPath, [...(await nodeArgs(FIXTURE)), config], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    const reports: Record<string, unknown>[] = [];
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      reports.push(JSON.parse(line) as Record<string, unknown>);
    });
    const entered = await eventually(
      () => reports.find((r) => r.event === 'entered'),
      15_000,
      'the players entered in the child',
    );
    const fees = entered.fees as { id: string; remoteId: string }[];
    for (const fee of fees) {
      expect(emulator.control.payStaticCharge(fee.remoteId).status).to.equal('OK');
    }
    child.stdin?.write('read\n');
    await eventually(
      () => reports.some((r) => r.event === 'paid' && r.paid === 2),
      10_000,
      'the child saw both fees paid',
    );
    child.kill('SIGKILL');
    await exited;

    // Another process of the game, on the same ledger, its clock past the match's timeout.
    const clock = new ManualClock(Date.now() + 11_000);
    game = await startGame(
      { empty: EmptyRoom },
      { emulator, ledger, clock, reconciler: { enabled: false } },
    );
    const aborted: string[] = [];
    game.lightning.on('match.aborted', (m) => aborted.push(m.id));
    const matchId = entered.matchId as string;
    await game.lightning.operator.reconciler.runOnce();
    const view = await game.lightning.matches.get(matchId);
    expect(view.status).to.equal('aborted');
    expect(view.reason).to.match(/timed out/);
    expect(view.payouts).to.deep.equal([]);
    expect(view.refunds.map((r) => [r.playerId, r.amountMsat]).sort()).to.deep.equal([
      ['alice', '40000'],
      ['bob', '40000'],
    ]);
    expect(aborted).to.deep.equal([matchId]);
    clock.advance(60_000);
    await game.lightning.operator.reconciler.runOnce();
    await game.lightning.operator.reconciler.runOnce();
    const requests = emulator.control.withdrawalRequests();
    expect(requests.map((w) => w.internalId).sort()).to.deep.equal(['alice', 'bob']);
    expect(requests.every((w) => w.amount === '40000')).to.equal(true);
  });
});
