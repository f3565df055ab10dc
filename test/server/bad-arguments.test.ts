import { Room } from '@colyseus/core';
import { expect } from 'chai';
import { InvalidArgumentError } from '../../src/errors.js';
import type { Lightning } from '../../src/lightning.js';
import { type Game, startGame } from '../support/game.js';

class EmptyRoom extends Room {}

/**
 * Issue 13, finding 6: the server helpers answer bad input with a rejected promise holding an
 * InvalidArgumentError, never a synchronous throw and never a raw error of the store beneath
 * (node:sqlite's "cannot be bound"), and neither the ledger nor the service hears of it.
 */
function badCalls(lightning: Lightning): [string, string, () => unknown][] {
  // Typed for TypeScript users; JavaScript games and admin scripts pass anything.
  // A call by its path on the face: `reward`, `books.refresh`, `operator.resolve`.
  const call =
    (path: string, ...args: unknown[]) =>
    () => {
      const names = path.split('.');
      const method = names.pop() as string;
      const owner = names.reduce<object>(
        (o, name) => (o as Record<string, object>)[name] as object,
        lightning,
      );
      const fn = (owner as Record<string, (...a: unknown[]) => unknown>)[method];
      return (fn as (...a: unknown[]) => unknown).apply(owner, args);
    };
  const reward = { playerId: 'p1', amountMsat: 20_000, description: 'x' };
  const pay = { playerId: 'p1', amountMsat: 20_000, lnAddress: 'p1@emulator.test' };
  return [
    ['refresh an object', 'id', call('books.refresh', { id: 'x' })],
    ['refresh a number', 'id', call('books.refresh', 42)],
    ['refresh a symbol', 'id', call('books.refresh', Symbol('x'))],
    ['refresh a bigint', 'id', call('books.refresh', 5n)],
    ['refresh an array', 'id', call('books.refresh', ['x'])],
    ['refresh nothing', 'id', call('books.refresh')],
    ['refresh an empty id', 'id', call('books.refresh', '')],
    ['refresh a huge id', 'id', call('books.refresh', 'x'.repeat(10_000))],
    ['unknowns of text', 'limit', call('operator.unknowns', 'ten')],
    ['unknowns of -1', 'limit', call('operator.unknowns', -1)],
    ['unknowns of 1.5', 'limit', call('operator.unknowns', 1.5)],
    ['unknowns of an object', 'limit', call('operator.unknowns', {})],
    ['unknowns of a billion', 'limit', call('operator.unknowns', 1e9)],
    ['resolve an object id', 'id', call('operator.resolve', {}, 'failed', 'why')],
    ['resolve to pending', 'status', call('operator.resolve', 'x', 'pending', 'why')],
    ['resolve without a note', 'note', call('operator.resolve', 'x', 'failed')],
    ['reward nothing', '', call('reward')],
    ['reward a string', '', call('reward', 'lots')],
    ['reward a negative amount', 'amountMsat', call('reward', { ...reward, amountMsat: -1 })],
    ['reward an object id', 'playerId', call('reward', { ...reward, playerId: {} })],
    ['fee a NaN amount', 'amountMsat', call('chargeEntryFee', { ...reward, amountMsat: NaN })],
    ['fee an extra field', 'nope', call('chargeEntryFee', { ...reward, nope: 1 })],
    ['spend no user', 'userId', call('spendPoints', { playerId: 'p1', amount: 5 })],
    ['spend a symbol', '', call('spendPoints', Symbol('x'))],
    [
      'pay an address without a domain',
      'lnAddress',
      call('payAddress', { ...pay, lnAddress: 'p1' }),
    ],
    [
      'pay an address with a slash',
      'lnAddress',
      call('payAddress', { ...pay, lnAddress: 'a/b@x.example' }),
    ],
    ['pay a zero amount', 'amountMsat', call('payAddress', { ...pay, amountMsat: 0 })],
    ['pay with a description', 'description', call('payAddress', { ...pay, description: 'x' })],
    [
      'pay with a long comment',
      'comment',
      call('payAddress', { ...pay, comment: 'x'.repeat(256) }),
    ],
  ];
}

describe('server: bad arguments to the helpers', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it('reject with InvalidArgumentError, record nothing and send nothing', async () => {
    game = await startGame({ empty: EmptyRoom }, { reconciler: { enabled: false } });
    const ledger = game.store;
    let recorded = 0;
    const create = ledger.create.bind(ledger);
    ledger.create = (...args) => {
      recorded++;
      return create(...args);
    };
    const requestsBefore = game.emulator.control.count('*', /.*/);

    const wrong: string[] = [];
    for (const [what, field, run] of badCalls(game.lightning)) {
      let result: unknown;
      try {
        result = run();
      } catch (err) {
        wrong.push(`${what}: threw synchronously (${String(err)})`);
        continue;
      }
      if (!(result instanceof Promise)) {
        wrong.push(`${what}: returned no promise`);
        continue;
      }
      const error = await result.then(
        () => null,
        (e: unknown) => e,
      );
      if (!(error instanceof InvalidArgumentError)) {
        wrong.push(`${what}: ${error === null ? 'accepted' : String(error)}`);
      } else if (!error.field.startsWith(field)) {
        wrong.push(`${what}: names ${error.field} (${error.message}), not ${field}`);
      }
    }
    expect(wrong).to.deep.equal([]);
    expect(recorded).to.equal(0);
    expect(game.emulator.control.count('*', /.*/)).to.equal(requestsBefore);

    // Good arguments still work: an unknown id is null, the list is empty.
    expect(await game.lightning.books.refresh('no-such-intent')).to.equal(null);
    expect(await game.lightning.operator.unknowns(10)).to.deep.equal([]);
    expect(await game.lightning.operator.unknowns()).to.deep.equal([]);
  });
});
