/**
 * The LNURL HTTP endpoints a wallet calls after scanning a code: LUD-03 withdraw (for
 * withdrawal requests) and LUD-06 pay with the LUD-09 message success action (for static
 * charges). Thin: the state changes live in withdrawals.ts and static-charges.ts, which
 * never import this file. Answers are JSON with `status: 'ERROR'` on failure; wallets read
 * the body, the HTTP status is 400 for errors only as a courtesy.
 */

import { type Ctx, json, type Reply } from './http.js';
import { lnurlPaths } from './lnurl.js';
import { chargeMetadata, issueChargeInvoice, refreshStaticCharge } from './static-charges.js';
import { claimWithdrawalRequest, refreshWithdrawalRequest, withdrawParams } from './withdrawals.js';

function lnurlError(reason: string): Reply {
  return json(400, { status: 'ERROR', reason });
}

/** LUD-03 step 1: what the wallet may withdraw. */
export function withdrawInfo({ core, id }: Ctx): Reply {
  const wr = core.store.withdrawalRequests.get(id);
  if (!wr) return lnurlError('Unknown withdrawal request');
  refreshWithdrawalRequest(core, wr);
  if (wr.status !== 'pending') return lnurlError(`Withdrawal request is ${wr.status}`);
  return json(200, withdrawParams(core, wr));
}

/** LUD-03 step 2: the wallet hands in k1 and its invoice; the claim happens here. */
export function withdrawCallback({ core, id, query }: Ctx): Reply {
  const result = claimWithdrawalRequest(core, id, query.get('k1'), query.get('pr'));
  return result.status === 'OK' ? json(200, result) : json(400, result);
}

/** LUD-06 step 1: what the payer may send. */
export function payInfo({ core, id }: Ctx): Reply {
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
export function payCallback({ core, id, query }: Ctx): Reply {
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
