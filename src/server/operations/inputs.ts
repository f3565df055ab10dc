/**
 * Arguments of the money helpers, parsed once where the call enters, before anything is
 * recorded or sent; the operations take the `Parsed...` types and parse nothing again.
 */
import { z } from 'zod';
import { idInput } from '../../id-input.js';
import { lnAddress, msat } from '../../port/values.js';

const playerId = idInput;
const roomId = idInput.nullable().default(null);
const description = z.string().min(1, 'must not be empty').max(1000);
/** Seconds: at least 10 (a code nobody can scan in time helps nobody), at most a week. */
const expiresIn = z
  .number()
  .int()
  .min(10)
  .max(7 * 24 * 3600)
  .default(600);

/** Who is paid or charged, how much, and what for. */
const money = { playerId, roomId, amountMsat: msat, description };

export const rewardInput = z.strictObject({ ...money, expiresIn });
export type RewardInput = z.input<typeof rewardInput>;
export type ParsedReward = z.output<typeof rewardInput>;

/** A credit to a player's tab (docs/MATCHES.md); the same `key` for the player is the same credit. */
export const creditInput = z.strictObject({
  ...money,
  key: z.string().min(1, 'must not be empty').max(200).optional(),
});
export type CreditInput = z.input<typeof creditInput>;
export type ParsedCredit = z.output<typeof creditInput>;

/**
 * A withdrawal of `amountMsat` from a player's tab, as one claim code (`expiresIn` seconds);
 * without `amountMsat`, the whole tab.
 */
export const withdrawInput = z.strictObject({
  ...money,
  amountMsat: msat.optional(),
  expiresIn,
});
export type WithdrawInput = z.input<typeof withdrawInput>;
export type ParsedWithdrawal = z.output<typeof withdrawInput>;

/** Rewards for `rewardMany` (a leaderboard): 1 to 1,000, each as for `reward`. */
export const rewardManyInput = z.array(rewardInput).min(1).max(1000);
export type RewardManyInput = z.input<typeof rewardManyInput>;

export const entryFeeInput = z.strictObject({
  ...money,
  successMessage: z.string().max(144, 'must be at most 144 characters').optional(),
  expiresIn,
  /** One open fee per player and room (a call returns it); a key allows one per key. */
  key: z.string().min(1, 'must not be empty').max(200).optional(),
});
export type EntryFeeInput = z.input<typeof entryFeeInput>;
export type ParsedEntryFee = z.output<typeof entryFeeInput>;

export const addressPaymentInput = z.strictObject({
  playerId,
  roomId,
  /** The player's Lightning address (`name@domain`, LUD-16), sent in lower case. */
  lnAddress,
  amountMsat: msat,
  /** Shown to the player by their wallet (LUD-12); their wallet may allow fewer characters. */
  comment: z.string().min(1, 'must not be empty').max(255).optional(),
});
export type AddressPaymentInput = z.input<typeof addressPaymentInput>;
export type ParsedAddressPayment = z.output<typeof addressPaymentInput>;

export const spendInput = z.strictObject({
  playerId,
  roomId,
  /** The service's widget user id. */
  userId: idInput,
  amount: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  currency: z
    .string()
    .regex(/^[A-Z][A-Z0-9]{2,9}$/, 'must be a currency code such as USDZ')
    .default('USDZ'),
  description: z.string().max(1000).default('points spent'),
});
export type SpendInput = z.input<typeof spendInput>;
export type ParsedSpend = z.output<typeof spendInput>;

/** The fields of every paged read of the ledger: `since` epoch ms, `after` a page's `next`. */
export const pageFields = {
  since: z.number().int().nonnegative().optional(),
  after: z
    .string()
    .regex(/^(0|[1-9][0-9]{0,15})$/, 'must be the `next` of an earlier page')
    .optional(),
  limit: z.number().int().min(1).max(1000).optional(),
};
