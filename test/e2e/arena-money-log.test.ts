/**
 * The arena's money log (examples/arena/money-log.ts) says what a payout is, not what it will
 * be: a match's payout held for approval reads as waiting for an operator, and one the operator
 * rejected reads as rejected and not paid, never as money sent to the player.
 */
import { expect } from 'chai';
import { logMoney } from '../../examples/arena/money-log.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';

describe('arena: the money log', () => {
  let game: Game | undefined;
  afterEach(async () => game?.stop());

  it('says a held payout waits for approval, and a rejected one was not paid', async () => {
    game = await startGame(
      {},
      { reconciler: { enabled: false }, approvals: { aboveMsat: 50_000 } },
    );
    const { lightning, emulator } = game;
    const lines: string[] = [];
    logMoney(lightning, (line) => lines.push(line));
    const match = await lightning.matches.open({ entryFeeMsat: 100_000, rake: 0.1 });
    for (const playerId of ['winner-w', 'loser-l']) {
      const fee = await lightning.matches.enter({ matchId: match.id, playerId });
      emulator.control.payStaticCharge(fee.remoteId as string);
      await eventually(
        async () => (await lightning.books.ledger.get(fee.id))?.status === 'completed',
      );
    }
    const settled = await lightning.matches.settle(match.id, { 'winner-w': 1 });
    const payout = settled.payouts[0];
    expect(payout?.status).to.equal('held');
    const about = (id: string) => lines.filter((l) => l.includes(id));
    const held = await eventually(() => about(payout?.intentId as string)[0], 5_000, 'held');
    expect(held).to.include("held: waits for an operator's approval");

    await lightning.operator.reject(payout?.intentId as string, 'ops-ann', 'looks like a farm');
    const rejected = await eventually(() => about(payout?.intentId as string)[1], 5_000);
    expect(rejected).to.include('REJECTED by ops-ann, not paid');
    // The match settles once its held payout is decided: its line says the payout was not paid.
    const line = await eventually(
      () => about(match.id).find((l) => l.includes('settled')),
      5_000,
      'the match settled',
    );
    expect(line).to.include('180000 msat for player winner-w (not paid)');
    expect(lines.join('\n')).to.not.include('(paid)');
  });
});
