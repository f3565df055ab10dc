/** The room of docs/ROOMS.md, "Use it in your game"; test/room/minimal-room.test.ts runs it. */
import { type AuthContext, type Client, definePlugins, Room } from '@colyseus/core';
import { schema, t } from '@colyseus/schema';
import { type Lightning, LightningState } from '../../src/index.js';

const ArenaState = schema({ round: t.number(), lightning: LightningState }, 'ArenaState');
const ENTRY_FEE = { amountMsat: 21_000, description: 'Arena entry' };
/** `login` turns a client's auth token into your own stable player id. */
export function defineArena(lightning: Lightning, login: (token: string) => Promise<string>) {
  return class Arena extends Room<{ state: InstanceType<typeof ArenaState> }> {
    override state = new ArenaState();
    override plugins = definePlugins([lightning.plugin()]);
    readonly paid = new Set<string>(); // players whose entry fee arrived
    override async onAuth(_client: Client, _options: unknown, context: AuthContext) {
      return { id: await login(context.token ?? '') };
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
  };
}
