/**
 * A match's inputs (zod, parsed once at the edge) and how a pot is split, in integer msats: the
 * rake is `floor(pot * rakeBps / 10000)`, the rest shared by weight, each payout rounded down,
 * the remainder to the house; so pot = rake + payouts exactly. A split that pays nobody is
 * refused: naming winners never sends the whole pot to the house.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../errors.js';
import { idInput } from '../../id-input.js';
import { lnAddress, msat } from '../../port/values.js';
import type { MatchTerms, Payout } from '../kinds/meta.js';

/** A match's id, as a game hands it back; players' and rooms' ids are the same shape. */
export const matchIdInput = idInput;
const id = idInput;

/** The least claim code the service makes: any fee or payout may end as one. */
const MIN_PAYOUT_MSAT = 10_000n;

/** The fields of `openMatch`; `openMatchInput` adds the rule between them. */
export const openMatchFields = z.strictObject({
  roomId: id.nullable().default(null),
  entryFeeMsat: msat.refine(
    (fee) => BigInt(fee) >= MIN_PAYOUT_MSAT,
    'must be at least 10,000 msats (10 sats): a fee may be refunded as a claim code, and the service makes none smaller',
  ),
  /** The house's part of the pot, 0 to 0.5 (0.1 is 10%). */
  rake: z.number().min(0).max(0.5).default(0),
  /** Seconds each player has to pay their fee. */
  feeExpiresIn: z.number().int().min(10).max(86_400).default(120),
  /** A match neither settled nor aborted this long after its last sign of life is refunded. */
  timeoutMs: z
    .number()
    .int()
    .min(10_000)
    .max(7 * 24 * 3600 * 1000)
    .default(30 * 60 * 1000),
  /** How long payout and refund claim codes stay valid, in seconds. */
  claimExpiresIn: z
    .number()
    .int()
    .min(60)
    .max(7 * 24 * 3600)
    .default(24 * 3600),
  description: z.string().min(1).max(200).default('Match'),
  /** The only players who may enter (from the game's lobby, never a room message). */
  players: z
    .array(id)
    .min(1)
    .max(1000)
    .refine((players) => new Set(players).size === players.length, 'must not name a player twice')
    .optional(),
  /** How many players the match seats: it is funded once that many have paid. */
  seats: z.number().int().min(1).max(1000).optional(),
});

/** A roster is given one way: the room's `openMatch` (without `roomId`) holds the same rule. */
export function oneRoster<T extends z.ZodType<{ players?: string[]; seats?: number }>>(schema: T) {
  return schema.refine((o) => o.players === undefined || o.seats === undefined, {
    message: 'give players or seats, not both: a roster of n players is n seats',
    path: ['seats'],
  });
}

export const openMatchInput = oneRoster(openMatchFields);
export type OpenMatchInput = z.input<typeof openMatchInput>;
export type ParsedOpenMatch = z.output<typeof openMatchInput>;

export const enterInput = z.strictObject({
  matchId: id,
  playerId: id,
  /** Pay this player to their Lightning address (from their account, never a room message). */
  lnAddress: lnAddress.optional(),
});
export type EnterInput = z.input<typeof enterInput>;
export type ParsedEnter = z.output<typeof enterInput>;

/** Shares of the pot by player id (`{ alice: 2, bob: 1 }`: alice gets two thirds). */
export const sharesInput = z
  .unknown()
  .superRefine((shares, ctx) => {
    // A parsed record silently drops an own `__proto__` key: the pot would go to the others.
    if (typeof shares === 'object' && shares !== null && Object.hasOwn(shares, '__proto__')) {
      ctx.addIssue({ code: 'custom', path: ['__proto__'], message: 'names no player' });
    }
  })
  .pipe(
    z
      .record(
        id,
        z
          .number()
          .positive()
          .finite()
          .max(1e9)
          .refine(
            (share) => Math.round(share * 1e6) >= 1,
            'is too small: shares count in millionths, and one under 5e-7 rounds to nothing',
          ),
      )
      .refine((shares) => Object.keys(shares).length > 0, 'must name at least one winner')
      .refine((shares) => Object.keys(shares).length <= 1000, 'must name at most 1000 winners'),
  );
export type Shares = z.output<typeof sharesInput>;

export const reasonInput = z.string().trim().min(1, 'must say why').max(500);

/** How many players a match waits for before it is funded; 0 when it has no roster. */
export function seatsOf(terms: MatchTerms): number {
  return terms.roster?.length ?? terms.seats ?? 0;
}

/** Splits `pot` (msats) by `shares` after the rake, as the module header says. */
export function splitPot(
  pot: bigint,
  rakeBps: number,
  shares: Shares,
): { rakeMsat: bigint; payouts: Payout[] } {
  let rake = (pot * BigInt(rakeBps)) / 10_000n;
  const shared = pot - rake;
  // Shares become integer weights (a millionth of a share is the finest step).
  const weights = Object.entries(shares).map(
    ([playerId, share]) => [playerId, BigInt(Math.round(share * 1e6))] as const,
  );
  const total = weights.reduce((sum, [, w]) => sum + w, 0n);
  const payouts: Payout[] = [];
  let paid = 0n;
  for (const [playerId, weight] of weights) {
    const amount = total === 0n ? 0n : (shared * weight) / total;
    if (amount === 0n) continue;
    if (amount < MIN_PAYOUT_MSAT) {
      throw new InvalidArgumentError(
        `shares.${playerId}`,
        `would pay ${playerId} ${amount} msats, below the least claim code the service makes (10,000 msats)`,
      );
    }
    paid += amount;
    payouts.push({ playerId, amountMsat: amount.toString() });
  }
  if (payouts.length === 0) {
    throw new InvalidArgumentError(
      'shares',
      `would pay nobody: ${shared} msats shared by these shares round down to 0 msats each`,
    );
  }
  rake += shared - paid;
  return { rakeMsat: rake, payouts };
}
