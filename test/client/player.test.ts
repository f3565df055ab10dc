/**
 * A scripted player on a real game, with nothing but the kit: an SDK client joins a room,
 * hears its entries through `watchLightning(Callbacks.get(room))`, pays its entry fee and
 * claims its reward with `devWallet(emulator.devWalletUrl)`, and reads each amount with
 * `formatAmount`. Against the server as it is now: a reward without a synced `purpose` reads
 * as `reward`, and a fee as `fee`, from its map.
 */
import { Callbacks } from '@colyseus/sdk';
import { expect } from 'chai';
import {
  devWallet,
  type EntryView,
  formatAmount,
  type LightningSnapshot,
  watchLightning,
} from '../../src/client/index.js';
import { type Arena, serverClient, startArena } from '../room/support.js';
import { eventually } from '../support/eventually.js';
import type { Game } from '../support/game.js';

describe('client kit: a scripted player on a real game', function () {
  this.timeout(20_000);
  let game: Game;
  afterEach(async () => game?.stop());

  it('pays its entry fee and claims its reward through the dev wallet, watching its entries', async () => {
    game = await startArena({ reconciler: { enabled: false } });
    const room = await game.colyseus.createRoom<Arena>('arena');
    const player = await game.colyseus.connectTo(room, { playerId: 'alice' });
    let last: LightningSnapshot | undefined;
    const heard: EntryView[] = [];
    const stop = watchLightning(Callbacks.get(player), {
      entry: (e) => heard.push(e),
      change: (s) => {
        last = s;
      },
    });
    const entry = (purpose: string, status: string) => () =>
      last?.entries.find((e) => e.purpose === purpose && e.status === status);
    const wallet = devWallet(game.emulator.devWalletUrl);

    const { settled } = await room.plugins.lightning.chargeEntryFee(serverClient(room, player), {
      amountMsat: 21_000,
      description: 'Arena entry',
    });
    const fee = await eventually(entry('fee', 'pending'), 5_000, 'the fee on the client');
    expect(fee).to.deep.include({ action: 'pay', amountMsat: '21000', sats: '21' });
    expect(formatAmount(fee.amountMsat ?? '', { locale: 'en-US' })).to.equal('21 sats');
    expect((await wallet.pay(fee.code)).amountMsat).to.equal('21000');
    expect((await settled).status).to.equal('completed');
    await eventually(entry('fee', 'completed'), 5_000, 'the fee completed on the client');

    await room.plugins.lightning.reward(serverClient(room, player), {
      amountMsat: 50_000,
      description: 'You won',
    });
    const reward = await eventually(entry('reward', 'pending'), 5_000, 'the reward');
    expect(reward).to.deep.include({ action: 'claim', sats: '50' });
    await wallet.claim(reward.code);
    await eventually(entry('reward', 'completed'), 5_000, 'the reward completed');
    // Each step was heard as it happened, not only in the snapshots.
    expect(heard.map((e) => `${e.purpose} ${e.status}`)).to.include.members([
      'fee pending',
      'fee completed',
      'reward pending',
      'reward completed',
    ]);
    stop();
  });
});
