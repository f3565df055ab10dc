/**
 * What the service answers, as zod loose objects: the fields we rely on are checked, the
 * ones we do not know are kept. A status the contract does not list is kept as text, so a
 * new status on the service's side never breaks parsing; the types name the known ones.
 */
import { z } from 'zod';

/** A known status (as the docs list them), or any other text the service sends. */
export type Status<Known extends string> = Known | (string & {});

/** Millisatoshis arrive as digit strings; a number is accepted and turned into one. */
const msatText = z.union([
  z.string().regex(/^\d+$/),
  z
    .number()
    .int()
    .nonnegative()
    .transform((n) => String(n)),
]);
const optionalText = z.string().nullish();

export const withdrawalRequest = z.looseObject({
  id: z.string().min(1),
  unit: z.string().optional(),
  amount: msatText,
  status: z.string(),
  description: optionalText,
  createdAt: optionalText,
  expiresAt: optionalText,
  internalId: optionalText,
  callbackUrl: optionalText,
  fee: z.union([z.string(), z.number()]).nullish(),
  invoice: z.looseObject({
    request: z.string().min(1),
    uri: optionalText,
    expiresAt: optionalText,
    fastRequest: optionalText,
    fastUri: optionalText,
  }),
});
export type WithdrawalRequest = z.output<typeof withdrawalRequest> & {
  status: Status<'pending' | 'completed' | 'expired' | 'error'>;
};

export const staticCharge = z.looseObject({
  id: z.string().min(1),
  unit: z.string().optional(),
  slots: z.number().int().nonnegative(),
  minAmount: msatText,
  maxAmount: msatText,
  createdAt: optionalText,
  expiresAt: optionalText,
  internalId: optionalText,
  description: optionalText,
  callbackUrl: optionalText,
  allowedSlots: z.number().int().nullish(),
  successMessage: optionalText,
  status: z.string(),
  invoice: z.looseObject({
    request: z.string().min(1),
    uri: optionalText,
  }),
});
export type StaticCharge = z.output<typeof staticCharge> & {
  status: Status<'active' | 'inactive' | 'expired' | 'disabled'>;
};

export const payment = z.looseObject({
  id: z.string().min(1),
  status: z.string(),
  unit: z.string().optional(),
  amount: msatText.optional(),
  fee: z.union([z.string(), z.number()]).nullish(),
  description: optionalText,
  internalId: optionalText,
  /** Where the service POSTs its status updates; the server proves a callback's id by it. */
  callbackUrl: optionalText,
  /** The comment of a payment to a Lightning address. */
  comment: optionalText,
  preimage: optionalText,
  processedAt: optionalText,
  confirmedAt: optionalText,
});
export type Payment = z.output<typeof payment> & {
  status: Status<'initial' | 'processing' | 'completed' | 'failed'>;
};

/** `GET /v0/ln-address/validate/{address}`: whether the address can be paid, and its terms. */
export const lnAddressValidation = z.looseObject({
  valid: z.boolean(),
  metadata: z.unknown().optional(),
});
export type LnAddressValidation = z.output<typeof lnAddressValidation>;

export const wallet = z.looseObject({
  /** Satoshis. */
  balance: z.union([
    z.number().nonnegative(),
    z
      .string()
      .regex(/^\d+(\.\d+)?$/)
      .transform(Number),
  ]),
});
export type Wallet = z.output<typeof wallet>;

export const widgetUser = z.looseObject({
  id: z.string().min(1),
  reference_id: optionalText,
  email: optionalText,
  outstanding_disclosures: z.unknown().optional(),
});
export type WidgetUser = z.output<typeof widgetUser>;

export const pointTransfer = z.looseObject({
  transfer_id: z.string().min(1),
  status: z.string(),
});
export type PointTransfer = z.output<typeof pointTransfer> & {
  status: Status<'COMPLETED'>;
};

export const disclosureAcceptance = z.looseObject({
  acceptedDisclosureTypeIds: z.array(z.number().int()),
});
export type DisclosureAcceptance = z.output<typeof disclosureAcceptance>;

export const widgetSession = z.looseObject({
  session_token: z.string().min(1),
  expires_at: z.string().min(1),
  widget_url: z.string().min(1),
});
export type WidgetSessionAnswer = z.output<typeof widgetSession>;

export const rampSession = z.looseObject({
  session_token: z.string().min(1),
  expires_at: optionalText,
  widget_url: optionalText,
});
export type RampSessionAnswer = z.output<typeof rampSession>;

export const prodIps = z.looseObject({
  ips: z.array(z.string().min(1).max(64)).max(1000),
});
export type ProdIps = z.output<typeof prodIps>;

export const regionSupport = z.looseObject({
  ipAddress: z.string(),
  isSupported: z.boolean(),
  ipCountry: optionalText,
  ipRegion: optionalText,
});
export type RegionSupport = z.output<typeof regionSupport>;

/** A decimal number the service may send as a JSON number or as text ("97123.45"). */
const decimal = z.union([
  z.number(),
  z
    .string()
    .regex(/^\d{1,15}(\.\d{1,12})?$/, 'must be a decimal number')
    .transform(Number),
]);

/**
 * When the service priced it, as epoch ms: its SDKs type `btcUsdTimestamp` as text without
 * saying the unit, so seconds (under 10^12), milliseconds and ISO 8601 are all read.
 */
const instant = z.union([decimal, z.iso.datetime({ offset: true })]).transform((t, ctx) => {
  const ms = typeof t === 'string' ? Date.parse(t) : t < 1e12 ? t * 1000 : t;
  if (!Number.isFinite(ms) || ms < 0) {
    ctx.addIssue({ code: 'custom', message: 'must be a time' });
    return z.NEVER;
  }
  return Math.round(ms);
});

/** `GET /v0/btcusd`: the price of one bitcoin in US dollars, and when it was taken. */
export const btcUsdPrice = z.looseObject({
  btcUsdPrice: decimal.refine((p) => Number.isFinite(p) && p > 0, 'must be a positive price'),
  btcUsdTimestamp: instant,
});
export type BtcUsdPrice = z.output<typeof btcUsdPrice>;
