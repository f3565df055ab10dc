/**
 * The fault soak, short form (soak/runner.ts; the long form is `npm run soak -- --ops 10000`):
 * 400 ops (rewards, fees, spends, match steps, tab credits and withdrawals) by real SDK clients over three game processes
 * on one durable PostgreSQL ledger (presence on Redis), with emulator faults, bad callback
 * weather, a game process SIGKILLed with creates in flight and PostgreSQL SIGKILLed, then every invariant checked against the
 * emulator's records, the ledger and its journal. About 30 s on 2 cores; the figures are
 * printed either way, the violations when one broke.
 */
import { expect } from 'chai';
import { printFigures } from '../../soak/figures.js';
import { runSoak } from '../../soak/runner.js';

describe('soak: rewards, fees, spends, matches and tabs through faults, a process kill and a PostgreSQL kill', function () {
  // A ceiling, not a claim: the run shares two cores with another suite under `npm test`.
  this.timeout(120_000);

  it('keeps every invariant, checked against the service, the ledger and its journal', async () => {
    // One seed, so that npm test plays the same storm each run; `npm run soak` draws a new one.
    const result = await runSoak({ ops: 400, seed: 7 });
    const lines: string[] = [];
    printFigures(result.figures, (line) => lines.push(`      ${line}`));
    console.log(lines.join('\n'));
    const broken = result.checks
      .filter((c) => c.violations.length > 0)
      .map((c) => `${c.name}:\n  ${c.violations.slice(0, 10).join('\n  ')}`);
    if (broken.length > 0 && result.output) console.error(result.output.slice(-3_000));
    expect(broken, `seed ${result.seed}`).to.deep.equal([]);
    // The storm really happened: the run proved something only if these are not zero.
    const figure = (name: string) => result.figures.find((f) => f.name === name)?.value ?? '';
    expect(figure('went through unknown')).to.not.equal('0');
    expect(
      result.figures.some((f) => f.section === 'crashes' && f.name.includes('postgresql')),
    ).to.equal(true);
    expect(figure('node2 SIGKILL')).to.match(/^[1-9]/);
    // Matches were played and paid: some settled, some codes claimed, the journal written.
    expect(figure('ended')).to.match(/settled [1-9]/);
    expect(figure('payouts (attempts)')).to.match(/code claimed [1-9]/);
    expect(figure('entries')).to.match(/^[1-9]/);
    // Tabs were credited and withdrawn, and the journal's checks above held with them.
    expect(figure('credit')).to.match(/^[1-9][0-9]*: completed [1-9]/);
    expect(figure('withdrawal')).to.match(/^[1-9]/);
  });
});
