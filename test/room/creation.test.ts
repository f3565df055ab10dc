/**
 * A room that uses the plugin but has no LightningState in its state fails when it is created,
 * with the fix in the message, before any player could try to pay (issue 16, finding 12).
 */
import { definePlugins, Room } from '@colyseus/core';
import { schema, t } from '@colyseus/schema';
import { ColyseusSDK } from '@colyseus/sdk';
import { expect } from 'chai';
import { type Game, startGame } from '../support/game.js';
import { current } from './support.js';

const NoLedgerState = schema({ round: t.number() }, 'NoLedgerState');

class Forgetful extends Room {
  override state = new NoLedgerState();
  override plugins = definePlugins([current.lightning?.plugin() as never]);
}

describe('room: creation', () => {
  let game: Game | undefined;
  afterEach(async () => {
    await game?.stop();
  });

  it('fails a room whose state has no LightningState when it is created, saying how to fix it', async () => {
    const lines: string[] = [];
    const logger = { info: () => {}, warn: () => {}, error: (m: string) => void lines.push(m) };
    game = await startGame({ forgetful: Forgetful }, { logger });
    current.lightning = game.lightning;
    const sdk = new ColyseusSDK(`ws://127.0.0.1:${game.port}`);
    const failure = await sdk.joinOrCreate('forgetful').then(
      () => null,
      (err: Error) => err,
    );
    expect(failure?.message)
      .to.include('has no LightningState')
      .and.include('lightning: LightningState');
    expect(await game.lightning.books.ledger.unknowns()).to.deep.equal([]);
    // The server's log says it too, once (issue 23, finding 5): the client is not the developer.
    expect(lines).to.have.length(1);
    expect(lines[0])
      .to.include('room forgetful not created')
      .and.include('lightning: LightningState');
  });
});
