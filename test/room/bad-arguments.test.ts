import type { Client } from '@colyseus/core';
import { expect } from 'chai';
import { InvalidArgumentError } from '../../src/api/errors.js';
import type { Game } from '../support/game.js';
import { type Arena, serverClient, startArena } from './support.js';

/** Calls that must fail before anything is recorded or sent, and the field each must name. */
function badCalls(
  lightning: Arena['plugins']['lightning'],
  client: Client,
): [string, string, () => Promise<unknown>][] {
  // The helpers are typed; games written in JavaScript (or fed by messages) are not.
  const p = lightning as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const call =
    (name: string, ...args: unknown[]) =>
    () =>
      (p[name] as (...a: unknown[]) => Promise<unknown>).apply(lightning, args);
  const ok = { amountMsat: 20_000, description: 'x' };
  const lookalike = { sessionId: 'x', userData: { playerId: 'eve', email: 'eve@example.com' } };
  return [
    ['negative reward', 'amountMsat', call('reward', client, { ...ok, amountMsat: -20_000 })],
    ['zero reward', 'amountMsat', call('reward', client, { ...ok, amountMsat: 0 })],
    ['fractional reward', 'amountMsat', call('reward', client, { ...ok, amountMsat: 20_000.5 })],
    ['huge reward', 'amountMsat', call('reward', client, { ...ok, amountMsat: 10n ** 30n })],
    ['unsafe number', 'amountMsat', call('reward', client, { ...ok, amountMsat: 2 ** 60 })],
    ['NaN reward', 'amountMsat', call('reward', client, { ...ok, amountMsat: Number.NaN })],
    ['text reward', 'amountMsat', call('reward', client, { ...ok, amountMsat: '2e4' })],
    ['object amount', 'amountMsat', call('reward', client, { ...ok, amountMsat: {} })],
    ['no description', 'description', call('reward', client, { amountMsat: 20_000 })],
    ['number description', 'description', call('reward', client, { ...ok, description: 5 })],
    ['long expiry', 'expiresIn', call('reward', client, { ...ok, expiresIn: 1e9 })],
    ['fractional expiry', 'expiresIn', call('reward', client, { ...ok, expiresIn: 60.5 })],
    ['someone else', 'playerId', call('reward', client, { ...ok, playerId: 'mallory' })],
    ['no arguments', 'reward', call('reward', client)],
    ['args not an object', 'reward', call('reward', client, 'lots')],
    ['empty player id', 'player', call('reward', '', ok)],
    ['player is a number', 'player', call('reward', 42, ok)],
    [
      '145-character success message',
      'successMessage',
      call('chargeEntryFee', client, { ...ok, successMessage: 'x'.repeat(145) }),
    ],
    ['negative fee', 'amountMsat', call('chargeEntryFee', client, { ...ok, amountMsat: -1 })],
    ['fee with a room id', 'roomId', call('chargeEntryFee', client, { ...ok, roomId: 'x' })],
    ['pay no address', 'lnAddress', call('payAddress', client, { amountMsat: 1000 })],
    [
      'pay a bad address',
      'lnAddress',
      call('payAddress', client, { amountMsat: 1000, lnAddress: 'alice@' }),
    ],
    [
      'pay a fractional amount',
      'amountMsat',
      call('payAddress', client, { amountMsat: 0.5, lnAddress: 'alice@emulator.test' }),
    ],
    [
      'pay for someone else',
      'playerId',
      call('payAddress', client, {
        amountMsat: 1000,
        lnAddress: 'alice@emulator.test',
        playerId: 'mallory',
      }),
    ],
    ['negative points', 'amount', call('spendPoints', client, { amount: -5 })],
    ['fractional points', 'amount', call('spendPoints', client, { amount: 2.5 })],
    ['huge points', 'amount', call('spendPoints', client, { amount: 1e300 })],
    ['points as text', 'amount', call('spendPoints', client, { amount: '5' })],
    ['bad currency', 'currency', call('spendPoints', client, { amount: 5, currency: 'usdz' })],
    ['spend for a user id', 'userId', call('spendPoints', client, { amount: 5, userId: 'u' })],
    ['widget metadata text', 'metadata', call('openWidget', client, { metadata: 'x' })],
    ['widget extra field', 'email', call('openWidget', client, { email: 'a@b.co' })],
    ['purchase bad email', 'email', call('openPurchase', client, { email: 'nope' })],
    ['purchase currency', 'quote_currency', call('openPurchase', client, { quote_currency: 1 })],
    ['no disclosures', 'typeIds', call('acceptDisclosures', client, [])],
    ['unknown disclosure', 'typeIds', call('acceptDisclosures', client, [4])],
    ['disclosures as text', 'typeIds', call('acceptDisclosures', client, '2,3')],
    // An object that only looks like a client (a session id and an email) is not one: the
    // session or debit would be made at the service, then fail to reach anyone.
    ['widget for a look-alike', 'client', call('openWidget', lookalike)],
    ['purchase for a look-alike', 'client', call('openPurchase', lookalike)],
    ['spend for a look-alike', 'client', call('spendPoints', lookalike, { amount: 5 })],
    ['disclose for a look-alike', 'client', call('acceptDisclosures', lookalike, [2])],
    ['email for a look-alike', 'client', call('updateEmail', lookalike, 'b@example.com')],
    ['widget for nobody', 'client', call('openWidget', undefined)],
    ['spend for a player id', 'client', call('spendPoints', 'alice', { amount: 5 })],
    ['bad email', 'email', call('updateEmail', client, 'not-an-email')],
    ['email as number', 'email', call('updateEmail', client, 5)],
  ];
}

describe('room: bad arguments', () => {
  let game: Game;
  afterEach(async () => game?.stop());

  it('are rejected with InvalidArgumentError before any request or ledger record', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, {
      playerId: 'alice',
      email: 'alice@example.com',
    });
    const ledger = game.store;
    let recorded = 0;
    const create = ledger.create.bind(ledger);
    ledger.create = (...args) => {
      recorded++;
      return create(...args);
    };
    const requestsBefore = game.emulator.control.count('*', /.*/);

    const wrong: string[] = [];
    for (const [what, field, run] of badCalls(room.plugins.lightning, serverClient(room, alice))) {
      const error = await run().then(
        () => null,
        (e: unknown) => e,
      );
      if (!(error instanceof InvalidArgumentError)) {
        wrong.push(`${what}: ${error === null ? 'accepted' : String(error)}`);
      } else if (!error.field.includes(field) && !error.message.includes(field)) {
        wrong.push(`${what}: names ${error.field} (${error.message}), not ${field}`);
      }
    }
    expect(wrong).to.deep.equal([]);
    expect(game.emulator.control.count('*', /.*/)).to.equal(requestsBefore);
    expect(recorded).to.equal(0);
    expect(room.state.lightning.rewards.size).to.equal(0);
    expect(room.state.lightning.entryFees.size).to.equal(0);
    expect(room.state.lightning.pointSpends.size).to.equal(0);

    // The same calls with good arguments do reach the service (the test can see a request).
    await room.plugins.lightning.reward(serverClient(room, alice), {
      amountMsat: 20_000,
      description: 'x',
    });
    expect(game.emulator.control.count('POST', '/v0/withdrawal-requests')).to.equal(1);
    expect(recorded).to.equal(1);
  });
});
