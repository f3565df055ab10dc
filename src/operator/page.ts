/**
 * The console's one page: HTML, CSS and script inline, with a Content Security Policy that
 * allows exactly this script and style (by hash) and fetches to this origin only: no CDN, no
 * build step. Every value is written with `textContent`, so a player's text stays text. Inputs
 * whose text must survive a refresh are in the static page, not in what the refresh rebuilds.
 */
import { createHash } from 'node:crypto';
import { INTENT_KINDS, INTENT_STATUSES } from '../ledger/intent.js';

const STYLE = `
:root { font: 14px/1.4 system-ui, sans-serif; color: #1d2330; background: #f5f6f8; }
body { margin: 0; }
header { background: #1d2330; color: #fff; padding: 10px 20px; display: flex; gap: 16px; align-items: baseline; }
header h1 { font-size: 18px; margin: 0; }
header .muted { color: #aab; }
main { padding: 16px 20px; display: grid; gap: 16px; }
section { background: #fff; border: 1px solid #dde; border-radius: 6px; padding: 12px 16px; }
section h2 { font-size: 15px; margin: 0 0 8px; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 8px; }
.card { border: 1px solid #e4e6ee; border-radius: 4px; padding: 6px 10px; }
.card .label { font-size: 12px; color: #667; }
.card .value { font-size: 16px; font-variant-numeric: tabular-nums; }
.short .value { color: #b3261e; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 4px 6px; border-bottom: 1px solid #eef; vertical-align: top; }
tr.pick { cursor: pointer; } tr.pick:hover { background: #f0f3ff; }
.status { padding: 0 6px; border-radius: 8px; background: #eef; }
.status.completed { background: #dff5e3; } .status.unknown, .status.failed { background: #fde2e0; } .status.held { background: #fff1c2; }
.status.pending, .status.creating { background: #fff3cd; }
form.filters { display: flex; flex-wrap: wrap; gap: 6px; margin-bottom: 8px; }
input, select, button { font: inherit; padding: 3px 6px; }
button { cursor: pointer; }
.alert { color: #b3261e; } .ok { color: #2e7d32; } .empty { color: #889; }
pre { white-space: pre-wrap; font-size: 12px; margin: 0; }
#detail:empty { display: none; }
.controls { margin-top: 8px; }
`;

