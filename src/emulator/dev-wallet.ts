/**
 * The dev wallet: a page at /_emulator/ listing every open withdrawal request and active
 * static charge of every project, with Claim and Pay buttons, and the JSON routes behind
 * it. No API key and permissive CORS, so a game's browser client can call them too: the
 * emulator is for development only and must never face the internet.
 */

import { z } from 'zod';
import { encodeBolt11 } from './bolt11.js';
import type { EmulatorCore } from './core.js';
import { json, type Reply } from './http.js';
import type { LnurlResult } from './lnurl.js';
import {
  payInvoice,
  payStaticCharge,
  refreshStaticCharge,
  staticChargeView,
} from './static-charges.js';
import {
  claimWithdrawalRequest,
  refreshWithdrawalRequest,
  withdrawalRequestView,
} from './withdrawals.js';

export const CORS_HEADERS: Record<string, string> = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'content-type',
  'access-control-max-age': '600',
};

/**
 * Claims as a wallet would: an invoice for the full amount signed by the dev wallet's key,
 * handed to the same LUD-03 callback code a real wallet reaches over HTTP.
 */
export function claimAsWallet(core: EmulatorCore, id: string): LnurlResult {
  const wr = core.store.withdrawalRequests.get(id);
  if (!wr) return { status: 'ERROR', reason: 'Unknown withdrawal request' };
  const pr = encodeBolt11({
    amountMsat: wr.amountMsat,
    description: wr.description,
    timestamp: Math.floor(core.clock.now() / 1000),
    key: core.walletKey,
  });
  return claimWithdrawalRequest(core, id, wr.k1, pr);
}

function answer(result: { status: 'OK' | 'ERROR' }): Reply {
  return json(result.status === 'OK' ? 200 : 400, result);
}

export function devClaim(core: EmulatorCore, id: string): Reply {
  return answer(claimAsWallet(core, id));
}

const payBody = z.object({
  amountMsat: z.union([z.number().int().positive(), z.string().regex(/^\d+$/)]).nullish(),
});

export function devPay(core: EmulatorCore, id: string, body: unknown): Reply {
  const parsed = payBody.safeParse(body ?? {});
  if (!parsed.success)
    return json(400, { status: 'ERROR', reason: 'amountMsat must be a positive integer' });
  const amount = parsed.data.amountMsat;
  return answer(payStaticCharge(core, id, amount == null ? undefined : Number(amount)));
}

export function devPayInvoice(core: EmulatorCore, body: unknown): Reply {
  const parsed = z.object({ pr: z.string().min(1) }).safeParse(body ?? {});
  if (!parsed.success)
    return json(400, { status: 'ERROR', reason: 'pr (BOLT11 invoice) is required' });
  return answer(payInvoice(core, parsed.data.pr));
}

export function devState(core: EmulatorCore): Reply {
  const withdrawalRequests = [];
  for (const wr of core.store.withdrawalRequests.values()) {
    refreshWithdrawalRequest(core, wr);
    if (wr.status === 'pending')
      withdrawalRequests.push({ projectId: wr.projectId, ...withdrawalRequestView(core, wr) });
  }
  const staticCharges = [];
  for (const charge of core.store.staticCharges.values()) {
    refreshStaticCharge(core, charge);
    if (charge.status === 'active')
      staticCharges.push({ projectId: charge.projectId, ...staticChargeView(core, charge) });
  }
  return json(200, { withdrawalRequests, staticCharges });
}

export const DEV_WALLET_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>Emulator dev wallet</title>
<style>
body{font:15px system-ui;margin:2em;max-width:70em}table{border-collapse:collapse;width:100%;margin-bottom:2em}
td,th{border-bottom:1px solid #ddd;padding:.4em;text-align:left}code{font-size:12px;word-break:break-all}
#log{white-space:pre-wrap;background:#f4f4f4;padding:.5em;min-height:2em}
</style></head><body>
<h1>Dev wallet</h1>
<p>Every open withdrawal request and active static charge of every project of this emulator.
Development only: these routes need no API key.</p>
<h2>Withdrawal requests</h2><table id="wr"></table>
<h2>Static charges</h2><table id="sc"></table>
<h2>Pay a BOLT11 invoice</h2>
<form id="inv"><input name="pr" size="80" placeholder="lnbc..."> <button>Pay</button></form>
<h2>Log</h2><div id="log"></div>
<script>
const log = (t) => { document.getElementById('log').textContent = t + '\\n' + document.getElementById('log').textContent; };
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => '&#' + c.charCodeAt(0) + ';');
async function post(path, body) {
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
  const data = await res.json();
  log(path + ' -> ' + JSON.stringify(data));
  await refresh();
}
async function refresh() {
  const state = await (await fetch('state')).json();
  document.getElementById('wr').innerHTML = '<tr><th>amount (msat)</th><th>description</th><th>expires</th><th></th></tr>' +
    state.withdrawalRequests.map((w) => '<tr><td>' + esc(w.amount) + '</td><td>' + esc(w.description) + '</td><td>' + esc(w.expiresAt) +
      '</td><td><button data-claim="' + esc(w.id) + '">Claim</button></td></tr>').join('');
  document.getElementById('sc').innerHTML = '<tr><th>min..max (msat)</th><th>description</th><th>slots</th><th></th></tr>' +
    state.staticCharges.map((c) => '<tr><td>' + esc(c.minAmount) + '..' + esc(c.maxAmount) + '</td><td>' + esc(c.description) + '</td><td>' +
      esc(c.slots) + '/' + esc(c.allowedSlots ?? '∞') + '</td><td><input size="10" id="amt-' + esc(c.id) + '" value="' + esc(c.minAmount) +
      '"> <button data-pay="' + esc(c.id) + '">Pay</button></td></tr>').join('');
}
document.body.addEventListener('click', (e) => {
  const t = e.target;
  if (t.dataset.claim) post('withdrawal-requests/' + t.dataset.claim + '/claim');
  if (t.dataset.pay) post('static-charges/' + t.dataset.pay + '/pay', { amountMsat: document.getElementById('amt-' + t.dataset.pay).value });
});
document.getElementById('inv').addEventListener('submit', (e) => { e.preventDefault(); post('pay-invoice', { pr: e.target.pr.value }); });
refresh(); setInterval(refresh, 3000);
</script></body></html>`;
