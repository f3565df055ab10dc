/**
 * The kit's views of `room.state.lightning`, over the contract's state (purpose, matchId,
 * price) and over a server before it (no purpose, maps missing): the purpose told from the
 * field, the amounts in msats and exact sats, the status read safely, what to do with a code.
 */
import { expect } from 'chai';
import {
  entriesOf,
  matchesOf,
  matchOf,
  priceOf,
  type SyncedEntry,
  type SyncedLightning,
  tabOf,
} from '../../src/client/index.js';
import {
  ContractEntryFee,
  ContractMatch,
  ContractReward,
  ContractTab,
  encoded,
  entryOf,
} from './contract.js';

const map = <V>(entries: Record<string, V>) => new Map(Object.entries(entries));

describe('client kit: views of the synced state', () => {
  it('tells a payout from a refund, with its match, amounts and expiry (a decoded Schema state)', () => {
    const room = encoded();
    room.state.lightning.rewards.set(
      'p1',
      new ContractReward({
        ...entryOf({
          purpose: 'payout',
          matchId: 'm1',
          amount: '180000',
          code: 'LNURL1X',
          expiresAt: 1_800_000_000_000,
        }),
        kind: 'reward',
      }),
    );
    room.state.lightning.rewards.set(
      'r1',
      new ContractReward({
        ...entryOf({ purpose: 'refund', matchId: 'm2', amount: '100500', code: 'LNURL1Y' }),
        kind: 'reward',
      }),
    );
    room.state.lightning.entryFees.set(
      'f1',
      new ContractEntryFee({
        ...entryOf({ purpose: 'fee', matchId: 'm1', status: 'completed', code: 'LNURL1Z' }),
        kind: 'entryFee',
      }),
    );
    room.sync();
    const views = entriesOf(room.client.lightning);
    expect(views.map((v) => [v.id, v.purpose, v.matchId, v.action])).to.deep.equal([
      ['f1', 'fee', 'm1', null],
      ['p1', 'payout', 'm1', 'claim'],
      ['r1', 'refund', 'm2', 'claim'],
    ]);
    expect(views[1]).to.deep.include({
      amountMsat: '180000',
      sats: '180',
      status: 'pending',
      open: true,
      expiresAt: 1_800_000_000_000,
      code: 'LNURL1X',
      lnAddress: '',
    });
    expect(views[2]).to.deep.include({ sats: '100.5', expiresAt: null });
    expect(views[0]).to.deep.include({ status: 'completed', open: false });
  });

  it('reads held and queued payouts as open with nothing to do yet, and an unknown status as unknown', () => {
    const lightning: SyncedLightning = {
      rewards: map<SyncedEntry>({
        a: entryOf({ purpose: 'payout', status: 'held', code: 'LNURL1A' }),
        b: entryOf({ purpose: 'payout', status: 'queued', code: 'LNURL1B' }),
        c: entryOf({ purpose: 'payout', status: 'teleported', code: 'LNURL1C' }),
      }),
    };
    expect(entriesOf(lightning).map((v) => [v.status, v.open, v.action])).to.deep.equal([
      ['held', true, null],
      ['queued', true, null],
      ['unknown', true, null],
    ]);
  });

  it('reads points in their unit, with no msats or sats', () => {
    const [spend] = entriesOf({
      pointSpends: map({ s: entryOf({ purpose: 'spend', unit: 'USDZ', amount: '150', code: '' }) }),
    });
    expect(spend).to.deep.include({
      purpose: 'spend',
      amount: '150',
      unit: 'USDZ',
      amountMsat: null,
      sats: null,
      action: null,
    });
  });

  it('falls back on the map for a server that syncs no purpose, and reads missing maps as empty', () => {
    const old = (fields: object): SyncedEntry => ({
      status: 'pending',
      amount: '1000',
      unit: 'msats',
      description: 'old',
      expiresAt: 0,
      code: 'LNURL1OLD',
      ...fields,
    });
    const views = entriesOf({
      rewards: map({ r: old({ kind: 'reward' }) }),
      entryFees: map({ f: old({ kind: 'entryFee' }) }),
      payments: map({ p: old({ kind: 'payment', code: undefined, lnAddress: 'a@b.c' }) }),
    });
    expect(views.map((v) => [v.id, v.purpose, v.matchId, v.action])).to.deep.equal([
      ['f', 'fee', '', 'pay'],
      ['r', 'reward', '', 'claim'],
      ['p', 'payment', '', null],
    ]);
    expect(entriesOf({})).to.deep.equal([]);
    expect(entriesOf(undefined)).to.deep.equal([]);
    expect(matchesOf({})).to.deep.equal([]);
  });

  it("reads the room's matches, and one by id", () => {
    const room = encoded();
    room.state.lightning.matches.set(
      'm1',
      new ContractMatch({
        id: 'm1',
        status: 'settled',
        entryFeeMsat: '100000',
        potMsat: '200000',
        rakeMsat: '20000',
        rake: 0.1,
        entered: 2,
        paid: 2,
        made: 1,
        total: 1,
        funded: true,
        reason: '',
      }),
    );
    room.state.lightning.matches.set(
      'm2',
      new ContractMatch({
        id: 'm2',
        status: 'open',
        entryFeeMsat: '100000',
        potMsat: '',
        rakeMsat: '',
        rake: 0.1,
        entered: 2,
        paid: 0,
        made: 0,
        total: 0,
        funded: false,
        reason: '',
      }),
    );
    room.sync();
    expect(matchesOf(room.client.lightning).map((m) => m.id)).to.deep.equal(['m1', 'm2']);
    expect(matchOf(room.client.lightning, 'm1')).to.deep.equal({
      id: 'm1',
      status: 'settled',
      entryFeeMsat: '100000',
      potMsat: '200000',
      rakeMsat: '20000',
      rake: 0.1,
      entered: 2,
      paid: 2,
      made: 1,
      total: 1,
      funded: true,
      reason: '',
    });
    expect(matchOf(room.client.lightning, 'm2')).to.deep.include({
      potMsat: '0',
      rakeMsat: '0',
      made: 0,
      total: 0,
    });
    expect(matchOf(room.client.lightning, '')).to.equal(undefined);
    expect(matchOf(room.client.lightning, 'nope')).to.equal(undefined);
  });

  it('reads the price once known, and null while fiat is off or the price is not known', () => {
    const room = encoded();
    expect(priceOf(room.client.lightning)).to.equal(null);
    room.state.lightning.price.currency = 'USD';
    room.sync();
    expect(priceOf(room.client.lightning)).to.equal(null);
    room.state.lightning.price.btcPrice = 97_000.5;
    room.state.lightning.price.at = 1_700_000_000_000;
    room.sync();
    expect(priceOf(room.client.lightning)).to.deep.equal({
      currency: 'USD',
      btcPrice: 97_000.5,
      at: 1_700_000_000_000,
    });
    expect(priceOf({})).to.equal(null);
  });

  it("reads the player's tab in msats and exact sats, and null before their first credit", () => {
    const room = encoded();
    expect(tabOf(room.client.lightning)).to.equal(null);
    room.state.lightning.tabs.set('t1', new ContractTab({ balance: '21500' }));
    room.sync();
    expect(tabOf(room.client.lightning)).to.deep.equal({ balanceMsat: '21500', sats: '21.5' });
    (room.state.lightning.tabs.get('t1') as { balance: string }).balance = '0';
    room.sync();
    expect(tabOf(room.client.lightning)).to.deep.equal({ balanceMsat: '0', sats: '0' });
    expect(tabOf({ tabs: map({ t1: { balance: 'not digits' } }) })).to.deep.equal({
      balanceMsat: '0',
      sats: '0',
    });
    expect(tabOf({})).to.equal(null);
  });
});