// Plain browser script, no module: `location` tells it where the console is mounted.
const SCRIPT = `
'use strict';
const base = location.pathname.replace(/\\/+$/, '');
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined && text !== null) e.textContent = String(text); if (cls) e.className = cls; return e; };
const sats = (msat) => { if (msat === null || msat === undefined) return '—'; const n = BigInt(msat); const s = n / 1000n, r = (n < 0n ? -n : n) % 1000n; return s.toLocaleString() + (r ? '.' + String(r).padStart(3, '0').replace(/0+$/, '') : '') + ' sats'; };
const when = (ms) => ms ? new Date(ms).toLocaleString() : '—';
async function get(path) { const r = await fetch(base + path, { credentials: 'same-origin', headers: { accept: 'application/json' } }); if (!r.ok) throw new Error((await r.json().catch(() => ({}))).error || r.status); return r.json(); }
async function act(name, body) {
  const r = await fetch(base + '/api/actions/' + name, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json', 'x-lightning-console': 'action' }, body: JSON.stringify(body) });
  const answer = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(answer.error || String(r.status));
  return answer.result;
}
function row(cells, onClick) { const tr = el('tr'); for (const c of cells) { const td = el('td'); if (c instanceof Node) td.append(c); else { td.textContent = c === null || c === undefined ? '' : String(c); } tr.append(td); } if (onClick) { tr.className = 'pick'; tr.addEventListener('click', onClick); } return tr; }
function table(head, rows) { const t = el('table'); const h = el('tr'); for (const c of head) h.append(el('th', c)); t.append(h); for (const r of rows) t.append(r); return t; }
const badge = (status) => el('span', status, 'status ' + status);
// A player as a person reads them: the name the game gave (playerName), the id on hover.
function who(x) { if (!x.playerName) return x.playerId; const s = el('span', x.playerName); s.title = x.playerId; return s; }
function named(x) { return x.playerName ? x.playerName + ' (' + x.playerId + ')' : x.playerId; }
function card(label, value, cls) { const c = el('div', undefined, 'card' + (cls ? ' ' + cls : '')); c.append(el('div', label, 'label'), el('div', value, 'value')); return c; }
function say(text, cls) { $('message').textContent = text; $('message').className = cls || ''; }
// The engine's refusals already say "<action> refused: ..."; others get the prefix.
const refused = (what, e) => say(/ refused: /.test(e.message) ? e.message : what + ' refused: ' + e.message, 'alert');
async function button(b, what, run) { b.disabled = true; try { say(await run(), 'ok'); } catch (e) { refused(what, e); } b.disabled = false; refresh(); tables(); }
// An action moves intents and matches: their tables are read again, as the banner and the log are.
function tables() { loadIntents().catch((e) => say(e.message, 'alert')); loadMatches().catch((e) => say(e.message, 'alert')); }

function showBalances(b) {
  const short = b.coverMsat !== null && BigInt(b.coverMsat) < 0n;
  $('balances').replaceChildren(
    card('In escrow', sats(b.escrowMsat)), card('Owed to players', sats(b.owedToPlayersMsat)),
    card('Claimable codes', sats(b.claimableMsat)), card('To pay by hand', sats(b.toPayByHandMsat)),
    card('In tabs', sats(b.tabsMsat)), card('In flight', sats(b.inFlightMsat)), card('Rake', sats(b.house.rakeMsat)),
    card('Entry fees', sats(b.house.feesMsat)), card('Rewards paid', sats(b.house.rewardsMsat)),
    card('House net', sats(b.house.netMsat)), card('Wallet', b.wallet ? sats(b.wallet.msat) : 'not read yet'),
    card('Cover', sats(b.coverMsat), short ? 'short' : ''));
}
function showNeeds(o) {
  const box = $('needs'); const typed = keepTyped(box); box.replaceChildren();
  $('resume').hidden = !o.paused; $('pause').hidden = !!o.paused; $('pause-why').hidden = !!o.paused;
  if (o.paused) {
    const p = el('div', undefined, 'alert'); p.append(el('strong', 'Payouts paused: '), el('span', o.paused.reason + ' (' + o.paused.cause + (o.paused.by ? ' ' + o.paused.by : '') + ', ' + when(o.paused.at) + ')'));
    box.append(p);
  }
  for (const a of o.alerts) box.append(el('div', 'Alert: ' + a.message, 'alert'));
  if (o.unknowns.length) {
    box.append(el('h3', 'Unknown outcomes (' + o.unknowns.length + ')'));
    box.append(table(['Intent', 'Kind', 'Player', 'Amount', 'Since', 'Decide'], o.unknowns.map((i) => {
      const f = el('span'); const s = el('select'); for (const v of ['completed', 'expired', 'failed']) { const op = el('option', v); op.value = v; s.append(op); }
      const note = el('input'); note.placeholder = 'why (what the service says)'; note.setAttribute('aria-label', 'note for ' + i.id);
      const b = el('button', 'Resolve'); b.addEventListener('click', async (ev) => { ev.stopPropagation(); b.disabled = true; try { const r = await act('resolve', { id: i.id, status: s.value, note: note.value }); say('Resolved ' + r.id + ' as ' + r.status + '.', 'ok'); } catch (e) { say('Resolve refused: ' + e.message, 'alert'); b.disabled = false; } refresh(); tables(); });
      s.addEventListener('click', (ev) => ev.stopPropagation()); note.addEventListener('click', (ev) => ev.stopPropagation());
      f.append(s, note, b); f.className = 'resolve'; f.dataset.intent = i.id;
      return row([i.id, i.kind, who(i), sats(i.amount), when(i.updatedAt), f], () => showIntent(i.id));
    })));
  }
  if (o.held.length) {
    box.append(el('h3', 'Held payouts (' + o.held.length + ')'));
    box.append(table(['Intent', 'Kind', 'Player', 'Amount', 'Held since', 'Decide'], o.held.map((i) => {
      const f = el('span'); f.className = 'approval'; f.dataset.intent = i.id;
      const ok = el('button', 'Approve'); ok.addEventListener('click', async (ev) => { ev.stopPropagation(); ok.disabled = true; try { const r = await act('approve', { id: i.id }); say('Approved ' + r.id + ': ' + r.status + '.', 'ok'); } catch (e) { say('Approve refused: ' + e.message, 'alert'); ok.disabled = false; } refresh(); tables(); });
      const why = el('input'); why.placeholder = 'why reject'; why.setAttribute('aria-label', 'why reject ' + i.id);
      const no = el('button', 'Reject'); no.addEventListener('click', async (ev) => { ev.stopPropagation(); no.disabled = true; try { const r = await act('reject', { id: i.id, why: why.value }); say('Rejected ' + r.id + '.', 'ok'); } catch (e) { say('Reject refused: ' + e.message, 'alert'); no.disabled = false; } refresh(); tables(); });
      why.addEventListener('click', (ev) => ev.stopPropagation());
      f.append(ok, why, no);
      return row([i.id, i.kind, who(i), sats(i.amount), when(i.createdAt), f], () => showIntent(i.id));
    })));
  }
  if (!box.childNodes.length) box.append(el('div', 'Nothing needs a person.', 'empty'));
  typed();
}
// What an operator was typing or choosing in a decision's form (and where the caret was)
// outlives the refresh that rebuilds the forms: the function puts it back.
function keepTyped(box) {
  const fields = (f) => [...f.querySelectorAll('input,select')];
  const kept = new Map([...box.querySelectorAll('[data-intent]')].map((f) => [f.dataset.intent, fields(f).map((x) => x.value)]));
  const at = document.activeElement, form = box.contains(at) ? at.closest('[data-intent]') : null;
  const focus = form ? [form.dataset.intent, fields(form).indexOf(at)] : null;
  return () => {
    for (const f of box.querySelectorAll('[data-intent]')) {
      const values = kept.get(f.dataset.intent) || []; fields(f).forEach((x, k) => { if (values[k]) x.value = values[k]; });
      if (focus && focus[0] === f.dataset.intent) fields(f)[focus[1]]?.focus();
    }
  };
}
async function refresh() {
  try { const o = await get('/api/overview'); showBalances(o.balances); showNeeds(o); $('exports').hidden = !o.exports; await loadOplog(); await loadRefusals(); $('updated').textContent = 'updated ' + new Date().toLocaleTimeString(); }
  catch (e) { $('updated').textContent = 'not updated: ' + e.message; }
}
// The log is append-only and paged by seq: the page asks only for lines after the last it holds.
const oplog = { last: -1, lines: [] };
async function loadOplog() {
  const since = Date.now() - 7 * 86400000;
  for (let pages = 0; pages < 20; pages++) {
    const q = new URLSearchParams(oplog.last < 0 ? { since: String(since) } : { after: String(oplog.last) }); q.set('limit', '1000');
    const page = await get('/api/oplog?' + q);
    for (const a of page.actions) if (a.seq > oplog.last) { oplog.lines.push(a); oplog.last = a.seq; }
    if (!page.next || !page.actions.length) break;
  }
  oplog.lines = oplog.lines.slice(-200);
  $('oplog').replaceChildren(oplog.lines.length ? table(['At', 'By', 'Action', 'Intent', 'Player', 'Before → after', 'Why'], oplog.lines.slice().reverse().map((a) => {
    const tr = row([when(a.at), a.by, a.action, a.intentId, who(a), a.before + ' → ' + a.after, a.note], a.intentId ? () => showIntent(a.intentId) : undefined); tr.dataset.action = a.action; return tr;
  })) : el('div', 'No operator action in the last 7 days.', 'empty'));
}
// Tabs, largest first: the first page on load and on "Again", the next one on "More".
const tabs = { next: null, rows: [] };
async function loadTabs(more) {
  const q = new URLSearchParams({ limit: '50' }); if (more && tabs.next) q.set('after', tabs.next);
  const page = await get('/api/tabs?' + q); tabs.rows = more ? tabs.rows.concat(page.tabs) : page.tabs; tabs.next = page.next;
  $('tabs').replaceChildren(tabs.rows.length ? table(['Player', 'Tab'], tabs.rows.map((t) => { const tr = row([who(t), sats(t.balanceMsat)]); if (BigInt(t.balanceMsat) < 0n) tr.className = 'alert'; return tr; })) : el('div', 'No player has a tab.', 'empty'));
  $('tabs-more').hidden = !tabs.next;
}
async function loadRefusals() {
  const r = await get('/api/refusals?limit=50');
  $('refusals').replaceChildren(r.recent.length ? table(['At', 'Call', 'Player', 'Amount', 'Code', 'Why'], r.recent.map((x) => row([when(x.at), x.call, who(x), sats(x.amountMsat), x.code, x.message]))) : el('div', 'No tab call refused since this process started.', 'empty'));
  $('refusal-counts').textContent = r.counts.map((c) => c.call + ' ' + c.code + ': ' + c.count).join(' · ');
}
$('tabs-more').addEventListener('click', () => loadTabs(true).catch((e) => say(e.message, 'alert')));
$('tabs-again').addEventListener('click', () => loadTabs(false).catch((e) => say(e.message, 'alert')));
$('pause').addEventListener('click', () => button($('pause'), 'Pause', async () => { await act('pause', { why: $('pause-why').value }); $('pause-why').value = ''; return 'Payouts paused.'; }));
$('resume').addEventListener('click', () => button($('resume'), 'Resume', async () => { await act('resume', {}); return 'Payouts resumed.'; }));

function params(form) { const q = new URLSearchParams(); for (const [k, v] of new FormData(form)) { if (!v) continue; q.set(k, (k === 'since' || k === 'until') ? String(new Date(v).getTime()) : v); } return q; }
async function loadIntents() {
  const q = params($('filters')); const out = new Map(); let next = null, pages = 0;
  do { if (next) q.set('after', next); const page = await get('/api/intents?' + q); for (const i of page.intents) out.set(i.id, i); next = page.next; pages++; } while (next && out.size < 200 && pages < 20);
  const list = [...out.values()].sort((a, b) => b.updatedAt - a.updatedAt);
  $('intents').replaceChildren(list.length ? table(['Intent', 'Kind', 'Status', 'Player', 'Room', 'Match', 'Amount', 'Updated'], list.map((i) =>
    row([i.id, i.kind, badge(i.status), who(i), i.roomId, i.matchId, i.unit === 'msats' ? sats(i.amount) : i.amount + ' ' + i.unit, when(i.updatedAt)], () => showIntent(i.id)))) : el('div', 'No intent moved money in this range.', 'empty'));
}
async function showIntent(id) {
  const d = await get('/api/intents/' + encodeURIComponent(id)); const i = d.intent; const box = $('detail'); box.replaceChildren();
  box.append(el('h2', i.kind + ' ' + i.id), el('div', i.description + ' · ' + i.status + ' · player ' + named(i) + (i.matchId ? ' · match ' + i.matchId : '') + (i.error ? ' · error: ' + i.error : '')));
  // A match's payout or refund that expired unclaimed; the engine refuses one that was never shown, or reissued once already.
  if (i.claimCode && i.status === 'expired' && i.matchId) {
    const b = el('button', 'Reissue claim code'); b.id = 'reissue';
    b.addEventListener('click', () => button(b, 'Reissue', async () => { const r = await act('reissue', { id: i.id }); showIntent(r.attempt).catch((e) => say(e.message, 'alert')); return 'Reissued ' + r.id + ' as ' + r.attempt + '.'; }));
    const c = el('div', undefined, 'controls'); c.append(b); box.append(c);
  }
  box.append(el('h3', 'History'), table(['At', 'From', 'To', 'Note'], i.history.map((h) => row([when(h.at), h.from, h.to, h.note]))));
  box.append(el('h3', 'Journal'), table(['Step', 'At', 'Debit', 'Credit', 'Amount', 'Why'], d.entries.map((e) => row([e.tag, when(e.at), e.debit, e.credit, e.unit === 'msats' ? sats(e.amount) : e.amount + ' ' + e.unit, e.why]))));
  box.scrollIntoView({ block: 'nearest' });
}
async function loadMatches() {
  const q = params($('filters')); q.delete('kind'); q.delete('status'); q.delete('player'); q.delete('room');
  const out = new Map(); let next = null, pages = 0;
  do { if (next) q.set('after', next); const page = await get('/api/matches?' + q); for (const m of page.matches) out.set(m.id, m); next = page.next; pages++; } while (next && pages < 20);
  const list = [...out.values()].sort((a, b) => b.updatedAt - a.updatedAt);
  $('matches').replaceChildren(list.length ? table(['Match', 'Room', 'Status', 'Pot', 'Rake', 'Players', 'Payouts', 'Refunds'], list.map((m) => {
    const money = (xs) => { const u = el('ul'); for (const x of xs) u.append(el('li', named(x) + ': ' + sats(x.amountMsat) + ' (' + x.status + ')')); return u; };
    const players = el('ul'); for (const p of m.players) players.append(el('li', named(p) + ': fee ' + p.feeStatus));
    return row([m.id, m.roomId, badge(m.status), sats(m.potMsat), m.rakeMsat === null ? '—' : sats(m.rakeMsat), players, money(m.payouts), money(m.refunds)]);
  })) : el('div', 'No match moved money in this range.', 'empty'));
}
function exportLink(which) { const q = params($('filters')); return base + '/export/' + which + '.csv?' + q; }
// The log's own filters: the form's since and player.
function oplogLink() { const f = params($('filters')); const q = new URLSearchParams(); if (f.get('since')) q.set('since', f.get('since')); if (f.get('player')) q.set('playerId', f.get('player')); return base + '/export/oplog.csv?' + q; }
const player = () => $('player').value.trim();
$('player').addEventListener('input', () => { $('player-actions').hidden = !player(); });
$('block').addEventListener('click', () => button($('block'), 'Block', async () => { const p = player(); await act('block', { playerId: p, why: $('block-why').value }); $('block-why').value = ''; return 'Blocked ' + p + '.'; }));
$('unblock').addEventListener('click', () => button($('unblock'), 'Unblock', async () => { const p = player(); await act('unblock', { playerId: p }); return 'Unblocked ' + p + '.'; }));
$('export-oplog').addEventListener('click', () => { location.href = oplogLink(); });
$('filters').addEventListener('submit', (ev) => { ev.preventDefault(); tables(); });
$('export-journal').addEventListener('click', () => { location.href = exportLink('journal'); });
$('export-intents').addEventListener('click', () => { location.href = exportLink('intents'); });
const day = new Date(Date.now() - 86400000); day.setSeconds(0, 0);
$('since').value = new Date(day.getTime() - day.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
refresh(); loadTabs(false).catch((e) => say(e.message, 'alert')); tables();
setInterval(refresh, 3000);
`;

