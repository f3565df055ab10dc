/**
 * The LNURL codec, as wallets read it: LUD-01 codes (bech32 of the URL, hrp `lnurl`), the
 * paths the emulator serves them on, and the shape of LNURL answers. Pure and a leaf: it
 * imports nothing of the emulator, so resources and handlers can both use it. Cost: one
 * bech32 pass over the URL per code.
 */

import { bech32 } from 'bech32';

/** bech32's default limit of 90 characters is far below a URL with a query (LUD-08). */
const LNURL_LIMIT = 4096;

export type LnurlResult = { status: 'OK' } | { status: 'ERROR'; reason: string };

export function encodeLnurl(url: string, upperCase = true): string {
  const code = bech32.encode('lnurl', bech32.toWords(Buffer.from(url, 'utf8')), LNURL_LIMIT);
  return upperCase ? code.toUpperCase() : code;
}

export function decodeLnurl(code: string): string {
  const text = code.trim().replace(/^lightning:/i, '');
  const { prefix, words } = bech32.decode(text.toLowerCase(), LNURL_LIMIT);
  if (prefix !== 'lnurl') throw new Error(`not an LNURL: prefix ${prefix}`);
  return Buffer.from(bech32.fromWords(words)).toString('utf8');
}

export const lnurlPaths = {
  withdraw: (id: string) => `/lnurl/withdraw/${id}`,
  withdrawCallback: (id: string) => `/lnurl/withdraw/${id}/callback`,
  pay: (id: string) => `/lnurl/pay/${id}`,
  payCallback: (id: string) => `/lnurl/pay/${id}/callback`,
};
