/**
 * LNURL as wallets speak it: LUD-01 codes (bech32 of the URL, hrp `lnurl`), the LUD-03
 * withdraw endpoints of withdrawal requests and the LUD-06 pay endpoints of static charges
 * (with the LUD-09 message success action). Answers are JSON with `status: 'ERROR'` on
 * failure; wallets read the body, the HTTP status is 400 for errors only as a courtesy.
 */

import { bech32 } from 'bech32';
import type { EmulatorCore } from './core.js';
import { json, type Reply } from './http.js';
import { chargeMetadata, issueChargeInvoice, refreshStaticCharge } from './static-charges.js';
import { claimWithdrawalRequest, refreshWithdrawalRequest } from './withdrawals.js';

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

export function lnurlError(reason: string): Reply {
  return json(400, { status: 'ERROR', reason });
}

/** LUD-03 step 1: what the wallet may withdraw. */
export function withdrawInfo(core: EmulatorCore, id: string): Reply {
  const wr = core.store.withdrawalRequests.get(id);
  if (!wr) return lnurlError('Unknown withdrawal request');
  refreshWithdrawalRequest(core, wr);
  if (wr.status !== 'pending') return lnurlError(`Withdrawal request is ${wr.status}`);
  return json(200, withdrawParams(core, wr.id));
}

export function withdrawParams(core: EmulatorCore, id: string) {
  const wr = core.store.withdrawalRequests.get(id);
  if (!wr) throw new Error(`unknown withdrawal request ${id}`);
  return {
    tag: 'withdrawRequest' as const,
    callback: `${core.baseUrl}${lnurlPaths.withdrawCallback(id)}`,
    k1: wr.k1,
    defaultDescription: wr.description,
    // min = max: a withdrawal request is claimed whole, once.
    minWithdrawable: wr.amountMsat,
    maxWithdrawable: wr.amountMsat,
  };
}

/** LUD-03 step 2: the wallet hands in k1 and its invoice; the claim happens here. */
export function withdrawCallback(core: EmulatorCore, id: string, query: URLSearchParams): Reply {
  const result = claimWithdrawalRequest(core, id, query.get('k1'), query.get('pr'));
  return result.status === 'OK' ? json(200, result) : json(400, result);
}

/** LUD-06 step 1: what the payer may send. */
export function payInfo(core: EmulatorCore, id: string): Reply {
  const charge = core.store.staticCharges.get(id);
  if (!charge) return lnurlError('Unknown static charge');
  refreshStaticCharge(core, charge);
  if (charge.status !== 'active') return lnurlError(`Static charge is ${charge.status}`);
  return json(200, {
    tag: 'payRequest',
    callback: `${core.baseUrl}${lnurlPaths.payCallback(id)}`,
    minSendable: charge.minAmountMsat,
    maxSendable: charge.maxAmountMsat,
    metadata: chargeMetadata(charge),
    commentAllowed: 0,
  });
}

/** LUD-06 step 2: an invoice for the chosen amount. */
export function payCallback(core: EmulatorCore, id: string, query: URLSearchParams): Reply {
  const amount = query.get('amount');
  if (!amount || !/^\d+$/.test(amount)) return lnurlError('amount (msat) is required');
  const result = issueChargeInvoice(core, id, Number(amount));
  if (result.status === 'ERROR') return json(400, result);
  return json(200, {
    pr: result.pr,
    routes: [],
    ...(result.successMessage
      ? { successAction: { tag: 'message', message: result.successMessage } }
      : {}),
  });
}
