/**
 * Issue 31, finding 3: a match's seats are held by the ledger, in each fee's create. Two
 * processes of a game (two Lightning instances on one PostgreSQL ledger) racing players into a
 * match admit exactly `seats` of them, whatever the timing; the others are refused with
 * MatchSeatError 'full' and nothing is charged for them; a seat given back is taken again.
 */
import { randomUUID } from 'node:crypto';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { type Emulator, startEmulator } from '../../src/emulator/index.js';
import { MatchSeatError } from '../../src/errors.js';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import { type Game, quietLogger, startGame } from '../support/game.js';
import { needPostgres } from '../support/needs.js';
import { type PostgresServer, postgresAvailable, startPostgres } from '../support/postgres.js';

class EmptyRoom extends Room {}

describe('matches: the last seat goes to one player, whatever the processes', function () {
  this.timeout(30_000);
  let pg: PostgresServer | undefined;
  let emulator: Emulator;
  const games: Game[] = [];
  const ledgers: PostgresLedger[] = [];

  before(async function () {
    needPostgres(this);
    if (postgresAvailable()) pg = await startPostgres({ durable: false });
  });
  after(async () => pg?.stop());
  beforeEach(async () => {
    emulator = await startEmulator({ logger: quietLogger });
  });
  afterEach(async () => {
    for (const game of games.splice(0)) await game.stop();
    for (const ledger of ledgers.splice(0)) await ledger.close();
    await emulator.close();
  });

  /** Two processes of one game: a Lightning each, on one PostgreSQL ledger. */
  async function twoProcesses(): Promise<[Game, Game]> {
    const schema = `t_${randomUUID().replaceAll('-', '')}`;
    for (let i = 0; i < 2; i++) {
      const ledger = new PostgresLedger((pg as PostgresServer).url, { schema, durability: 'none' });
      ledgers.push(ledger);
      games.push(
        await startGame({ empty: EmptyRoom }, { emulator, ledger, reconciler: { enabled: false } }),
      );
    }
    return games as [Game, Game];
  }

  it('admits exactly `seats` of twelve players racing in through two processes', async () => {
    const [a, b] = await twoProcesses();
    const match = await a.lightning.matches.open({ entryFeeMsat: 20_000, seats: 3 });
    const players = Array.from({ length: 12 }, (_, i) => `player-${i}`);
    const entries = await Promise.allSettled(
      players.map((playerId, i) =>
        (i % 2 === 0 ? a : b).lightning.matches.enter({ matchId: match.id, playerId }),
      ),
    );
    const admitted = entries.filter((e) => e.status === 'fulfilled');
    const refused = entries.flatMap((e) => (e.status === 'rejected' ? [e.reason] : []));
    expect(admitted).to.have.length(3);
    expect(refused).to.have.length(9);
    for (const err of refused) {
      expect(err).to.be.instanceOf(MatchSeatError);
      expect((err as MatchSeatError).reason).to.equal('full');
    }
    const view = await b.lightning.matches.get(match.id);
    expect(view.entered).to.equal(3);
    // Nothing was charged for a refused player.
    expect(emulator.control.staticCharges()).to.have.length(3);
  });

  it('gives the last seat to one of two players entering at once, one in each process, and takes a given-back seat again', async () => {
    const [a, b] = await twoProcesses();
    for (let round = 0; round < 5; round++) {
      const match = await a.lightning.matches.open({ entryFeeMsat: 20_000, seats: 2 });
      await a.lightning.matches.enter({ matchId: match.id, playerId: 'first' });
      const racing = await Promise.allSettled([
        a.lightning.matches.enter({ matchId: match.id, playerId: 'ann' }),
        b.lightning.matches.enter({ matchId: match.id, playerId: 'bob' }),
      ]);
      expect(
        racing.filter((r) => r.status === 'fulfilled'),
        `round ${round}`,
      ).to.have.length(1);
      expect((await a.lightning.matches.get(match.id)).entered).to.equal(2);
      // The winner's fee ends unpaid (its deadline passed, its charge closed): the seat is free.
      const fee = racing.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))[0];
      if (fee === undefined) throw new Error('no winner');
      const loser = fee.playerId === 'ann' ? 'bob' : 'ann';
      await a.store.update(fee.id, 'pending', { expiresAt: 1 });
      expect((await a.lightning.books.refresh(fee.id))?.status).to.equal('expired');
      const again = await b.lightning.matches.enter({ matchId: match.id, playerId: loser });
      expect(again.status).to.equal('pending');
      expect((await b.lightning.matches.get(match.id)).entered).to.equal(2);
    }
  });
});
