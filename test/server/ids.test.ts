/**
 * Issue 31, finding 1: one rule for a game's ids (src/ids.ts), checked where a call enters and
 * again by the journal. An id with a space ("John Smith", "Jane Doe") is an id: its reward is
 * recorded, sent and claimable, its match settles; an id the rule refuses is refused before
 * the ledger or the service hears of it. On SQLite and PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import fc from 'fast-check';
import { InvalidArgumentError } from '../../src/errors.js';
import { ID_RULE, idProblem, isId } from '../../src/ids.js';
import { PostgresLedger, SqliteLedger } from '../../src/ledger/index.js';
import { isAccount } from '../../src/ledger/journal.js';
import type { LedgerStore } from '../../src/ledger/store.js';
import { type Game, startGame } from '../support/game.js';
import { needPostgres } from '../support/needs.js';
import { type PostgresServer, startPostgres } from '../support/postgres.js';

class EmptyRoom extends Room {}

describe('ids: one rule, before the ledger and the service', () => {
  it('the journal takes an account for exactly the ids the edge takes', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 300 }),
          fc.string({ unit: 'grapheme', maxLength: 260 }),
          fc.constantFrom('John Smith', 'Jane Doe', ' ', 'a\tb', 'a\nb', '\0', '\uD800', 'é'),
        ),
        (id) => {
          expect(isAccount(`claimable:${id}`)).to.equal(isId(id));
          expect(isId(id)).to.equal(idProblem(id) === null);
        },
      ),
      { numRuns: 2_000 },
    );
    expect(isId('x'.repeat(255))).to.equal(true);
    expect(isId('x'.repeat(256))).to.equal(false);
    expect(isId('😀'.repeat(127))).to.equal(true);
  });

  for (const store of ['sqlite', 'postgres'] as const) {
    describe(`on ${store}`, function () {
      this.timeout(30_000);
      let server: PostgresServer | undefined;
      let game: Game;
      let ledger: LedgerStore;

      before(async function () {
        if (store === 'postgres') {
          needPostgres(this);
          server = await startPostgres();
        }
      });
      after(async () => server?.stop());
      beforeEach(async () => {
        ledger =
          server === undefined
            ? new SqliteLedger({ path: ':memory:' })
            : new PostgresLedger(server.url, { schema: `t_${randomUUID().replaceAll('-', '')}` });
        game = await startGame({ empty: EmptyRoom }, { ledger, reconciler: { enabled: false } });
      });
      afterEach(async () => {
        await game?.stop();
        await ledger?.close();
      });

      const creates = () =>
        game.emulator.control.requests.filter((r) => r.method === 'POST').length;

      it('pays a reward to "John Smith": recorded, sent once, claimable', async () => {
        const intent = await game.lightning.reward({
          playerId: 'John Smith',
          amountMsat: 20_000,
          description: 'first blood',
        });
        expect(intent.status).to.equal('pending');
        expect(intent.remoteId).to.be.a('string');
        expect(creates()).to.equal(1);
        const claims = await game.lightning.books.claims('John Smith');
        expect(claims.map((c) => c.intentId)).to.deep.equal([intent.id]);
        const page = await game.lightning.books.journal({ playerId: 'John Smith' });
        expect(page.entries.some((e) => e.credit === 'claimable:John Smith')).to.equal(true);
      });

      it('settles a match won by "Jane Doe", paying her', async () => {
        const match = await game.lightning.matches.open({ entryFeeMsat: 20_000, seats: 2 });
        for (const playerId of ['Jane Doe', 'Ann Lee']) {
          const fee = await game.lightning.matches.enter({ matchId: match.id, playerId });
          game.emulator.control.payStaticCharge(fee.remoteId as string);
          expect((await game.lightning.books.refresh(fee.id))?.status).to.equal('completed');
        }
        const settled = await game.lightning.matches.settle(match.id, { 'Jane Doe': 1 });
        expect(settled.status).to.equal('settled');
        const claims = await game.lightning.books.claims('Jane Doe');
        expect(claims).to.have.length(1);
        expect(claims[0]?.amountMsat).to.equal('40000');
      });

      for (const [name, id] of [
        ['a newline', 'John\nSmith'],
        ['a NUL', 'a\0b'],
        ['a lone surrogate', 'a\uD800b'],
        ['256 characters', 'x'.repeat(256)],
      ] as const) {
        it(`refuses an id with ${name} before anything is recorded or sent`, async () => {
          const before = creates();
          const err = await game.lightning
            .reward({ playerId: id, amountMsat: 20_000, description: 'x' })
            .then(
              () => null,
              (e: unknown) => e,
            );
          expect(err).to.be.instanceOf(InvalidArgumentError);
          expect((err as InvalidArgumentError).field).to.equal('playerId');
          if (name !== '256 characters') expect((err as Error).message).to.contain(ID_RULE);
          expect(creates()).to.equal(before);
          expect(await game.lightning.books.claims('John Smith')).to.deep.equal([]);
          const match = await game.lightning.matches.open({ entryFeeMsat: 20_000, seats: 2 });
          const entry = await game.lightning.matches
            .enter({ matchId: match.id, playerId: id })
            .then(
              () => null,
              (e: unknown) => e,
            );
          expect(entry).to.be.instanceOf(InvalidArgumentError);
          expect(creates()).to.equal(before);
        });
      }
    });
  }
});
