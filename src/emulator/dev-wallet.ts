/**
 * The dev wallet: a page at /_emulator/ listing every project's rewards (withdrawal requests)
 * and fees (static charges), newest first, with Claim and Pay buttons, the players' points with
 * a Grant button, and the JSON routes behind it. The routes move money, so each needs the key
 * of this start, which the page reads from its URL's fragment; none sends CORS headers.
 */

import { z } from 'zod';
import { encodeBolt11 } from './bolt11.js';
import { type EmulatorCore, isPrice } from './core.js';
import { type Ctx, failure, json, outcome, type Reply } from './http.js';
import type { LnurlResult } from './lnurl.js';
import {
  payInvoice,
  payStaticCharge,
  refreshStaticCharge,
  staticChargeView,
} from './static-charges.js';
import type { Project, StaticChargeRecord, WithdrawalRequestRecord } from './store.js';
import {
  claimWithdrawalRequest,
  refreshWithdrawalRequest,
  withdrawalRequestView,
} from './withdrawals.js';

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

export function devClaim({ core, id }: Ctx): Reply {
  return outcome(claimAsWallet(core, id));
}

const payBody = z.object({
  amountMsat: z.union([z.number().int().positive(), z.string().regex(/^\d+$/)]).nullish(),
});

export function devPay({ core, id, body }: Ctx): Reply {
  const parsed = payBody.safeParse(body ?? {});
  if (!parsed.success) return failure('amountMsat must be a positive integer');
  const amount = parsed.data.amountMsat;
  return outcome(payStaticCharge(core, id, amount == null ? undefined : Number(amount)));
}

export function devPayInvoice({ core, body }: Ctx): Reply {
  const parsed = z.object({ pr: z.string().min(1) }).safeParse(body ?? {});
  if (!parsed.success) return failure('pr (BOLT11 invoice) is required');
  return outcome(payInvoice(core, parsed.data.pr));
}

/** How many of the latest entries `state` lists (the open ones are listed in full besides). */
const RECENT = 200;

/** One row of the page: a reward or a fee, whoever's it is, open or not. */
function entryOf(
  core: Ctx['core'],
  kind: 'withdrawalRequest' | 'staticCharge',
  of: WithdrawalRequestRecord | StaticChargeRecord,
  open: boolean,
  minMsat: string,
  maxMsat = minMsat,
) {
  const { id, projectId, status, description, createdAt } = of;
  // `player`: the `internalId` the game gave, its player id.
  return {
    id,
    kind,
    projectId,
    player: of.internalId,
    playerName: nameOf(core, of.internalId),
    minMsat,
    maxMsat,
    status,
    open,
    description,
    createdAt,
  };
}

/** The game's name of a player, when it gave one (control.namePlayers); a throw is no name. */
function nameOf(core: Ctx['core'], id: string | null | undefined): string | null {
  if (!id) return null;
  try {
    const name = core.playerName(id);
    return typeof name === 'string' && name !== '' ? name.slice(0, 100) : null;
  } catch {
    return null;
  }
}

type DevEntry = ReturnType<typeof entryOf> & { slots?: number; allowedSlots?: number | null };

export function devState({ core }: Ctx): Reply {
  const withdrawalRequests = [];
  const staticCharges = [];
  const entries: DevEntry[] = [];
  for (const wr of core.store.withdrawalRequests.values()) {
    refreshWithdrawalRequest(core, wr);
    const view = { projectId: wr.projectId, ...withdrawalRequestView(core, wr) };
    const open = wr.status === 'pending';
    if (open) withdrawalRequests.push(view);
    entries.push(entryOf(core, 'withdrawalRequest', wr, open, view.amount));
  }
  for (const charge of core.store.staticCharges.values()) {
    refreshStaticCharge(core, charge);
    const view = { projectId: charge.projectId, ...staticChargeView(core, charge) };
    const open = charge.status === 'active';
    if (open) staticCharges.push(view);
    const { slots, allowedSlots } = charge;
    const entry = entryOf(core, 'staticCharge', charge, open, view.minAmount, view.maxAmount);
    entries.push({ ...entry, slots, allowedSlots });
  }
  // Newest first; among entries of one millisecond, the later made first (maps keep the order
  // of insertion), rewards before charges.
  const order = new Map(entries.map((e, i) => [e, i]));
  const rank = (e: DevEntry) =>
    (order.get(e) ?? 0) + (e.kind === 'withdrawalRequest' ? entries.length : 0);
  entries.sort((a, b) => b.createdAt - a.createdAt || rank(b) - rank(a));
  const users = [...core.store.users.values()].map((u) => ({
    id: u.id,
    projectId: u.projectId,
    player: u.referenceId,
    playerName: nameOf(core, u.referenceId),
    email: u.email,
    points: Object.fromEntries(u.points),
  }));
  return json(200, { withdrawalRequests, staticCharges, entries: entries.slice(0, RECENT), users });
}

