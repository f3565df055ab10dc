/**
 * Issue 25, finding 6: amounts in dollars. `fiat: { currency: 'USD', refreshMs }` reads the
 * service's BTC/USD price (`GET /v0/btcusd`, the emulator's settable one) and every client
 * decodes it in `state.lightning.price`; a failed read keeps the last price and is said once;
 * a currency the service does not publish is refused when the game starts. Without `fiat`, the
 * price is there too, empty (currency '', 0).
 */
import { expect } from 'chai';
import { ConfigurationError } from '../../src/errors.js';
import { createLightning } from '../../src/lightning.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';
import { type Arena, startArena } from './support.js';

type DecodedPrice = { currency: string; btcPrice: number; at: number };

function priceOn(sdkRoom: { state: unknown }): DecodedPrice | undefined {
  return (sdkRoom.state as { lightning?: { price?: DecodedPrice } }).lightning?.price;
}

describe('room: the BTC price in the state (issue 25, finding 6)', function () {
  this.timeout(20_000);
  let game: Game;
  afterEach(async () => game?.stop());

  it('syncs the service price to every client, follows it, and keeps it when a read fails', async () => {
    const warnings: string[] = [];
    const infos: string[] = [];
    const logger = {
      info: (m: string) => void infos.push(m),
      warn: (m: string) => void warnings.push(m),
      error: () => {},
    };
    const pricedAt = Date.UTC(2026, 10, 26, 12, 0, 0);
    game = await startArena(
      { reconciler: { enabled: false }, logger, fiat: { currency: 'USD', refreshMs: 40 } },
      {},
    );
    game.emulator.control.setBtcUsdPrice(97_123.45, pricedAt);
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    const bob = await game.colyseus.connectTo(room, { playerId: 'bob' });
    for (const client of [alice, bob]) {
      await eventually(() => priceOn(client)?.btcPrice === 97_123.45, 5_000, 'the price');
      expect(priceOn(client)).to.include({ currency: 'USD', at: pricedAt });
    }

    game.emulator.control.setBtcUsdPrice(101_000.5, pricedAt + 60_000);
    await eventually(() => priceOn(bob)?.btcPrice === 101_000.5, 5_000, 'the new price');
    expect(priceOn(bob)?.at).to.equal(pricedAt + 60_000);

    // The service fails: reads go on, the last price stays, one warning says so.
    const reads = () => game.emulator.control.count('GET', '/v0/btcusd');
    const fault = game.emulator.control.faults.add({ path: '/v0/btcusd', status: 500 });
    const before = reads();
    await eventually(() => reads() >= before + 8, 5_000, 'several failed reads');
    expect(warnings.filter((w) => w.includes('/v0/btcusd'))).to.have.length(1);
    expect(warnings[0]).to.include('keeping the last price');
    expect(priceOn(alice)).to.include({ btcPrice: 101_000.5, currency: 'USD' });

    fault.remove();
    game.emulator.control.setBtcUsdPrice(99_999.99, pricedAt + 120_000);
    await eventually(() => priceOn(alice)?.btcPrice === 99_999.99, 5_000, 'read again');
    expect(infos.filter((m) => m.includes('/v0/btcusd'))).to.have.length(1);
    expect(warnings.filter((w) => w.includes('/v0/btcusd'))).to.have.length(1);
  });

  it('without fiat, every client decodes the price empty: currency "" and 0', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const alice = await game.colyseus.connectTo(room, { playerId: 'alice' });
    await eventually(() => priceOn(alice), 5_000, 'the price object');
    expect(priceOn(alice)).to.include({ currency: '', btcPrice: 0, at: 0 });
    expect(game.emulator.control.count('GET', '/v0/btcusd')).to.equal(0);
  });

  it('refuses a currency the service does not publish, naming the field', () => {
    const refused = (() => {
      try {
        createLightning({ fiat: { currency: 'EUR' } });
      } catch (err) {
        return err;
      }
      return null;
    })();
    expect(refused).to.be.instanceOf(ConfigurationError);
    expect((refused as Error).message)
      .to.include('fiat.currency')
      .and.include("'USD'");
    expect(() => createLightning({ fiat: { currency: 'USD', refreshMs: 1_000 } })).to.not.throw();
  });
});