/** The filters' choices, from the ledger's own lists: a new kind or status is offered as it comes. */
const options = (values: readonly string[]) => values.map((v) => `<option>${v}</option>`).join('');

const BODY = `
<header><h1>Lightning console</h1><span class="muted" id="updated">loading…</span></header>
<main>
  <div id="message" role="status"></div>
  <section><h2>Balances</h2><div class="cards" id="balances"></div></section>
  <section><h2>Needs a person</h2><div id="needs"></div>
    <div class="controls"><input id="pause-why" placeholder="why pause payouts" aria-label="why pause payouts" hidden> <button id="pause" hidden>Pause payouts</button><button id="resume" hidden>Resume payouts</button></div>
  </section>
  <section><h2>Intents</h2>
    <form class="filters" id="filters">
      <input name="player" id="player" placeholder="player" aria-label="player">
      <span id="player-actions" hidden><input id="block-why" placeholder="why block" aria-label="why block the player"> <button type="button" id="block">Block player</button> <button type="button" id="unblock">Unblock player</button></span>
      <input name="room" placeholder="room" aria-label="room">
      <input name="match" placeholder="match" aria-label="match">
      <select name="kind" aria-label="kind"><option value="">any kind</option>${options(INTENT_KINDS)}</select>
      <select name="status" aria-label="status"><option value="">any status</option>${options(INTENT_STATUSES)}</select>
      <input type="datetime-local" name="since" id="since" aria-label="since">
      <input type="datetime-local" name="until" aria-label="until">
      <button type="submit">Show</button>
      <span id="exports" hidden><button type="button" id="export-journal">Journal CSV</button> <button type="button" id="export-intents">Intents CSV</button> <button type="button" id="export-oplog">Operator log CSV</button></span>
    </form>
    <div id="intents"></div>
  </section>
  <section id="detail"></section>
  <section><h2>Matches</h2><div id="matches"></div></section>
  <section><h2>Players' tabs</h2><div id="tabs"></div>
    <div class="controls"><button id="tabs-more" hidden>More</button> <button id="tabs-again">Again</button></div></section>
  <section><h2>Tab refusals (this process)</h2><div id="refusal-counts" class="muted"></div><div id="refusals"></div></section>
  <section><h2>Operator log</h2><div id="oplog"></div></section>
</main>`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** Made once: the page holds no data, only the code that fetches it. */
const PAGE = {
  html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><title>Lightning console</title><style>${STYLE}</style></head><body>${BODY}<script>${SCRIPT}</script></body></html>`,
  csp: [
    "default-src 'none'",
    `script-src ${hash(SCRIPT)}`,
    `style-src ${hash(STYLE)}`,
    "connect-src 'self'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
};

export function consolePage(): { status: number; headers: Record<string, string>; body: string } {
  return {
    status: 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': PAGE.csp,
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    },
    body: PAGE.html,
  };
}
