/**
 * Issue 31, findings 2 and 4: a match's facts and their events hang on the ledger. When the
 * ledger goes away just as a match's end is being told (the moment a PostgreSQL restart hit in
 * the soak), the end is not lost: the next look at the match, by any process, tells it, once.
 * A funded mark is written before its event's once-marker, so a stop between the two leaves a
 * funded match whose event the next look tells.
 */
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { LedgerUnavailableError } from '../../src/ledger/errors.js';
import { type Intent, isTerminal } from '../../src/ledger/intent.js';
import { SqliteLedger } from '../../src/ledger/sqlite.js';
import type { LedgerStore } from '../../src/ledger/store.js';
import type { MatchView } from '../../src/server/match/view.js';
import { eventually } from '../support/eventually.js';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

/** A ledger whose reads of one group fail once, when armed: the server went away a moment. */
class BlinkingLedger extends SqliteLedger implements LedgerStore {
  armed: string | null = null;

  override async byGroup(groupId: string): Promise<Intent[]> {
    if (this.armed === groupId) {
      const match = await super.get(groupId);
      // Fails at the first read of the group once the match's end is in the ledger.
      if (match && (isTerminal(match.status) || match.meta.ended === true)) {
        this.armed = null;
        throw new LedgerUnavailableError({ cause: new Error('connect ECONNREFUSED') });
      }
    }
    return super.byGroup(groupId);
  }
}

describe('matches: an end told once, whatever stops in between', function () {
  this.timeout(20_000);
  let game: Game | undefined;
  let ledger: BlinkingLedger | undefined;
  afterEach(async () => {
    await game?.stop();
    await ledger?.close();
  });

  it('a settle whose end could not be told is told by the next look, once', async () => {
    ledger = new BlinkingLedger({ path: ':memory:' });
    game = await startGame({ empty: EmptyRoom }, { ledger, reconciler: { enabled: false } });
    const lightning = game.lightning;
    const settled: MatchView[] = [];
    lightning.on('match.settled', (view) => settled.push(view));
    const match = await lightning.matches.open({ entryFeeMsat: 20_000, seats: 2 });
    for (const playerId of ['ann', 'bob']) {
      const fee = await lightning.matches.enter({ matchId: match.id, playerId });
      game.emulator.control.payStaticCharge(fee.remoteId as string);
      expect((await lightning.books.refresh(fee.id))?.status).to.equal('completed');
    }
    ledger.armed = match.id;
    await lightning.matches.settle(match.id, { ann: 1 }).catch(() => null);
    expect(ledger.armed).to.equal(null);
    // The next look (the reconciler's, any process's): here a refresh of the match.
    await eventually(
      async () => {
        await lightning.books.refresh(match.id).catch(() => null);
        return settled.length > 0;
      },
      5_000,
      'match.settled told',
    );
    await lightning.books.refresh(match.id);
    expect((await lightning.matches.get(match.id)).status).to.equal('settled');
    expect((await lightning.books.ledger.get(match.id))?.status).to.equal('completed');
    expect(settled).to.have.length(1);
    expect(settled[0]?.status).to.equal('settled');
  });

  it('a funded match whose event was not told is told by the next fee move, once', async () => {
    ledger = new BlinkingLedger({ path: ':memory:' });
    game = await startGame({ empty: EmptyRoom }, { ledger, reconciler: { enabled: false } });
    const lightning = game.lightning;
    const funded: MatchView[] = [];
    lightning.on('match.funded', (view) => funded.push(view));
    const match = await lightning.matches.open({ entryFeeMsat: 20_000, seats: 1 });
    const fee = await lightning.matches.enter({ matchId: match.id, playerId: 'ann' });
    // A process marked it funded and stopped before its event's marker (written as it would).
    const record = await lightning.books.ledger.get(match.id);
    await game.store.update(match.id, 'creating', {
      meta: { ...(record?.meta ?? {}), funded: true },
    });
    game.emulator.control.payStaticCharge(fee.remoteId as string);
    expect((await lightning.books.refresh(fee.id))?.status).to.equal('completed');
    await eventually(() => funded.length > 0, 5_000, 'match.funded told');
    expect(funded).to.have.length(1);
    expect(funded[0]?.funded).to.equal(true);
  });
});
