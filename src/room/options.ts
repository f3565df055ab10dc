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
        'who a client is, for the ledger, the service and the views ([who the player is](#who-the-player-is))',
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
      'refuse money helpers to players in a region the service does not serve ([the region gate](#who-may-play-for-money-the-region-gate)); one setting per room class',
  }),
  catchUpMs: z.number().int().min(0).default(10_000).meta({
    description:
      'how often the room reads its open entries back from the ledger, so that a settlement whose presence message was lost still reaches it; `0` turns it off',
  }),
  immediatePush: z.boolean().default(true).meta({
    description:
      "send the room's patch as soon as a settlement changed an entry (one per event-loop turn), so that its owner sees it at once; `false`: at the next patch tick",
  }),
  tabs: z
    .strictObject({
      minTimeInRoomMs: z.number().int().min(0).default(30_000).meta({
        description:
          "a `credit` to a client in the room for less than this (from the plugin's record of its join, on the server's clock) is refused: `TimeInRoomError`, nothing recorded; `0`: off",
      }),
      withdrawOnLeave: z.boolean().default(false).meta({
        description:
          "withdraw the player's whole tab as one code when their last client leaves the room (theirs on their next join, and in `lightning.books.claims`)",
      }),
      withdrawAtMsat: msat.nullable().default(null).meta({
        description:
          'withdraw the whole tab as one code once a credit brings it to this many msats or more; `null`: never',
      }),
    })
    .prefault({})
    .meta({ description: "players' tabs in this room ([MATCHES.md](MATCHES.md#players-tabs))" }),
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
