/**
 * The codes a player scans, read: an LNURL or a BOLT11 invoice, with or without `lightning:`.
 * Anything else is an `InvalidArgumentError` saying what it is not: no QR of garbage.
 */
import { bech32 } from 'bech32';
import { InvalidArgumentError } from '../errors.js';

/** bech32's default limit of 90 characters is far below an LNURL with a query or an invoice. */
const LIMIT = 4096;
const INVOICE_PREFIX = /^ln(bcrt|bc|tbs|tb|sb)(\d+[munp]?)?$/;

export interface LightningCode {
  /** `lnurl`: a link the wallet follows (pay or withdraw); `invoice`: a BOLT11 to pay. */
  kind: 'lnurl' | 'invoice';
  /** The code as given, without `lightning:` and surrounding spaces. */
  text: string;
  /** Lower case, as bech32 decoders and WebLN providers read it. */
  lower: string;
}

/** Reads a code, or throws `InvalidArgumentError` on `code`. */
export function readCode(code: unknown): LightningCode {
  if (typeof code !== 'string' || code.trim() === '')
    throw new InvalidArgumentError('code', 'must be an LNURL or a BOLT11 invoice, not empty');
  const text = code.trim().replace(/^lightning:/i, '');
  const lower = text.toLowerCase();
  if (text !== lower && text !== text.toUpperCase())
    throw new InvalidArgumentError('code', 'mixes upper and lower case: not a Lightning code');
  let prefix: string;
  try {
    prefix = bech32.decode(lower, LIMIT).prefix;
  } catch (error) {
    throw new InvalidArgumentError(
      'code',
      `is not an LNURL or a BOLT11 invoice (${error instanceof Error ? error.message : 'bech32'})`,
    );
  }
  if (prefix === 'lnurl') return { kind: 'lnurl', text, lower };
  if (INVOICE_PREFIX.test(prefix)) return { kind: 'invoice', text, lower };
  throw new InvalidArgumentError('code', `is bech32 of '${prefix}', not an LNURL or an invoice`);
}

/** The `lightning:` link of a code, for an `<a href>` a phone's wallet opens. */
export function lightningUri(code: string): string {
  return `lightning:${readCode(code).text}`;
}

/** The URL an LNURL stands for; throws `InvalidArgumentError` for an invoice or garbage. */
export function decodeLnurl(code: string): string {
  const read = readCode(code);
  if (read.kind !== 'lnurl') throw new InvalidArgumentError('code', 'is an invoice, not an LNURL');
  const { words } = bech32.decode(read.lower, LIMIT);
  return new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(bech32.fromWords(words)));
}
