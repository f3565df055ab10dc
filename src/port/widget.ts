/** The values of a player's widget and purchase sessions, one definition each. */
import { z } from 'zod';

/** The widget disclosure types: terms (2), privacy (3), EFT (6). */
export const DISCLOSURE_TYPES = { termsOfService: 2, privacyPolicy: 3, electronicFundsTransfer: 6 };
const DISCLOSURE_IDS = new Set(Object.values(DISCLOSURE_TYPES));

export const disclosureTypeIds = z
  .array(z.number().int(), { error: 'must be an array of disclosure type ids' })
  .min(1, 'must list at least one disclosure type')
  .refine((ids) => ids.every((id) => DISCLOSURE_IDS.has(id)), {
    message: 'must hold only the disclosure types 2 (terms), 3 (privacy) and 6 (EFT)',
  })
  .transform((ids) => [...new Set(ids)]);

/** Free-form metadata, refused here if it cannot travel as JSON (a bigint, a cycle). */
export const metadata = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  try {
    JSON.stringify(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be JSON (no bigint, no cycle)' });
  }
});

/** Where a purchase sends what it buys. */
export const purchaseDestination = z.string().min(1).optional();
/** The currency a purchase is quoted in. */
export const quoteCurrency = z
  .string()
  .regex(/^[A-Z]{3,5}$/, 'must be a currency code such as USD')
  .optional();
/** The currency a purchase buys. */
export const baseCurrency = z
  .string()
  .regex(/^[A-Z]{3,5}$/, 'must be a currency code such as BTC')
  .optional();
