/**
 * The arena's synced state. `lightning` holds the money: each player's entries (fees, prizes,
 * refunds, spends) reach only their owner; its `matches` (one per round: the pot, the rake,
 * how many paid, why a round was called off) reach everyone.
 */
import { type SchemaType, schema, t } from '@colyseus/schema';
import { LightningState } from 'colyseus-lightning';

export const Player = schema(
  {
    name: t.string(),
    /** Wants to play: in the next round that opens. False after letting a fee go unpaid. */
    ready: t.boolean(),
    /** In the round that is open or running (its fee charged when it opened). */
    playing: t.boolean(),
    /** Paid this round's entry fee. */
    paid: t.boolean(),
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
    /**
     * waiting (fewer than two want to play) -> paying (a match is open, its players pay) ->
     * countdown -> ready -> go -> finished; a round called off goes back to waiting.
     */
    phase: t.string(),
    /** Keyed by seat (a hash of the player id: the id itself is never shared). */
    players: t.map(Player),
    /** The match of the round that is open or running, in `lightning.matches` ('' when none). */
    matchId: t.string(),
    /** The match of the last round that ended (won or called off): its pot, rake, reason. */
    lastMatchId: t.string(),
    /** epoch ms by which every player of the open round must have paid (0 when none). */
    payBy: t.float64(),
    /** Seat of the last winner ('' when the last round was not won). */
    winner: t.string(),
    /** The last winner's payout, msats (the pot minus the rake; '' until it is made). */
    prizeMsat: t.string(),
    /** How the last round ended, for everyone: who won, or why it was called off. */
    result: t.string(),
    entryFeeMsat: t.string(),
    lightning: LightningState,
  },
  'ArenaState',
);
export type ArenaState = SchemaType<typeof ArenaState>;
