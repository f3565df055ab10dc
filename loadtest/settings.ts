/**
 * What the runner hands every game process (env `LOADTEST`, JSON), parsed by both ends with one
 * schema: the game's outbound rate, the fee, how long fees and claim codes live, the
 * tournament's size and the run's seed.
 */
import { z } from 'zod';

export const gameSettings = z.strictObject({
  rateLimit: z.strictObject({ perSecond: z.number().positive(), burst: z.number().min(1) }),
  /** Every table's and the tournament's entry fee (the least a refund code may be: 10 sats). */
  feeMsat: z.number().int().min(10_000),
  /** Seconds a player has to pay a fee. */
  feeExpiresIn: z.number().int().min(10),
  /** Seconds a payout's or refund's code stays valid (longer than the run). */
  claimExpiresIn: z.number().int().min(60),
  /** Seats of the tournament: every entrant who paid wins a share. */
  winners: z.number().int().min(1),
  seed: z.number().int(),
});

export type GameSettings = z.infer<typeof gameSettings>;
