/**
 * Issue 31, finding 5: the service answers a reward's create while the ledger's server is down.
 * The helper rejects with AnswerNotRecordedError (not retryable, naming the remote id), never
 * with an error that says nothing was sent; the process keeps the answer and records it once
 * the ledger is back: the intent ends `pending` with its code, after one request at the service.
 */
import { randomUUID } from 'node:crypto';
import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { startEmulator } from '../../src/emulator/index.js';
import { PostgresLedger } from '../../src/ledger/index.js';
import { AnswerNotRecordedError } from '../../src/server/operations/errors.js';
import { eventually } from '../support/eventually.js';
import { type Game, quietLogger, startGame } from '../support/game.js';
import { type HoldingProxy, startHoldingProxy } from '../support/holding-proxy.js';
import { needPostgres } from '../support/needs.js';
import { type PostgresServer, startPostgres } from '../support/postgres.js';

class EmptyRoom extends Room {}

describe('server: an answer the ledger could not record is kept', function () {
  this.timeout(60_000);
  let server: PostgresServer;
  let proxy: HoldingProxy | undefined;
  let game: Game | undefined;
  let ledger: PostgresLedger | undefined;

  before(async function () {
    needPostgres(this);
    server = await startPostgres();
  });
  after(async () => server?.stop());
  afterEach(async () => {
    await game?.stop();
    await ledger?.close();
    await proxy?.close();
  });

  it('rejects with the remote id, not retryable, and records it once the ledger is back', async () => {
    ledger = new PostgresLedger(server.url, { schema: `t_${randomUUID().replaceAll('-', '')}` });
    const emulator = await startEmulator({ logger: quietLogger });
    proxy = await startHoldingProxy(emulator.url);
    game = await startGame(
      { empty: EmptyRoom },
      { ledger, emulator, baseUrl: proxy.url, reconciler: { enabled: false } },
    );
    proxy.hold('POST', '/v0/withdrawal-requests');
    const reward = game.lightning
      .reward({ playerId: 'John Smith', amountMsat: 20_000, description: 'x' })
      .catch((err: unknown) => err);
    await proxy.held();
    await server.kill();
    proxy.release();
    const err = await reward;

    const made = emulator.control.withdrawalRequests();
    expect(made).to.have.length(1);
    expect(err).to.be.instanceOf(AnswerNotRecordedError);
    const unrecorded = err as AnswerNotRecordedError;
    expect(unrecorded.retryable).to.equal(false);
    expect(unrecorded.remoteId).to.equal(made[0]?.id);
    expect(unrecorded.message).to.not.include('nothing was sent');
    expect(unrecorded.message).to.not.include(made[0]?.invoice.request as string);

    await server.start();
    const recorded = await eventually(
      async () => {
        const intent = await game?.lightning.books.ledger
          .get(unrecorded.intentId)
          .catch(() => null);
        return intent?.status === 'pending' ? intent : null;
      },
      20_000,
      'the kept answer recorded',
    );
    expect(recorded.remoteId).to.equal(made[0]?.id);
    expect(recorded.code).to.equal(made[0]?.invoice.request);
    const claims = await game.lightning.books.claims('John Smith');
    expect(claims.map((c) => c.intentId)).to.deep.equal([unrecorded.intentId]);
    expect(emulator.control.withdrawalRequests()).to.have.length(1);
  });
});
