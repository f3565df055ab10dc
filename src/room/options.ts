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

// Each option's documentation is its zod metadata, as createLightning's (server/options.ts).
export const pluginOptionsSchema = z.strictObject({
  playerId: fn<(client: Client) => string>()
    .default(() => defaultPlayerId)
    .meta({
      description:
        'who a client is, for the ledger, the service and the views; `client.sessionId` changes on every join: give players a stable id so that a rejoining player gets their entries back',
      tsType: '(client) => string',
      defaultText: '`client.auth.id`, then `client.userData.playerId`, then `client.sessionId`',
    }),
  email: fn<(client: Client) => string | undefined>()
    .default(() => defaultEmail)
    .meta({
      description: "the player's email, which their widget user is created with",
      tsType: '(client) => string | undefined',
      defaultText: '`client.auth.email`, then `client.userData.email`',
    }),
  widgetUser: fn<(client: Client, playerId: string) => Promise<string>>().optional().meta({
    description: "the service's widget user id of a player",
    tsType: '(client, playerId) => Promise<string>',
    defaultText: 'created by `reference_id` = player id (idempotent), cached per process',
  }),
  state: fn<(room: Room) => LightningState | undefined>().optional().meta({
    description: 'where the room keeps its `LightningState`',
    tsType: '(room) => LightningState | undefined',
    defaultText: '`room.state.lightning`',
  }),
  lingerMs: z.number().int().min(0).default(30_000).meta({
    description: 'how long an ended entry stays in the state, so that its owner sees the outcome',
  }),
  regionGate: z.boolean().default(false).meta({
    description:
      'refuse money helpers to players whose address (as `clientAddress` reads it, never a header the client sent) is in a region the service does not serve: `RegionRefusedError`, nothing sent; a player with no address the gate trusts is refused. A room with a static `onAuth` needs `lightning.attach(server)` (docs/MATCHES.md). One setting per room class',
  }),
  catchUpMs: z.number().int().min(0).default(10_000).meta({
    description:
      'how often the room reads its open entries back from the ledger, so that a settlement whose presence message was lost still reaches it; `0` turns it off',
  }),
  immediatePush: z.boolean().default(true).meta({
    description:
      "send the room's patch as soon as a settlement changed an entry (one patch per event-loop turn, however many settlements it applied), so that the owner sees it in about the verification time rather than at the next patch tick; `false` leaves every change to the patch tick",
  }),
  tabs: z
    .strictObject({
      minTimeInRoomMs: z.number().int().min(0).default(30_000).meta({
        description:
          "a `credit` to a client in the room less than this, by the server's clock (the `clock` option) from the plugin's own record of its join, never anything the client says, is refused with `TimeInRoomError` (`LN_TIME_IN_ROOM`), nothing recorded, and counted in the `lightning.refused` metric by its code; a bot that joins, earns and leaves earns nothing; `0` turns it off",
      }),
      withdrawOnLeave: z.boolean().default(false).meta({
        description:
          "withdraw the player's whole tab as one code when their last client leaves the room (the code is theirs on their next join, and in `lightning.books.claims`)",
      }),
      withdrawAtMsat: msat.nullable().default(null).meta({
        description:
          'withdraw the whole tab as one code once a credit brings it to this many msats or more; `null`: never',
      }),
    })
    .prefault({})
    .meta({ description: "players' tabs in this room (docs/MATCHES.md): `credit` and `withdraw`" }),
});

export type LightningPluginOptions = z.input<typeof pluginOptionsSchema>;
export type PluginSettings = z.output<typeof pluginOptionsSchema>;

export function resolvePluginOptions(options: LightningPluginOptions = {}): PluginSettings {
  return parseInput(pluginOptionsSchema, options, 'plugin options', ConfigurationError);
}

function defaultEmail(client: Client): string | undefined {
  const auth = client.auth as { email?: unknown } | undefined;
  const data = client.userData as { email?: unknown } | undefined;
  const email = auth?.email ?? data?.email;
  return typeof email === 'string' ? email : undefined;
}
