/** The room of docs/ROOMS.md; test/room/first-game.test.ts runs it. */
import { type AuthContext, type Client, definePlugins, Room } from '@colyseus/core';
import { schema, t } from '@colyseus/schema';
import { LightningState } from 'colyseus-lightning';
import { verifyToken } from '../auth.js';
import { lightning } from '../lightning.js';

const ArenaState = schema({ round: t.number(), lightning: LightningState }, 'ArenaState');
const ENTRY_FEE = { amountMsat: 21_000, description: 'Arena entry' };

export class Arena extends Room<{ state: InstanceType<typeof ArenaState> }> {
  override state = new ArenaState();
  override plugins = definePlugins([lightning.plugin()]);
  readonly paid = new Set<string>(); // players whose entry fee arrived
  override onAuth(_client: Client, _options: unknown, context: AuthContext) {
    return { id: verifyToken(context.token ?? '') }; // the plugin reads client.auth.id
  }
  override onCreate() {
    this.plugins.lightning.onEntryFeePaid((fee) => this.paid.add(fee.playerId));
  }
  override messages = {
    enter: (client: Client) =>
      this.plugins.lightning.chargeEntryFee(client, ENTRY_FEE).catch(() => client.send('retry')),
  };
  async endRound(winner: Client) {
    await this.plugins.lightning.reward(winner, { amountMsat: 50_000, description: 'You won' });
  }
}
