/**
 * The arena's synced state. `lightning` holds the money entries; each entry reaches only its
 * owner (a client that owns none sees the maps empty, or the field undefined).
 */
import { type SchemaType, schema, t } from '@colyseus/schema';
import { LightningState } from 'colyseus-lightning';

export const Player = schema(
  {
    name: t.string(),
    /** The entry fee is paid: this player is in the next round (or the one running). */
    paid: t.boolean(),
    /** In the round that is running (paid before it started). */
    playing: t.boolean(),
    /** Out of this round (clicked before GO). */
    out: t.boolean(),
    wins: t.uint16(),
    /** Items bought in the shop with points. */
    items: t.array('string'),
  },
  'ArenaPlayer',
);
export type Player = SchemaType<typeof Player>;

export const ArenaState = schema(
  {
    /** waiting -> countdown -> ready -> go -> finished (-> countdown for the next round) */
    phase: t.string(),
    /** Keyed by seat (a hash of the player id: the id itself is never shared). */
    players: t.map(Player),
    /** Seat of the last winner ('' before the first round). */
    winner: t.string(),
    /** The prize of the last round, msats (pot minus rake). */
    prizeMsat: t.string(),
    entryFeeMsat: t.string(),
    lightning: LightningState,
  },
  'ArenaState',
);
export type ArenaState = SchemaType<typeof ArenaState>;
