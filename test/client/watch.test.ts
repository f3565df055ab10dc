/**
 * `watchLightning` on Colyseus 0.18's client-side callbacks (`Callbacks.get` of a real
 * decoder): what a page hears as entries, matches and the price are added, changed and
 * removed, one `change` per patch with the whole picture, maps that arrive late, and nothing
 * once stopped.
 */
import { Callbacks, MapSchema } from '@colyseus/schema';
import { expect } from 'chai';
import {
  type EntryView,
  type LightningSnapshot,
  type MatchView,
  type PriceView,
  type TabView,
  watchLightning,
} from '../../src/client/index.js';
import {
  ContractEntryFee,
  type ContractEntryFeeType,
  ContractMatch,
  type ContractMatchType,
  ContractReward,
  type ContractRewardType,
  ContractTab,
  encoded,
  entryOf,
} from './contract.js';

/** Everything the handlers heard, in order. */
function recorder() {
  const heard: string[] = [];
  const snapshots: LightningSnapshot[] = [];
  const handlers = {
    entry: (e: EntryView) => heard.push(`entry ${e.id} ${e.purpose} ${e.status}`),
    entryRemoved: (id: string) => heard.push(`entryRemoved ${id}`),
    match: (m: MatchView) => heard.push(`match ${m.id} ${m.status} ${m.paid}/${m.entered}`),
    matchRemoved: (id: string) => heard.push(`matchRemoved ${id}`),
    tab: (t: TabView | null) => heard.push(`tab ${t ? t.balanceMsat : 'none'}`),
    price: (p: PriceView | null) =>
      heard.push(`price ${p ? `${p.btcPrice} ${p.currency}` : 'none'}`),
    change: (s: LightningSnapshot) => snapshots.push(s),
  };
  return { heard, snapshots, handlers };
}

/** Lets the microtask that sends `change` run. */
const afterPatch = () => new Promise<void>((resolve) => queueMicrotask(resolve));

const fee = (fields: Parameters<typeof entryOf>[0] = {}) =>
  new ContractEntryFee({ ...entryOf({ code: 'LNURL1FEE', ...fields }), kind: 'entryFee' });
const match = (paid: number, status = 'open') =>
  new ContractMatch({
    id: 'm1',
    status,
    entryFeeMsat: '100000',
    potMsat: String(paid * 100_000),
    rakeMsat: '',
    rake: 0.1,
    entered: 2,
    paid,
    made: 0,
    total: 0,
    funded: paid === 2,
    reason: '',
  });

describe('client kit: watchLightning', () => {
  it('tells what is there at once, then each change, with one snapshot per patch', async () => {
    const room = encoded();
    room.state.lightning.entryFees.set('f1', fee({ matchId: 'm1' }));
    room.state.lightning.matches.set('m1', match(0));
    room.sync();
    const { heard, snapshots, handlers } = recorder();
    watchLightning(Callbacks.get(room.decoder), handlers);
    expect(heard).to.deep.equal(['entry f1 fee pending', 'match m1 open 0/2', 'price none']);
    await afterPatch();
    expect(snapshots).to.have.length(1);
    expect(snapshots[0]?.entries.map((e) => e.id)).to.deep.equal(['f1']);

    // One patch: the fee paid, the match counts it, a refund appears.
    heard.length = 0;
    (room.state.lightning.entryFees.get('f1') as ContractEntryFeeType).status = 'completed';
    const m1 = room.state.lightning.matches.get('m1') as ContractMatchType;
    m1.paid = 1;
    m1.potMsat = '100000';
    room.state.lightning.rewards.set(
      'r1',
      new ContractReward({
        ...entryOf({ purpose: 'refund', matchId: 'm1', code: 'LNURL1REFUND' }),
        kind: 'reward',
      }),
    );
    room.sync();
    expect(heard).to.have.members([
      'entry f1 fee completed',
      'match m1 open 1/2',
      'entry r1 refund pending',
    ]);
    await afterPatch();
    expect(snapshots).to.have.length(2);
    const last = snapshots[1] as LightningSnapshot;
    expect(last.entries.map((e) => [e.id, e.purpose, e.status, e.action])).to.deep.equal([
      ['f1', 'fee', 'completed', null],
      ['r1', 'refund', 'pending', 'claim'],
    ]);
    expect(last.matches[0]).to.deep.include({ id: 'm1', paid: 1, potMsat: '100000' });

    heard.length = 0;
    room.state.lightning.entryFees.delete('f1');
    room.state.lightning.matches.delete('m1');
    room.sync();
    expect(heard).to.have.members(['entryRemoved f1', 'matchRemoved m1']);
  });

  it('tells the price as the server reads it', () => {
    const room = encoded();
    const { heard, handlers } = recorder();
    watchLightning(Callbacks.get(room.decoder), handlers);
    heard.length = 0;
    room.state.lightning.price.currency = 'USD';
    room.state.lightning.price.btcPrice = 97_000;
    room.state.lightning.price.at = 1;
    room.sync();
    expect(heard).to.deep.equal(['price 97000 USD']);
  });

  it("tells the player's tab as it changes, and once it left", async () => {
    const room = encoded();
    const { heard, snapshots, handlers } = recorder();
    watchLightning(Callbacks.get(room.decoder), handlers);
    heard.length = 0;
    room.state.lightning.tabs.set('t1', new ContractTab({ balance: '10000' }));
    room.sync();
    (room.state.lightning.tabs.get('t1') as { balance: string }).balance = '30000';
    room.sync();
    await afterPatch();
    expect(snapshots.at(-1)?.tab).to.deep.equal({ balanceMsat: '30000', sats: '30' });
    room.state.lightning.tabs.delete('t1');
    room.sync();
    expect(heard).to.deep.equal(['tab 10000', 'tab 30000', 'tab none']);
  });

  it('waits for maps a server sends late', () => {
    const room = encoded();
    room.state.lightning.rewards = undefined as unknown as MapSchema<ContractRewardType>;
    room.sync();
    const { heard, handlers } = recorder();
    watchLightning(Callbacks.get(room.decoder), handlers);
    heard.length = 0;
    const rewards = new MapSchema<ContractRewardType>();
    rewards.set(
      'p1',
      new ContractReward({ ...entryOf({ purpose: 'payout', code: 'LNURL1P' }), kind: 'reward' }),
    );
    room.state.lightning.rewards = rewards;
    room.sync();
    expect(heard).to.deep.equal(['entry p1 payout pending']);
  });

  it('hears nothing once stopped, while a watcher still on hears the same patch', async () => {
    const room = encoded();
    const stopped = recorder();
    const on = recorder();
    const stop = watchLightning(Callbacks.get(room.decoder), stopped.handlers);
    watchLightning(Callbacks.get(room.decoder), on.handlers);
    await afterPatch();
    stop();
    stopped.heard.length = 0;
    stopped.snapshots.length = 0;
    room.state.lightning.entryFees.set('f2', fee());
    room.sync();
    await afterPatch();
    // The watcher still on heard it (so the patch was delivered and its microtask ran).
    expect(on.heard).to.include('entry f2 fee pending');
    expect(on.snapshots.at(-1)?.entries.map((e) => e.id)).to.deep.equal(['f2']);
    expect(stopped.heard).to.deep.equal([]);
    expect(stopped.snapshots).to.deep.equal([]);
  });
});
