/**
 * BOLT11 invoices: encode (LNURL-pay answers, test wallets' invoices) and decode (the amount of
 * an invoice handed to LNURL-withdraw). Signed with a real secp256k1 recoverable signature and
 * carrying the payee key, so ordinary decoders accept them; received signatures are not
 * verified (nothing is paid over Lightning). Cost: one signature per encode.
 *
 * Keys and signatures are @noble/secp256k1's (RFC 6979 nonces, low-S): node:crypto computes
 * the recovery id BOLT11 carries but never reveals it. Not constant-time: these keys guard no
 * money.
 */

import { createHash, createHmac, randomBytes } from 'node:crypto';
import { hashes, keygen, sign } from '@noble/secp256k1';
import { bech32 } from 'bech32';

// The library's synchronous API needs an HMAC-SHA256, unless the host application set one.
hashes.hmacSha256 ??= (key, message) =>
  new Uint8Array(createHmac('sha256', key).update(message).digest());

export interface KeyPair {
  privateKey: Uint8Array;
  /** 33-byte compressed public key. */
  publicKey: Uint8Array;
}

export function generateKeyPair(): KeyPair {
  const { secretKey, publicKey } = keygen();
  return { privateKey: secretKey, publicKey };
}

/** Invoices outgrow bech32's default 90-character limit by far. */
const BECH32_LIMIT = 8192;
const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const TAG = (char: string): number => CHARSET.indexOf(char);

/** Millisatoshis per unit of each BOLT11 amount multiplier ('p' is a tenth of a msat). */
const MSAT_PER: Record<string, bigint> = {
  '': 100_000_000_000n,
  m: 100_000_000n,
  u: 100_000n,
  n: 100n,
};

export interface Bolt11Input {
  amountMsat?: number | bigint | null;
  /** 32-byte payment hash, hex or bytes; random when omitted. */
  paymentHash?: string | Uint8Array;
  /** Short description (tag d); ignored when descriptionHash is given. */
  description?: string;
  /** sha256 of the long description (tag h), e.g. of LNURL-pay metadata. */
  descriptionHash?: string | Uint8Array;
  /** Seconds; default 3600. */
  expirySec?: number;
  /** Epoch seconds; default now. */
  timestamp?: number;
  /** 'bc' (default), 'tb', 'bcrt'. */
  network?: string;
  /** Signing key; a process-wide key by default. */
  key?: KeyPair;
}

export interface Bolt11 {
  network: string;
  amountMsat: bigint | null;
  timestamp: number;
  paymentHash: string | null;
  paymentSecret: string | null;
  description: string | null;
  descriptionHash: string | null;
  expirySec: number;
  payeeNodeKey: string | null;
  signature: string;
  recoveryId: number;
}

let defaultKey: KeyPair | undefined;

function bytesOf(value: string | Uint8Array): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'hex') : Buffer.from(value);
}

function encodeAmount(msat: bigint): string {
  if (msat <= 0n) throw new RangeError('amount must be positive');
  for (const unit of ['', 'm', 'u', 'n'] as const) {
    const per = MSAT_PER[unit] as bigint;
    if (msat % per === 0n) return `${msat / per}${unit}`;
  }
  return `${msat * 10n}p`;
}

function decodeAmount(text: string): bigint {
  const match = /^(\d+)([munp]?)$/.exec(text);
  if (!match) throw new Error(`invalid amount ${text}`);
  const value = BigInt(match[1] as string);
  const unit = match[2] as string;
  if (unit === 'p') {
    if (value % 10n !== 0n) throw new Error('sub-millisatoshi amount');
    return value / 10n;
  }
  return value * (MSAT_PER[unit] as bigint);
}

function intWords(value: number): number[] {
  const words: number[] = [];
  let rest = value;
  do {
    words.unshift(rest % 32);
    rest = Math.floor(rest / 32);
  } while (rest > 0);
  return words;
}

function field(tag: string, data: number[]): number[] {
  return [TAG(tag), data.length >> 5, data.length & 31, ...data];
}

