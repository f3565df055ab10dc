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
  override maxMessagesPerSecond = 10; // a client that floods the room is dropped
  readonly paid = new Set<string>(); // players whose entry fee arrived
  readonly open = new Map<string, Promise<unknown>>(); // at most one open fee per player
  override onAuth(_client: Client, _options: unknown, context: AuthContext) {
    return { id: verifyToken(context.token ?? '') }; // the plugin reads client.auth.id
  }
  override onCreate() {
    this.plugins.lightning.onEntryFeePaid((fee) => this.paid.add(fee.playerId));
  }
  override messages = { enter: (client: Client) => this.enter(client.auth.id, client) };
  enter(id: string, client: Client) {
    if (this.paid.has(id) || this.open.has(id)) return; // never a second fee for one round
    const fee = this.plugins.lightning.chargeEntryFee(client, ENTRY_FEE).then((f) => f.settled);
    const ended = () => this.open.delete(id);
    this.open.set(id, fee.catch(() => client.send('retry')).finally(ended));
  }
  async endRound(winner: Client) {
    this.paid.clear(); // the next round charges everyone again
    await this.plugins.lightning.reward(winner, { amountMsat: 50_000, description: 'You won' });
  }
}
