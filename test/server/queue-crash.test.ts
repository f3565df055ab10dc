/**
 * A process SIGKILLed mid-drain (issue 26): it settled a match of 20 winners, whose payouts went
 * to the queue, and sent a few of them at its slow rate when it was killed. Another process on
 * the same PostgreSQL ledger sends the rest once the dead one's leases end: every winner gets exactly one
 * withdrawal request, the dead process's and the live one's together, and the match settles.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import { createLightning, type Lightning } from '../../src/lightning.js';
import { eventually } from '../support/eventually.js';
import { quietLogger } from '../support/game.js';
import { nodeArgs } from '../support/node-child.js';
import { openPaidMatch } from '../support/paid-match.js';
import { freshSchema } from '../support/postgres.js';
import { postgresWorld } from '../support/postgres-world.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/queue-process.ts', import.meta.url));

describe('the payout queue: a process killed mid-drain', function () {
  this.timeout(30_000);
  let child: ChildProcess | undefined;
  const world = postgresWorld(() => child?.kill('SIGKILL'));

  function processOn(schema: string, port: number, reconciler: boolean): Lightning {
    const ledger = new PostgresLedger(world.pg.url, { schema, durability: 'none' });
    world.closing.push(ledger);
    const lightning = createLightning({
      apiKey: world.emulator.apiKey,
      baseUrl: world.emulator.url,
      publicUrl: `http://127.0.0.1:${port}`,
      logger: quietLogger,
      ledger,
      reconciler: reconciler ? { intervalMs: 100 } : { enabled: false },
    });
    world.closing.push(lightning);
    return lightning;
  }

  it('another process sends what it left, each payout once, and the match settles', async () => {
    const schema = freshSchema();
    const setup = processOn(schema, 2010, false);
    await setup.ready();
    const paid = await openPaidMatch(setup, world.emulator, 20, 'crash');
    const config = JSON.stringify({
      apiKey: world.emulator.apiKey,
      baseUrl: world.emulator.url,
      ledgerUrl: world.pg.url,
      schema,
      matchId: paid.matchId,
      shares: paid.shares,
    });
    child = spawn(process.execPath, [...(await nodeArgs(FIXTURE)), config], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    const reports: Record<string, unknown>[] = [];
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      reports.push(JSON.parse(line) as Record<string, unknown>);
    });
    const settled = await eventually(
      () => reports.find((r) => r.event === 'settled'),
      15_000,
      'the child settled',
    );
    expect(settled).to.include({ status: 'settling', total: 20 });

    // Killed between two sends (2 a second): a few payouts made, the rest queued or leased.
    const requests = () => world.emulator.control.withdrawalRequests();
    await eventually(
      async () => {
        const sent = requests().length;
        if (sent < 3) return false;
        const view = await setup.matches.get(paid.matchId);
        return view.made === sent;
      },
      15_000,
      'the child sent a few payouts, each answered',
    );
    child.kill('SIGKILL');
    await exited;
    // The crash left the match part paid: still settling, some payouts for the survivor to send.
    const byChild = requests().length;
    expect(byChild).to.be.at.least(3);
    expect(await setup.matches.get(paid.matchId)).to.include({ status: 'settling', total: 20 });

    const survivor = processOn(schema, 2012, true);
    await survivor.ready();
    await eventually(
      async () => (await survivor.matches.get(paid.matchId)).status === 'settled',
      15_000,
      'the survivor finishes the match',
    );
    const all = requests();
    const players = all.map((w) => w.internalId).sort();
    expect(players).to.deep.equal(Object.keys(paid.shares).sort(), 'one request per winner');
    const ports = all.map((w) => new URL(w.callbackUrl ?? '').port);
    expect(ports.filter((p) => p === '2011')).to.have.length(byChild);
    expect(ports.filter((p) => p === '2012')).to.have.length(20 - byChild);
  });
});