/** 5-bit words to bytes; `pad` zero-fills the last byte, as BOLT11 asks for the signed data. */
function wordsToBytes(words: number[], pad = true): Buffer {
  const out: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const w of words) {
    acc = (acc << 5) | w;
    bits += 5;
    while (bits >= 8) {
      bits -= 8;
      out.push((acc >> bits) & 0xff);
    }
    acc &= (1 << bits) - 1;
  }
  if (pad && bits > 0) out.push((acc << (8 - bits)) & 0xff);
  return Buffer.from(out);
}

function wordsToInt(words: number[]): number {
  return words.reduce((acc, w) => acc * 32 + w, 0);
}

export function encodeBolt11(input: Bolt11Input): string {
  defaultKey ??= generateKeyPair();
  const key = input.key ?? defaultKey;
  const network = input.network ?? 'bc';
  const amount = input.amountMsat == null ? null : BigInt(input.amountMsat);
  const hrp = `ln${network}${amount === null ? '' : encodeAmount(amount)}`;
  const timestamp = input.timestamp ?? Math.floor(Date.now() / 1000);
  const paymentHash = input.paymentHash ? bytesOf(input.paymentHash) : randomBytes(32);
  if (paymentHash.length !== 32) throw new RangeError('paymentHash must be 32 bytes');
  const words: number[] = [];
  for (let i = 6; i >= 0; i--) words.push(Math.floor(timestamp / 32 ** i) % 32);
  words.push(...field('p', bech32.toWords(paymentHash)));
  words.push(...field('s', bech32.toWords(randomBytes(32))));
  if (input.descriptionHash !== undefined) {
    words.push(...field('h', bech32.toWords(bytesOf(input.descriptionHash))));
  } else {
    words.push(...field('d', bech32.toWords(Buffer.from(input.description ?? '', 'utf8'))));
  }
  words.push(...field('x', intWords(input.expirySec ?? 3600)));
  words.push(...field('c', intWords(18)));
  words.push(...field('n', bech32.toWords(key.publicKey)));
  const hash = createHash('sha256')
    .update(Buffer.from(hrp, 'utf8'))
    .update(wordsToBytes(words))
    .digest();
  // The library puts the recovery id first; BOLT11 wants it after r || s.
  const signed = sign(hash, key.privateKey, { prehash: false, format: 'recovered' });
  words.push(...bech32.toWords(Buffer.concat([signed.subarray(1), signed.subarray(0, 1)])));
  return bech32.encode(hrp, words, BECH32_LIMIT);
}

export function decodeBolt11(invoice: string): Bolt11 {
  const text = invoice.trim().replace(/^lightning:/i, '');
  const { prefix, words } = bech32.decode(text, BECH32_LIMIT);
  const match = /^ln(bcrt|bc|tbs|tb|sb)(\d+[munp]?)?$/.exec(prefix);
  if (!match) throw new Error(`not a BOLT11 invoice prefix: ${prefix}`);
  if (words.length < 7 + 104) throw new Error('invoice too short');
  const result: Bolt11 = {
    network: match[1] as string,
    amountMsat: match[2] ? decodeAmount(match[2]) : null,
    timestamp: wordsToInt(words.slice(0, 7)),
    paymentHash: null,
    paymentSecret: null,
    description: null,
    descriptionHash: null,
    expirySec: 3600,
    payeeNodeKey: null,
    signature: '',
    recoveryId: 0,
  };
  const sigBytes = Buffer.from(bech32.fromWords(words.slice(-104)));
  result.signature = sigBytes.subarray(0, 64).toString('hex');
  result.recoveryId = sigBytes[64] ?? 0;
  const tagged = words.slice(7, -104);
  for (let i = 0; i + 3 <= tagged.length; ) {
    const tag = CHARSET[tagged[i] as number];
    const length = ((tagged[i + 1] as number) << 5) + (tagged[i + 2] as number);
    const data = tagged.slice(i + 3, i + 3 + length);
    i += 3 + length;
    const bytes = () => wordsToBytes(data, false);
    if (tag === 'p' && length === 52) result.paymentHash = bytes().toString('hex');
    else if (tag === 's' && length === 52) result.paymentSecret = bytes().toString('hex');
    else if (tag === 'h' && length === 52) result.descriptionHash = bytes().toString('hex');
    else if (tag === 'n' && length === 53) result.payeeNodeKey = bytes().toString('hex');
    else if (tag === 'd') result.description = bytes().toString('utf8');
    else if (tag === 'x') result.expirySec = wordsToInt(data);
  }
  return result;
}
