/**
 * Issue 31, finding 2: `funded` follows from the ledger, not from a live process. The fee's move
 * that completes a roster makes its match due in the same atomic step, so when the process that
 * made the move stops before its follow-up (closed, or SIGKILLed), another process sharing the
 * ledger funds the match within one reconciler interval, and tells `match.funded` once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import type { Intent } from '../../src/ledger/intent.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import type { MatchView } from '../../src/server/match/view.js';
import { ArmedLedger } from '../support/armed-ledger.js';
import { eventually } from '../support/eventually.js';
import { type Game, quietLogger, startGame } from '../support/game.js';
import { nodeArgs } from '../support/node-child.js';

class EmptyRoom extends Room {}

const FIXTURE = fileURLToPath(new URL('./fixtures/funded-process.ts', import.meta.url));

describe('matches: funded follows from the ledger, whatever stops after the last fee is paid', function () {
  this.timeout(30_000);
  let emulator: Emulator;
  let dir: string;
  let child: ChildProcess | undefined;
  const games: Game[] = [];
  const ledgers: SqliteLedger[] = [];

  beforeEach(async () => {
    emulator = await startEmulator({ logger: quietLogger });
    dir = mkdtempSync(join(tmpdir(), 'match-funded-'));
  });

  afterEach(async () => {
    child?.kill('SIGKILL');
    for (const game of games.splice(0)) await game.stop();
    for (const ledger of ledgers.splice(0)) await ledger.close();
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Another process of the game on the same ledger file, its reconciler running. */
  async function otherProcess(path: string): Promise<{ game: Game; funded: MatchView[] }> {
    const ledger = new SqliteLedger({ path });
    ledgers.push(ledger);
    const game = await startGame(
      { empty: EmptyRoom },
      { emulator, ledger, reconciler: { intervalMs: 100 } },
    );
    games.push(game);
    const funded: MatchView[] = [];
    game.lightning.on('match.funded', (view) => funded.push(view));
    return { game, funded };
  }

  /** The match is funded for good, and its event was told once in all. */
  async function fundedOnce(game: Game, matchId: string, told: MatchView[]): Promise<void> {
    await eventually(() => told.length > 0, 10_000, 'match.funded told by the other process');
    // More looks change nothing: the event was told once.
    await game.lightning.operator.reconciler.runOnce();
    await game.lightning.books.refresh(matchId);
    const view = await game.lightning.matches.get(matchId);
    expect(view.funded).to.equal(true);
    expect(view.status).to.equal('open');
    expect(told).to.have.length(1);
    expect(told[0]?.id).to.equal(matchId);
    expect(told[0]?.paid).to.equal(2);
  }

  /** The first process, on a file ledger that closes the instant its armed move is in. */
  async function closingProcess(): Promise<{ path: string; ledger: ArmedLedger; first: Game }> {
    const path = join(dir, 'ledger.sqlite');
    const ledger = new ArmedLedger({ path }, (armed) => void armed.close());
    ledgers.push(ledger);
    const first = await startGame(
      { empty: EmptyRoom },
      { emulator, ledger, reconciler: { enabled: false } },
    );
    games.push(first);
    return { path, ledger, first };
  }

  it('a process closed right after the move: another process funds the match, once', async () => {
    const { path, ledger, first } = await closingProcess();
    const toldFirst: MatchView[] = [];
    first.lightning.on('match.funded', (view) => toldFirst.push(view));
    const match = await first.lightning.matches.open({ entryFeeMsat: 40_000, seats: 2 });
    const fees: Intent[] = [];
    for (const playerId of ['alice', 'bob']) {
      fees.push(await first.lightning.matches.enter({ matchId: match.id, playerId }));
    }
    const [a, b] = fees as [Intent, Intent];
    emulator.control.payStaticCharge(a.remoteId as string);
    expect((await first.lightning.books.refresh(a.id))?.status).to.equal('completed');
    ledger.armed = b.id;
    emulator.control.payStaticCharge(b.remoteId as string);
    // Its callback moves the fee, and the ledger closes right after, before the follow-up.
    await eventually(() => ledger.armed === null, 5_000, 'the last fee moved in the first process');
    await first.lightning.close();

    const other = await otherProcess(path);
    await fundedOnce(other.game, match.id, other.funded);
    expect(toldFirst).to.deep.equal([]);
  });

  it('a replaced lost charge paid while the match is open: another process refunds it, once', async () => {
    const { path, ledger, first } = await closingProcess();
    const match = await first.lightning.matches.open({ entryFeeMsat: 40_000, seats: 2 });
    emulator.control.faults.add({
      method: 'POST',
      path: '/v0/static-charges',
      times: 1,
      mode: 'process-then-destroy',
    });
    const fee = await first.lightning.matches.enter({ matchId: match.id, playerId: 'alice' });
    const lostId = fee.meta.replaces as string;
    const lostCharge = emulator.control
      .staticCharges()
      .find((c) => c.internalId === 'alice' && c.id !== fee.remoteId);
    expect(lostCharge, 'the lost charge exists at the service').to.not.equal(undefined);
    ledger.armed = lostId;
    emulator.control.payStaticCharge(lostCharge?.id as string);
    // Its callback moves the lost fee, and the ledger closes right after, before the follow-up.
    await eventually(() => ledger.armed === null, 5_000, 'the lost fee moved in the first process');
    await first.lightning.close();

    const other = await otherProcess(path);
    const refund = await eventually(
      async () => {
        const group = await other.game.lightning.books.ledger.byGroup(match.id);
        return group.find((i) => i.meta.feeId === lostId && i.status === 'pending');
      },
      10_000,
      'the lost charge refunded by the other process',
    );
    expect(refund.playerId).to.equal('alice');
    await other.game.lightning.operator.reconciler.runOnce();
    const requests = emulator.control.withdrawalRequests().filter((w) => w.internalId === 'alice');
    expect(requests).to.have.length(1);
    expect((await other.game.lightning.matches.get(match.id)).status).to.equal('open');
  });

  it('a process SIGKILLed right after the move: another process funds the match, once', async () => {
    const path = join(dir, 'ledger.sqlite');
    const config = JSON.stringify({ apiKey: emulator.apiKey, baseUrl: emulator.url, ledger: path });
    child = spawn(process.execPath, [...(await nodeArgs(FIXTURE)), config], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child?.once('exit', (_code, signal) => resolve(signal)),
    );
    const reports: Record<string, unknown>[] = [];
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      reports.push(JSON.parse(line) as Record<string, unknown>);
    });
    const entered = await eventually(
      () => reports.find((r) => r.event === 'entered'),
      15_000,
      'the players entered in the child',
    );
    for (const remoteId of entered.fees as string[]) {
      expect(emulator.control.payStaticCharge(remoteId).status).to.equal('OK');
    }
    child.stdin?.write('read\n');
    expect(await exited).to.equal('SIGKILL');
    expect(reports.some((r) => r.event === 'alive')).to.equal(false);

    const other = await otherProcess(path);
    const matchId = entered.matchId as string;
    const moved = await other.game.lightning.books.ledger.byGroup(matchId);
    expect(moved.filter((i) => i.status === 'completed')).to.have.length(2);
    await fundedOnce(other.game, matchId, other.funded);
  });
});
