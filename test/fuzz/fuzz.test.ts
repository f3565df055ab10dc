import { expect } from 'chai';
import { type FuzzEnvironment, startFuzzEnvironment } from '../../fuzz/environment.js';
import { formatReports, passed, type Report, runTarget } from '../../fuzz/harness.js';
import { allTargets } from '../../fuzz/targets/index.js';

/**
 * The short form of `npm run fuzz` (which feeds 10,000 inputs per target): a few hundred bad
 * inputs to every PaymentsApi method that takes one, every server and room helper, every
 * route, every HTTP mount with hostile request lines and headers written raw (attach,
 * operator.console.attach, the router's endpoints and console: answered, below 500, and a normal request
 * answering after each), every match call, the region gate (forged forwarding headers at join, the client
 * address, upgrade URLs) and the CLI's arguments. Each must be refused (InvalidArgumentError,
 * or a 4xx), with nothing sent to the service, written to the ledger or emitted, and no
 * rejection left unhandled. FUZZ_RUNS and FUZZ_SEED work here too.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);

describe('fuzz (short): bad input is refused and goes nowhere', () => {
  let env: FuzzEnvironment;
  const reports: Report[] = [];

  before(async () => {
    env = await startFuzzEnvironment();
  });
  after(async () => {
    await env?.stop();
  });

  it(`every target, ${RUNS} inputs each`, async function () {
    this.timeout(120_000);
    const targets = allTargets(env);
    // 15 client methods, 7 server helpers, 2 books and operator reads, 4 operator actions, 8 room helpers, 3 routes, 4 HTTP
    // mounts written raw, 9 match calls, 3 of the region gate, the CLI.
    expect(targets).to.have.length(60);
    for (const target of targets) {
      reports.push(await runTarget(target, env.counters, { runs: RUNS, seed: SEED }));
    }
    const failing = reports.filter((r) => !passed(r));
    expect(failing.length, formatReports(failing)).to.equal(0);
    for (const r of reports) expect(r.runs, r.name).to.equal(RUNS);
    const sum = (what: 'runs' | 'requests' | 'writes' | 'events' | 'unhandled') =>
      reports.reduce((n, r) => n + r[what], 0);
    console.log(
      `      fuzz: ${sum('runs')} bad inputs over ${reports.length} targets, all refused; ` +
        `sent ${sum('requests')}, written ${sum('writes')}, events ${sum('events')}, unhandled ${sum('unhandled')}`,
    );
  });
});
