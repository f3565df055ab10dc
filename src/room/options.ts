/**
 * Options of the room plugin (`lightning.plugin(options)`), checked once when the plugin is
 * made; `resolvePluginOptions` applies every default in one place.
 */
import type { Client, Room } from '@colyseus/core';
import { z } from 'zod';
import { ConfigurationError } from '../errors.js';
import { parseInput } from '../parse.js';
import { defaultPlayerId } from './players.js';
import type { LightningState } from './state.js';

const fn = <T>() => z.custom<T>((v) => typeof v === 'function');

const schema = z.strictObject({
  /** Where the room keeps its LightningState. Default: `room.state.lightning`. */
  state: fn<(room: Room) => LightningState | undefined>().optional(),
  /**
   * Who a client is, as the ledger and the service know them. Default: `client.auth.id`, then
   * `client.userData.playerId`, then `client.sessionId` (which changes on every join: give
   * players a stable id so that a rejoining player gets their entries back).
   */
  playerId: fn<(client: Client) => string>().default(() => defaultPlayerId),
  /** The player's email, used to create their widget user. Default `auth.email`, `userData.email`. */
  email: fn<(client: Client) => string | undefined>().default(() => defaultEmail),
  /** The service's widget user id of a player. Default: created by reference_id, then cached. */
  widgetUser: fn<(client: Client, playerId: string) => Promise<string>>().optional(),
  /** How long an ended entry stays in the state so its owner sees the outcome. Default 30,000 ms. */
  lingerMs: z.number().int().min(0).default(30_000),
  /**
   * Refuse money helpers (reward, chargeEntryFee, spendPoints, a match's enter) to players whose
   * address is in a region the service does not serve: RegionRefusedError, nothing recorded or
   * sent. The address is the client's as `clientAddress` of createLightning reads it (the
   * socket, or the entry the game's own proxies wrote; never a header the client sent), taken
   * once the room's own onAuth accepted the client, from the socket where `lightning.attach`
   * sees it, else from Colyseus's auth context. A room authenticated by a static onAuth
   * (@colyseus/auth) gets no instance onAuth call: it needs `lightning.attach(server)`. A player
   * with no address the gate trusts is refused. Default false. Use one setting per room class
   * (Colyseus lays out plugin hooks once per class).
   */
  regionGate: z.boolean().default(false),
  /**
   * How often the room reads its open entries back from the ledger, so that a settlement whose
   * presence message was lost (Redis restarted or a subscriber reconnected) still reaches the
   * room and its players. 0 turns it off. Default 10,000 ms.
   */
  catchUpMs: z.number().int().min(0).default(10_000),
  /**
   * Send the room's patch as soon as a settlement changed an entry, rather than at the next
   * patch tick, so the owner's screen updates in about the verification time. Settlements that
   * arrive in the same turn of the event loop share one patch (setImmediate). Costs one extra
   * patch per batch of settlements (the next tick then finds nothing new to send). `false`
   * leaves every change to the patch tick. Default true.
   */
  immediatePush: z.boolean().default(true),
});

export type LightningPluginOptions = z.input<typeof schema>;
export type PluginSettings = z.output<typeof schema>;

export function resolvePluginOptions(options: LightningPluginOptions = {}): PluginSettings {
  return parseInput(schema, options, 'plugin options', ConfigurationError);
}

function defaultEmail(client: Client): string | undefined {
  const auth = client.auth as { email?: unknown } | undefined;
  const data = client.userData as { email?: unknown } | undefined;
  const email = auth?.email ?? data?.email;
  return typeof email === 'string' ? email : undefined;
}