const grantBody = z.object({
  amount: z.union([z.number().int().positive(), z.string().regex(/^[1-9]\d*$/)]),
  currency: z.string().min(1).max(16).optional(),
});

/** Adds points to a player's balance, as the service's dashboard would: development only. */
export function devGrantPoints({ core, id: userId, body }: Ctx): Reply {
  const user = core.store.users.get(userId);
  if (!user) return failure('Unknown widget user', 404);
  const parsed = grantBody.safeParse(body ?? {});
  if (!parsed.success) return failure('amount must be a positive integer');
  const project: Project = core.store.project(user.projectId);
  const currency = parsed.data.currency ?? project.pointCurrency;
  const next = (user.points.get(currency) ?? 0) + Number(parsed.data.amount);
  if (!Number.isSafeInteger(next)) return failure('amount is too large');
  user.points.set(currency, next);
  return json(200, { status: 'OK', currency, points: next });
}

const priceBody = z.strictObject({
  price: z.number().refine(isPrice, 'must be a positive number of US dollars'),
  at: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
});

/**
 * Sets what `GET /v0/btcusd` answers (`{ price, at? }`), for a game or test in another process
 * than the emulator: `control.setBtcUsdPrice` in its own.
 */
export function devSetBtcUsd({ core, body }: Ctx): Reply {
  const parsed = priceBody.safeParse(body ?? {});
  if (!parsed.success) {
    return failure('price must be a positive number of US dollars (at: epoch ms)');
  }
  core.btcUsd = { price: parsed.data.price, at: parsed.data.at ?? null };
  return json(200, { status: 'OK', price: parsed.data.price });
}

