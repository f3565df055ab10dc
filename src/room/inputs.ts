/**
 * Arguments of the room helpers, parsed once before anything is recorded or sent (a bad one is
 * an InvalidArgumentError at the call site). The money fields are the server's own schemas,
 * without the fields the plugin fills in (player, room).
 */
import { z } from 'zod';
import { msat } from '../port/values.js';
import {
  baseCurrency,
  disclosureTypeIds,
  metadata,
  purchaseDestination,
  quoteCurrency,
} from '../port/widget.js';
import { enterInput, oneRoster, openMatchFields } from '../server/match/terms.js';
import {
  addressPaymentInput,
  creditInput,
  entryFeeInput,
  rewardInput,
  spendInput,
  withdrawInput,
} from '../server/operations/inputs.js';

const filled = { playerId: true, roomId: true } as const;

export const rewardArgs = rewardInput.omit(filled);
export type RewardArgs = z.input<typeof rewardArgs>;

/** A credit to the player's tab: `key` makes it once per player and key. */
export const tabCreditArgs = creditInput.omit(filled);
export type TabCreditArgs = z.input<typeof tabCreditArgs>;

/** A withdrawal from the player's tab: the whole balance unless `amountMsat` says less. */
export const withdrawArgs = withdrawInput
  .omit(filled)
  .extend({
    amountMsat: msat.optional(),
    description: withdrawInput.shape.description.default('Cash out'),
  })
  .prefault({});
export type WithdrawArgs = z.input<typeof withdrawArgs>;

export const payAddressArgs = addressPaymentInput.omit(filled);
export type PayAddressArgs = z.input<typeof payAddressArgs>;

export const entryFeeArgs = entryFeeInput.omit(filled);
export type EntryFeeArgs = z.input<typeof entryFeeArgs>;

export const matchArgs = oneRoster(openMatchFields.omit({ roomId: true }));
export type MatchArgs = z.input<typeof matchArgs>;

/** A room match's `enter` options: the player's Lightning address, or nothing. */
export const matchEntryArgs = enterInput.pick({ lnAddress: true }).default({});

export const spendArgs = spendInput.omit({ ...filled, userId: true });
export type SpendArgs = z.input<typeof spendArgs>;

export const widgetArgs = z.strictObject({ metadata: metadata.optional() }).default({});
export type WidgetArgs = z.input<typeof widgetArgs>;
export type ParsedWidgetArgs = z.output<typeof widgetArgs>;

export const purchaseArgs = z
  .strictObject({
    email: z.email().optional(),
    destination: purchaseDestination,
    quoteCurrency,
    baseCurrency,
  })
  .default({});
export type PurchaseArgs = z.input<typeof purchaseArgs>;
export type ParsedPurchaseArgs = z.output<typeof purchaseArgs>;

export const disclosureArgs = disclosureTypeIds;
export const emailArg = z.email();
