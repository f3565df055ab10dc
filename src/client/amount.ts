/**
 * Amounts as players read them: sats, or fiat with the BTC price the server syncs. Exact at any
 * size: msats can exceed 2^53, so the arithmetic is BigInt and only the final decimal string
 * goes through `Intl.NumberFormat`.
 *
 *   formatAmount('21000')                                       // '21 sats'
 *   formatAmount('21000', { price: 100_000, currency: 'USD' })  // '$0.021'
 */
import { InvalidArgumentError } from '../errors.js';

/** The BTC price to show fiat with: a number (with `currency`), or the synced price's view. */
export type PriceInput = number | { btcPrice: number; currency: string } | null | undefined;

export interface FormatAmountOptions {
  /** The price of 1 BTC (a number in `currency`, or `priceOf(state.lightning)`); sats without. */
  price?: PriceInput;
  /** ISO 4217 code (`USD`) of a numeric `price`; a price object carries its own. */
  currency?: string;
  /** BCP 47 locale of the digits and symbols; default: the runtime's. */
  locale?: string;
}

const MSAT_PER_SAT = 1000n;
/** 1 BTC = 10^11 msat. */
const MSAT_PER_BTC = 100_000_000_000n;
/** Fiat is computed in millionths of the currency's unit, then rounded by the formatter. */
const MICRO = 1_000_000n;

/** Reads an msat amount: a string of digits, a bigint or a safe integer. */
export function toMsat(msat: string | bigint | number, field = 'msat'): bigint {
  if (typeof msat === 'bigint') return msat;
  if (typeof msat === 'number') {
    if (!Number.isSafeInteger(msat)) throw new InvalidArgumentError(field, 'must be an integer');
    return BigInt(msat);
  }
  if (typeof msat !== 'string' || !/^-?\d{1,30}$/.test(msat))
    throw new InvalidArgumentError(field, `must be a decimal string of msats, not ${show(msat)}`);
  return BigInt(msat);
}

/** `units / 10^scale` as an exact decimal string (`-1234.5`), without trailing zeros. */
export function decimal(units: bigint, scale: bigint): `${number}` {
  const sign = units < 0n ? '-' : '';
  const abs = units < 0n ? -units : units;
  const whole = abs / scale;
  const digits = String(scale).length - 1;
  const fraction = String(abs % scale)
    .padStart(digits, '0')
    .replace(/0+$/, '');
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}` as `${number}`;
}

/** Sats as an exact decimal string: `'21'`, `'21.5'` for 21500 msats. */
export function satsOf(msat: string | bigint | number): string {
  return decimal(toMsat(msat), MSAT_PER_SAT);
}

/** The amount as text: `'1,234 sats'`, or fiat (`'$1.23'`) with a known price. */
export function formatAmount(
  msat: string | bigint | number,
  options: FormatAmountOptions = {},
): string {
  const amount = toMsat(msat);
  const { price, currency } = priceAndCurrency(options);
  if (price === undefined) {
    const sats = decimal(amount, MSAT_PER_SAT);
    const text = new Intl.NumberFormat(options.locale, { maximumFractionDigits: 3 }).format(sats);
    return `${text} ${sats === '1' || sats === '-1' ? 'sat' : 'sats'}`;
  }
  // price * 10^6, exactly enough for any price given with up to 6 decimals.
  const scaledPrice = BigInt(Math.round(price * Number(MICRO)));
  const abs = amount < 0n ? -amount : amount;
  // Half up, in millionths of the currency unit.
  const micro = (abs * scaledPrice * 2n + MSAT_PER_BTC) / (2n * MSAT_PER_BTC);
  const value = decimal(amount < 0n ? -micro : micro, MICRO);
  return fiatFormat(options.locale, currency, micro).format(value);
}

/** The currency's usual digits; under one unit, two significant ones ($0.021, not $0.02). */
function fiatFormat(locale: string | undefined, currency: string, micro: bigint) {
  if (micro >= MICRO || micro === 0n)
    return new Intl.NumberFormat(locale, { style: 'currency', currency });
  const leadingZeros = 6 - String(micro).length;
  const digits = Math.max(2, leadingZeros + 2);
  return new Intl.NumberFormat(locale, {
    style: 'currency',
    currency,
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

function priceAndCurrency(options: FormatAmountOptions): { price?: number; currency: string } {
  const given = options.price;
  if (given === undefined || given === null) return { currency: '' };
  const price = typeof given === 'number' ? given : given.btcPrice;
  const currency = typeof given === 'number' ? options.currency : given.currency;
  // The synced price says '' when the game shows no fiat.
  if (typeof given === 'object' && currency === '') return { currency: '' };
  if (typeof price !== 'number' || !Number.isFinite(price) || price < 0)
    throw new InvalidArgumentError('price', `must be a finite number >= 0, not ${show(price)}`);
  if (price === 0) return { currency: '' };
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency))
    throw new InvalidArgumentError(
      'currency',
      `must be an ISO 4217 code such as 'USD' to show a price, not ${show(currency)}`,
    );
  return { price, currency };
}

function show(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : String(value);
}
