/**
 * The payments port: what the server asks of a payments provider, in the game's words.
 * api/port.ts implements it for this service; a second provider is a second implementation.
 * Inputs come parsed; each implementation validates its answers.
 */

/** The state of a claim code or a pay code, or of a payment, in the game's words. */
export type ClaimState = 'open' | 'claimed' | 'expired' | 'failed';
export type PaymentState = 'sent' | 'paid' | 'failed';

/** A code a player's wallet claims money with (a reward). */
export interface ClaimCode {
  id: string;
  /** What the player's wallet reads (LNURL-withdraw): a bearer secret. */
  code: string;
  /** The code as a link, when the provider gives one. */
  uri: string | null;
  /** epoch ms; null: the provider says none. */
  expiresAt: number | null;
  /** The callback URL it carries: what proves a code a callback names ours. */
  callbackUrl: string | null;
  state: ClaimState;
  /** The provider's own word for its state, for the history. */
  said: string;
}

/** What every order that moves msats for a player names. */
interface Order {
  /** Millisatoshis, as digits. */
  amountMsat: string;
  playerId: string;
  callbackUrl: string;
}

export interface ClaimCodeOrder extends Order {
  description: string;
  /** Seconds from now until it can no longer be claimed. */
  expiresIn: number;
}

/** A code a player's wallet pays exactly one amount with, once (an entry fee). */
export interface PayCode {
  id: string;
  /** What the player's wallet pays (an LNURL-pay). */
  code: string;
  uri: string | null;
  callbackUrl: string | null;
  /** How many payments it has taken. */
  payments: number;
  /** Whether it takes no more payments. */
  closed: boolean;
  /** When the provider made it, on its own clock, as written; null: it did not say. */
  madeAt: string | null;
  said: string;
}

export interface PayCodeOrder extends Order {
  description: string;
  /** What the payer's wallet shows once paid. */
  successMessage?: string | undefined;
}

/** A payment sent to a Lightning address. */
export interface AddressPayment {
  id: string;
  callbackUrl: string | null;
  state: PaymentState;
  said: string;
}

export interface AddressPaymentOrder extends Order {
  lnAddress: string;
  comment?: string | undefined;
}

/** Points debited from a player's widget user, at most once per key. */
export interface PointSpend {
  /** The provider's id of the debit. */
  id: string;
  /** Whether it is done (the points are spent). */
  done: boolean;
  said: string;
}

export interface PointSpendOrder {
  /** The player's widget user. */
  userId: string;
  amount: number;
  currency: string;
  /** The same key makes a second send of it apply once. */
  key: string;
}

/** Whether the provider serves the players of an IP address's region. */
export interface RegionSupport {
  ipAddress: string;
  isSupported: boolean;
  ipCountry?: string | null | undefined;
  ipRegion?: string | null | undefined;
}

/** The price of one bitcoin in US dollars, and when the provider took it (epoch ms). */
export interface BtcUsdPrice {
  btcUsdPrice: number;
  btcUsdTimestamp: number;
}

/** The player's widget user at the provider, as it answered: its id at least. */
export interface WidgetUser {
  id: string;
  readonly [field: string]: unknown;
}

/** The provider's answer to a player's acceptance of disclosures. */
export interface DisclosureAcceptance {
  acceptedDisclosureTypeIds: number[];
  readonly [field: string]: unknown;
}

/** A widget session for one player (sent to that player's client only). */
export interface WidgetSession {
  /** The widget's URL to embed (it carries the session token). */
  url: string;
  expiresAt: string;
  token: string;
}

/** A purchase (ramp) session for one player (sent to that player's client only). */
export interface PurchaseSession {
  token: string;
  expiresAt: string | null;
  url: string | null;
}

export interface SessionOrder {
  playerId: string;
  email: string;
  /** Where the provider tells the game of what happened in the session. */
  webhookUrl: string;
  metadata: Record<string, unknown>;
}

export interface PurchaseOrder extends SessionOrder {
  destination?: string | undefined;
  quoteCurrency?: string | undefined;
  baseCurrency?: string | undefined;
}

/** What a failed call means, in the game's words. */
export type FailureMeaning =
  /** Sent, and its answer lost: the provider may have acted on it. */
  | 'ambiguous'
  /** An answer not in the provider's contract: it may have acted too. */
  | 'garbled'
  /** The player's points do not cover the debit; nothing was debited. */
  | 'insufficientPoints'
  /** The request as it stands, or a thing that does not exist (a bad address). */
  | 'refused'
  /** Our credentials may not do this. */
  | 'denied'
  /** The provider's rate limit outlasted the retries. */
  | 'rateLimited'
  /** No answer in time, or the provider's own error, on a call safe to repeat. */
  | 'unanswered'
  /** The request never reached the provider. */
  | 'unreached'
  /** Not a failure of a call to the provider. */
  | 'other';

export interface ServiceFailure {
  meaning: FailureMeaning;
  /** The provider answered with an error of its own (a 5xx): it, or a recipient, is unwell. */
  serverError: boolean;
  /** The provider asked us to slow down (a 429): never a sign that it is unwell. */
  slowDown: boolean;
}

export interface PaymentsPort {
  /** Makes a claim code of `amountMsat` for a player. */
  makeClaimCode(order: ClaimCodeOrder): Promise<ClaimCode>;
  readClaimCode(id: string): Promise<ClaimCode>;
  /** Makes a code that takes one payment of exactly `amountMsat`. */
  makePayCode(order: PayCodeOrder): Promise<PayCode>;
  readPayCode(id: string): Promise<PayCode>;
  /** Closes a pay code to any further payment (`now`: our clock); a payment first is counted. */
  closePayCode(code: PayCode, now: number): Promise<PayCode>;
  /** Sends a payment to a Lightning address: never sent twice (it has no key). */
  payAddress(order: AddressPaymentOrder): Promise<AddressPayment>;
  readAddressPayment(id: string): Promise<AddressPayment>;
  /** Whether the provider can pay `lnAddress`, asked once, within `timeoutMs`. */
  checkAddress(lnAddress: string, timeoutMs: number): Promise<boolean>;
  /** Debits a player's points: keyed, so sending it again applies it at most once. */
  spendPoints(order: PointSpendOrder): Promise<PointSpend>;
  /** The game's wallet at the provider, in millisatoshis. */
  readWallet(): Promise<bigint>;
  /** The addresses the provider's callbacks come from. */
  callbackSources(): Promise<string[]>;
  regionOf(ip: string): Promise<RegionSupport>;
  btcUsd(): Promise<BtcUsdPrice>;
  /** Makes the player's widget user, or answers the one the player already has. */
  makeWidgetUser(order: { playerId: string; email: string }): Promise<WidgetUser>;
  openWidget(order: SessionOrder): Promise<WidgetSession>;
  openPurchase(order: PurchaseOrder): Promise<PurchaseSession>;
  /** `typeIds` as `disclosureTypeIds` (port/widget.ts) returns them. */
  acceptDisclosures(userId: string, typeIds: readonly number[]): Promise<DisclosureAcceptance>;
  updateEmail(userId: string, email: string): Promise<WidgetUser>;
  /** What an error thrown by one of these calls means. */
  failureOf(err: unknown): ServiceFailure;
}
