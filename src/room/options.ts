/**
 * Options of the room plugin (`lightning.plugin(options)`), checked once when the plugin is
 * made; `resolvePluginOptions` applies every default in one place.
 */
import type { Client, Room } from '@colyseus/core';
import { z } from 'zod';
import { ConfigurationError } from '../errors.js';
import { parseInput } from '../parse.js';
import { msat } from '../port/values.js';
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
   * Refuse money helpers to players whose address (as `clientAddress` reads it, never a header
   * the client sent) is in a region the service does not serve: RegionRefusedError, nothing
   * sent. A room with a static onAuth needs `lightning.attach(server)`; a player with no address
   * the gate trusts is refused. Default false. One setting per room class.
   */
  regionGate: z.boolean().default(false),
  /**
   * How often the room reads its open entries back from the ledger, so a settlement whose
   * presence message was lost still reaches it. 0 turns it off. Default 10,000 ms.
   */
  catchUpMs: z.number().int().min(0).default(10_000),
  /**
   * Send the room's patch as soon as a settlement changed an entry (one per event-loop turn),
   * not at the next patch tick. Default true.
   */
  immediatePush: z.boolean().default(true),
  /** Players' tabs in this room (docs/MATCHES.md): `credit` and `withdraw`. */
  tabs: z
    .strictObject({
      /**
       * How long a client must have been in the room, by the server's clock from its join
       * (never what the client says), before a credit: TimeInRoomError before. Bots that join,
       * earn and leave earn nothing. 0 turns it off. Default 30,000 ms.
       */
      minTimeInRoomMs: z.number().int().min(0).default(30_000),
      /** Withdraw the whole tab as one code when the player's last client leaves. Default false. */
      withdrawOnLeave: z.boolean().default(false),
      /** Withdraw the whole tab once a credit brings it to this many msats or more. Default off. */
      withdrawAtMsat: msat.nullable().default(null),
    })
    .prefault({}),
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