export const DEV_WALLET_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>Emulator dev wallet</title>
<style>
body{font:15px system-ui;margin:2em;max-width:72em;color:#222}table{border-collapse:collapse;width:100%;margin-bottom:2em}
td,th{border-bottom:1px solid #ddd;padding:.4em;text-align:left}th{font-weight:600;color:#555}
td.amount{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}abbr{text-decoration:none;cursor:help}
.status{font-size:13px;padding:.1em .5em;border-radius:1em;background:#eee}.status.open{background:#fff3c4}
.status.done{background:#d8f5d8}.status.gone{background:#f3d6d6}.kind{color:#555}.none{color:#999}.bad{color:#b00;font-weight:600}
#log{white-space:pre-wrap;background:#f4f4f4;padding:.5em;min-height:2em;font-size:13px}
</style></head><body>
<h1>Dev wallet</h1>
<p>Every reward (withdrawal request) and fee (static charge) of every project of this emulator, newest first.
Claim and Pay do what the player's wallet would. Development only.</p>
<p id="nokey" hidden class="bad">This page needs the key of this emulator's start: open the dev wallet URL
the emulator printed (it ends in <code>#key=...</code>). A restarted emulator has a new key.</p>
<h2>Entries</h2><table id="entries"></table>
<h2>Players' points</h2><table id="users"></table>
<h2>Pay a BOLT11 invoice</h2>
<form id="inv"><input name="pr" size="80" placeholder="lnbc..."> <button>Pay</button></form>
<h2>Log</h2><div id="log"></div>
<script>
const log = (t) => { document.getElementById('log').textContent = t + '\\n' + document.getElementById('log').textContent; };
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => '&#' + c.charCodeAt(0) + ';');
const group = (digits) => String(digits).replace(/\\B(?=(\\d{3})+(?!\\d))/g, ',');
// msats as sats: whole sats when they are whole, else three decimals; the msats on hover.
const sats = (msat) => {
  const m = BigInt(msat), whole = m / 1000n, rest = m % 1000n;
  return group(whole) + (rest === 0n ? '' : '.' + String(rest).padStart(3, '0')) + ' sats';
};
const amount = (e) => {
  const text = e.minMsat === e.maxMsat ? sats(e.minMsat) : sats(e.minMsat) + ' to ' + sats(e.maxMsat);
  const hover = e.minMsat === e.maxMsat ? group(e.minMsat) + ' msats' : group(e.minMsat) + ' to ' + group(e.maxMsat) + ' msats';
  return '<abbr title="' + hover + '">' + esc(text) + '</abbr>';
};
// A player as the game named them, the id on hover; the id alone when the game gave no name.
const who = (e) => !e.player ? '<span class="none">none</span>' : e.playerName ? '<abbr title="' + esc(e.player) + '">' + esc(e.playerName) + '</abbr>' : esc(e.player);
const KIND = { withdrawalRequest: 'reward <small>(withdrawal request)</small>', staticCharge: 'fee <small>(static charge)</small>' };
const tone = (e) => e.open ? 'open' : e.status === 'completed' || (e.status === 'inactive' && e.slots > 0) ? 'done' : 'gone';
const statusText = (e) => e.kind === 'staticCharge' && e.status === 'inactive' && e.slots > 0 ? 'paid' : e.status;
const action = (e) => !e.open ? '' : e.kind === 'withdrawalRequest'
  ? '<button data-claim="' + esc(e.id) + '">Claim</button>'
  : '<input size="9" id="amt-' + esc(e.id) + '" value="' + esc(plainSats(e.minMsat)) + '" title="sats"> sats <button data-pay="' + esc(e.id) + '">Pay</button>';
// The amount to pay is typed in sats, as every amount on the page reads; sent in msats.
const plainSats = (msat) => { const m = BigInt(msat), rest = m % 1000n; return String(m / 1000n) + (rest === 0n ? '' : '.' + String(rest).padStart(3, '0')); };
const msatsOf = (text) => { const m = /^(\\d+)(?:\\.(\\d{1,3}))?$/.exec(String(text).trim()); return m ? String(BigInt(m[1]) * 1000n + BigInt((m[2] ?? '').padEnd(3, '0'))) : null; };
// The key of this start, from the fragment: never sent in a URL, sent in a header that no
// other origin may set on a request to this one.
const KEY = new URLSearchParams(location.hash.slice(1)).get('key') ?? '';
const keyed = (headers) => ({ ...headers, 'x-emulator-key': KEY });
const refused = (res) => {
  if (res.status !== 401) return false;
  document.getElementById('nokey').hidden = false;
  return true;
};
async function post(path, body) {
  const res = await fetch(path, { method: 'POST', headers: keyed({ 'content-type': 'application/json' }), body: JSON.stringify(body ?? {}) });
  if (refused(res)) return;
  const data = await res.json();
  log(path + ' -> ' + JSON.stringify(data));
  await refresh();
}
async function refresh() {
  const res = await fetch('state', { headers: keyed({}) });
  if (refused(res)) return;
  const state = await res.json();
  document.getElementById('entries').innerHTML = '<tr><th>player</th><th>kind</th><th>amount</th><th>description</th><th>status</th><th></th></tr>' +
    (state.entries.length === 0 ? '<tr><td colspan="6" class="none">Nothing yet.</td></tr>' : '') +
    state.entries.map((e) => '<tr><td>' + who(e) + '</td><td class="kind">' + KIND[e.kind] +
      '</td><td class="amount">' + amount(e) + '</td><td>' + esc(e.description) + '</td><td><span class="status ' + tone(e) + '">' +
      esc(statusText(e)) + '</span></td><td>' + action(e) + '</td></tr>').join('');
  document.getElementById('users').innerHTML = '<tr><th>player</th><th>email</th><th>points</th><th></th></tr>' +
    (state.users.length === 0 ? '<tr><td colspan="4" class="none">No widget user yet: one is made when a player first spends points.</td></tr>' : '') +
    state.users.map((u) => '<tr><td>' + (u.player ? who(u) : '') + '</td><td>' + esc(u.email) + '</td><td>' +
      (Object.entries(u.points).map(([c, n]) => esc(group(n)) + ' ' + esc(c)).join(', ') || '<span class="none">0</span>') +
      '</td><td><input size="7" id="pts-' + esc(u.id) + '" value="1000"> <button data-grant="' + esc(u.id) + '">Grant</button></td></tr>').join('');
}
document.body.addEventListener('click', (e) => {
  const t = e.target;
  if (t.dataset.claim) post('withdrawal-requests/' + t.dataset.claim + '/claim');
  if (t.dataset.pay) {
    const amountMsat = msatsOf(document.getElementById('amt-' + t.dataset.pay).value);
    if (amountMsat === null) log('the amount is in sats: 100, or 0.5 (to 3 decimals)');
    else post('static-charges/' + t.dataset.pay + '/pay', { amountMsat });
  }
  if (t.dataset.grant) post('users/' + t.dataset.grant + '/points', { amount: document.getElementById('pts-' + t.dataset.grant).value });
});
document.getElementById('inv').addEventListener('submit', (e) => { e.preventDefault(); post('pay-invoice', { pr: e.target.pr.value }); });
refresh(); setInterval(refresh, 3000);
</script></body></html>`;
