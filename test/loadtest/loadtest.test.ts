/**
 * The load test, short form (loadtest/run.ts; the default form is `npm run loadtest`): two game
 * processes on RedisPresence + RedisDriver and one PostgreSQL ledger, the emulator limiting the
 * key's rate, 60 bots seated by a queue at four-seat tables (some leaving early), a 50-winner
 * tournament settle, one process SIGKILLed and started again half-way; then every invariant
 * checked against the emulator's records, the ledger and its journal. No timing is asserted: the figures are printed.
 */
import { expect } from 'chai';
import { SHORT } from '../../loadtest/options.js';
import { runLoadtest } from '../../loadtest/run.js';
import { printFigures } from '../../soak/figures.js';
import { needPostgres, needRedis } from '../support/needs.js';

describe('loadtest: a crowd of bots, a tournament settle and a SIGKILL on two processes', function () {
  this.timeout(120_000);

  before(function () {
    needRedis(this);
    needPostgres(this);
  });

  it('keeps every invariant, checked against the service, the ledger and its journal', async () => {
    const result = await runLoadtest({ ...SHORT, seed: 7, log: () => {} });
    const lines: string[] = [];
    printFigures(result.figures.rows, (line) => lines.push(`      ${line}`));
    console.log(lines.join('\n'));
    const broken = result.checks
      .filter((c) => c.violations.length > 0)
      .map((c) => `${c.name}:\n  ${c.violations.slice(0, 10).join('\n  ')}`);
    expect(broken).to.deep.equal([]);
    // The run proved something only if these happened.
    const row = (name: string) => result.figures.rows.find((r) => r.name === name)?.value ?? '';
    expect(row('SIGKILL')).to.match(/^at /);
    // Every entrant saw its code, but one whose payout the SIGKILL left unknown (excused,
    // counted: no code before its deadline, never sent twice).
    const codes = result.checks.find((c) => c.name.startsWith('every tournament entrant'));
    expect(result.figures.tournamentSettleToScreen.n + (codes?.excused ?? 0)).to.equal(
      SHORT.winners,
    );
    // Tables played rounds to their end: a player saw the round settle, won or lost. (Who won
    // which table, against where the SIGKILL lands, is a matter of timing.)
    expect(row('table outcomes')).to.match(/(won|lost) [1-9]/);
    expect(row('table outcomes')).to.match(/left early [1-9]/);
    // The queue seats players four at a time: no player waits out its patience at a table that
    // never fills (a burst of joinOrCreate left most at one).
    expect(row('table outcomes')).not.to.match(/impatient/);
  });
});
