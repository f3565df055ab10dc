/**
 * What the client accepts, checked before anything is sent. Amounts are the dangerous part:
 * millisatoshis travel as decimal strings of positive integers, so a float, a negative, a
 * zero or a stray character is refused here rather than guessed at. A failed check throws
 * `InvalidArgumentError` naming the field.
 *
 * Each schema's input type (`...Input`) is what a game may hand the client; its output type
 * (`...Body`) is what a parse returns and what the typed send step (calls.ts) takes.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { lnAddress, msat } from '../port/values.js';
import { baseCurrency, metadata, purchaseDestination, quoteCurrency } from '../port/widget.js';

export { lnAddress, MAX_MSAT, type MsatInput, msat } from '../port/values.js';

export { DISCLOSURE_TYPES, disclosureTypeIds, metadata } from '../port/widget.js';

const positiveInt = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const text = z.string();

export const withdrawalRequestInput = z.strictObject({
  amount: msat,
  description: text.max(1000),
  internalId: text.max(255).optional(),
  callbackUrl: httpUrl.optional(),
  expiresIn: positiveInt.optional(),
});
export type WithdrawalRequestInput = z.input<typeof withdrawalRequestInput>;
export type WithdrawalRequestBody = z.output<typeof withdrawalRequestInput>;

export const paymentInput = z.strictObject({
  amount: msat,
  description: text.max(1000),
  internalId: text.max(255),
  callbackUrl: httpUrl.optional(),
  /** The BOLT11 invoice to pay (the contract leaves recipient fields out; the docs name this one). */
  invoice: text.min(1).optional(),
});
export type PaymentInput = z.input<typeof paymentInput>;
export type PaymentBody = z.output<typeof paymentInput>;

/** Bounds of one call, in place of the client's own (`timeoutMs`, `maxRetries`). */
export const callLimits = z
  .strictObject({
    /** The longest wait for each attempt's answer, in ms (at most 600,000). */
    timeoutMs: z.number().int().positive().max(600_000).optional(),
    /** How many times a failed attempt may be retried (0 to 10). */
    maxRetries: z.number().int().min(0).max(10).optional(),
  })
  .optional();
export type CallLimits = z.input<typeof callLimits>;
export type Limits = z.output<typeof callLimits>;

export const lnAddressPaymentInput = z.strictObject({
  lnAddress,
  amount: msat,
  /** Shown to the recipient (LUD-12); their wallet may allow fewer characters. */
  comment: text.max(255).optional(),
  internalId: text.max(255).optional(),
  callbackUrl: httpUrl.optional(),
});
export type LnAddressPaymentInput = z.input<typeof lnAddressPaymentInput>;
export type LnAddressPaymentBody = z.output<typeof lnAddressPaymentInput>;

const staticChargeFields = {
  minAmount: msat,
  maxAmount: msat,
  description: text.max(1000),
  successMessage: text.max(144, 'must be at most 144 characters').optional(),
  allowedSlots: positiveInt.nullable().optional(),
  internalId: text.max(255).optional(),
  callbackUrl: httpUrl.optional(),
  identifier: text.min(1).max(64).optional(),
};

function minNotAboveMax(
  value: { minAmount?: string | undefined; maxAmount?: string | undefined },
  ctx: z.RefinementCtx,
) {
  if (value.minAmount !== undefined && value.maxAmount !== undefined) {
    if (BigInt(value.minAmount) > BigInt(value.maxAmount)) {
      ctx.addIssue({ code: 'custom', path: ['minAmount'], message: 'must not exceed maxAmount' });
    }
  }
}

export const staticChargeInput = z.strictObject(staticChargeFields).superRefine(minNotAboveMax);
export type StaticChargeInput = z.input<typeof staticChargeInput>;
export type StaticChargeBody = z.output<typeof staticChargeInput>;

export const staticChargeUpdateInput = z
  .strictObject({
    ...staticChargeFields,
    minAmount: msat.optional(),
    maxAmount: msat.optional(),
    description: text.max(1000).optional(),
    // The Lightning-address identifier is chosen at creation; the docs name no way to change it.
    identifier: z.never({ error: 'cannot be changed after creation' }).optional(),
    expiresAt: z.iso.datetime({ offset: true }).nullable().optional(),
  })
  .superRefine(minNotAboveMax);
export type StaticChargeUpdateInput = z.input<typeof staticChargeUpdateInput>;
export type StaticChargeUpdateBody = z.output<typeof staticChargeUpdateInput>;

export const widgetUserInput = z.strictObject({
  reference_id: text.min(1).max(255),
  email: z.email(),
});
export type WidgetUserInput = z.input<typeof widgetUserInput>;
export type WidgetUserBody = z.output<typeof widgetUserInput>;

export const depleteInput = z
  .strictObject({
    user_id: text.min(1).max(255),
    amount: positiveInt,
    currency: z
      .string()
      .regex(/^[A-Z][A-Z0-9]{2,9}$/, 'must be a currency code such as USDZ')
      .default('USDZ'),
    idempotency_key: z.uuid().optional(),
  })
  .transform((value) => ({ ...value, idempotency_key: value.idempotency_key ?? randomUUID() }));
export type DepleteInput = z.input<typeof depleteInput>;
export type DepleteBody = z.output<typeof depleteInput>;

/**
 * An id the client puts in a path (`/v0/payments/{id}`). It is URL-encoded, but `.` and `..`
 * encode to themselves and servers and proxies resolve them as dot segments
 * (`/users/../disclosures` is `/disclosures`), so an id must be one plain segment: no dot
 * segment, no slash or backslash (some proxies decode `%2F` and `%5C`), no control character,
 * no lone surrogate (which `encodeURIComponent` cannot encode), at most 255 characters.
 */
export const pathId = z
  .string({ error: 'must be a string id' })
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .refine((id) => id !== '.' && id !== '..', 'must not be "." or ".."')
  .refine(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
    (id) => !/[\u0000-\u001f\u007f/\\]/.test(id),
    'must not hold a slash, a backslash or a control character',
  )
  .refine((id) => !/\p{Cs}/u.test(id), 'must be well-formed text (no lone surrogate)');

export const updateEmailInput = z.strictObject({ email: z.email() });
export type UpdateEmailBody = z.output<typeof updateEmailInput>;

export const widgetSessionInput = z
  .strictObject({
    email: z.email().optional(),
    webhook_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    reference_id: text.max(255).optional(),
    metadata: metadata.optional(),
    access_token: text.min(1).optional(),
  })
  .refine((v) => v.email !== undefined || v.access_token !== undefined, {
    path: ['email'],
    message: 'is required unless access_token is given',
  });
export type WidgetSessionInput = z.input<typeof widgetSessionInput>;
export type WidgetSessionBody = z.output<typeof widgetSessionInput>;

export const rampSessionInput = z.strictObject({
  email: z.email(),
  webhook_url: httpUrl,
  destination: purchaseDestination,
  quote_currency: quoteCurrency,
  base_currency: baseCurrency,
  reference_id: text.max(255).optional(),
  metadata: metadata.optional(),
});
export type RampSessionInput = z.input<typeof rampSessionInput>;
export type RampSessionBody = z.output<typeof rampSessionInput>;
