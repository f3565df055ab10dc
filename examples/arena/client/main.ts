/**
 * The arena's browser client: signs in (`POST /auth` hands it a token, kept in sessionStorage:
 * a reload is the same player, another window another player), joins the room, renders the
 * synced state (the round, its pot and rake from `lightning.matches`), shows this player's
 * entry fee, prize and refunds with the client kit (colyseus-lightning/client: their views,
 * QR codes, `lightning:` links, the browser's wallet through WebLN), lists their money history
 * (the `history` message), and, on the emulator, pays and claims through the dev wallet.
 * Another player's entries and codes never reach this page: the server does not send them.
 */
import { Client, type Room } from '@colyseus/sdk';
import {
  claim,
  devWalletTarget,
  type EntryView,
  entriesOf,
  formatAmount,
  lightningUri,
  type MatchView,
  matchOf,
  pay,
  priceOf,
  qrSvg,
  type SyncedLightning,
  satsOf,
  tabOf,
} from 'colyseus-lightning/client';

interface PlayerView {
  name: string;
  ready: boolean;
  playing: boolean;
  paid: boolean;
  out: boolean;
  wins: number;
  items: Iterable<string>;
}
/** A row of the `history` message (examples/arena/history.ts). */
interface MoneyRow {
  id: string;
  what: 'entry fee' | 'prize' | 'refund' | 'points' | 'tab';
  amount: string;
  unit: string;
  status: string;
  note: string;
  code: string;
  at: number;
}
type MapLike<T> = { forEach(cb: (value: T, key: string) => void): void } | undefined;
interface ArenaView {
  phase: string;
  matchId: string;
  lastMatchId: string;
  payBy: number;
  winner: string;
  prizeMsat: string;
  result: string;
  entryFeeMsat: string;
  players: MapLike<PlayerView>;
  lightning?: SyncedLightning;
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const sats = (msat: string) => formatAmount(msat || '0');
const SHOP: Record<string, number> = { 'golden hat': 150, 'speed boots': 400, 'lucky charm': 900 };

let room: Room | undefined;
let me = '';
let lastState: ArenaView | undefined;
let rows: MoneyRow[] = [];
const drawn = new Map<string, string>();
/**
 * The row of each entry, by id. Kept here rather than in a data attribute: a payout's id
 * names its player, and player ids stay out of the page.
 */
const rowsById = new Map<string, HTMLElement>();
/** A purchase the server could not confirm yet: its outcome will show in our pointSpends. */
let unconfirmed = '';

/**
 * A token from the server: the one we kept is renewed (same player), or a new guest is made.
 * Who we are is only ever what this token says; the server ignores ids in the join options.
 */
async function signIn(): Promise<string> {
  const kept = sessionStorage.getItem('arena.token');
  const res = await fetch('/auth', {
    method: 'POST',
    headers: kept ? { authorization: `Bearer ${kept}` } : {},
  });
  if (res.status === 429) {
    // Too many new players from this address: the server says for how long.
    const { error } = (await res.json().catch(() => ({}))) as { error?: string };
    throw new Error(error ?? `too many sign-ins; try again in ${res.headers.get('retry-after')} s`);
  }
  if (!res.ok) throw new Error(`sign-in answered ${res.status}`);
  const { token } = (await res.json()) as { token: string };
  sessionStorage.setItem('arena.token', token);
  return token;
}

async function join() {
  const name = $<HTMLInputElement>('name').value.trim() || 'player';
  const client = new Client(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}`);
  client.auth.token = await signIn();
  room = await client.joinOrCreate('arena', { name });
  // The server names our seat; the player id itself is never shown to anyone.
  room.onMessage('seat', (seat: string) => {
    me = seat;
  });
  $('join').hidden = true;
  for (const id of ['game', 'wallet', 'shop']) $(id).hidden = false;
  room.onStateChange((state) => render(state as unknown as ArenaView));
  room.onMessage('shop', (m: { ok: boolean | null; order: string; message: string }) => {
    unconfirmed = m.ok === null ? m.order : '';
    $('shop-message').textContent = m.message;
  });
  room.onMessage('history', (m: MoneyRow[]) => {
    rows = m;
    if (lastState) render(lastState);
  });
  room.onMessage('fee', () => {});
  room.onMessage('tab', (message: string) => {
    $('tab-message').textContent = message;
  });
  renderShop();
  // The pay deadline counts down between patches.
  setInterval(() => lastState && renderRound(lastState), 1_000);
}

function render(state: ArenaView) {
  lastState = state;
  renderRound(state);
  const list = $('players');
  list.replaceChildren();
  state.players?.forEach((p, id) => {
    const li = document.createElement('li');
    li.className = id === me ? 'me' : '';
    const items = [...p.items];
    const where = p.playing
      ? p.out
        ? 'out'
        : state.phase === 'paying'
          ? p.paid
            ? 'paid'
            : 'paying…'
          : 'playing'
      : p.ready
        ? 'next round'
        : 'sitting out';
    li.textContent = `${p.name}${id === me ? ' (you)' : ''} · ${where} · ${p.wins} wins${items.length ? ` · owns ${items.join(', ')}` : ''}`;
    list.append(li);
  });
  renderTab(state);
  renderEntries(state);
  renderHistory();
  showSettledPurchase(state);
}

function renderRound(state: ArenaView) {
  const button = $<HTMLButtonElement>('click');
  const self = findPlayer(state, me);
  const inRound = !!self?.playing;
  const running = ['countdown', 'ready', 'go'].includes(state.phase);
  const left = Math.max(0, Math.ceil((state.payBy - Date.now()) / 1000));
  let phase: string;
  if (!self) phase = 'Joining…';
  else if (!self.ready && !inRound) phase = 'You sit out. Press Play to join the next round.';
  else if (state.phase === 'waiting') phase = 'Waiting for another player…';
  else if (state.phase === 'paying' && inRound)
    phase = self.paid
      ? `Paid. Waiting for the others (${left} s left)…`
      : `Pay the entry fee below to play (${left} s left).`;
  else if (!inRound && (running || state.phase === 'paying'))
    phase = 'A round is on; you play the next one.';
  else
    phase =
      (
        {
          countdown: 'Get ready…',
          ready: 'Wait for it…',
          go: 'GO!',
          finished: 'Round over.',
        } as Record<string, string>
      )[state.phase] ?? state.phase;
  $('phase').textContent = phase;
  button.disabled = !(inRound && !self?.out && running);
  button.textContent = state.phase === 'go' ? 'CLICK!' : self?.out ? 'Too early: out' : 'Wait…';
  button.classList.toggle('go', state.phase === 'go');
  $('again').hidden = !self || self.ready || inRound;

  // The last round, above the one that is on: who won and the split, or why it was called off.
  const won = state.winner !== '' && state.winner === me;
  const last = matchOf(state.lightning, state.lastMatchId);
  $('last').hidden = !state.result;
  $('last').className = won ? 'last won' : 'last';
  $('result').textContent = won ? wonText(state) : state.result;
  $('last-pot').textContent = last ? potText(last) : '';
  const on = matchOf(state.lightning, state.matchId);
  $('pot').textContent = on
    ? potText(on)
    : `Entry fee ${sats(state.entryFeeMsat)} · the winner takes the pot`;
}

let lastPrize: EntryView | undefined;

/** The winner's line: what their prize is now, from their own payout entry of that round. */
function wonText(state: ArenaView): string {
  if (!state.prizeMsat) return 'You won! Your prize is on its way…';
  const live = entriesOf(state.lightning).find(
    (e) => e.purpose === 'payout' && e.matchId === state.lastMatchId,
  );
  // An ended entry leaves the state after a while: its last picture still tells the story.
  if (live) lastPrize = live;
  const prize = lastPrize?.matchId === state.lastMatchId ? lastPrize : undefined;
  const won = `You won ${sats(state.prizeMsat)}`;
  switch (prize?.status) {
    case 'held':
      return `${won}! Your prize waits for the operator's approval; its code shows here then.`;
    case 'queued':
      return `${won}! Your prize is queued; its code shows here in a moment.`;
    case 'completed':
      return `${won} and claimed it.`;
    case 'expired':
      return `${won}; the prize code expired unclaimed.`;
    case 'failed':
      return `${won}, but the prize was not paid: ask the operator.`;
    default:
      return prize?.action === 'claim'
        ? `${won}! Claim your prize below.`
        : `${won}! Your prize is on its way…`;
  }
}

/** A round's pot as every player sees it: what is in it, and where it went. */
function potText(m: MatchView): string {
  const rake = `${Math.round(m.rake * 100)}% rake`;
  if (m.status === 'settled' || m.status === 'settling') {
    const house = m.rakeMsat;
    const won = String(BigInt(m.potMsat) - BigInt(house));
    return `Pot ${sats(m.potMsat)} · ${sats(won)} to the winner · ${sats(house)} to the house (${rake})`;
  }
  if (m.status === 'aborted' || m.status === 'aborting')
    return `Pot ${sats(m.potMsat)} · refunded to who paid`;
  return `Pot ${sats(m.potMsat)} · ${m.paid} of ${m.entered} paid · ${rake} · entry ${sats(m.entryFeeMsat)}`;
}

/**
 * The player's tab: what rounds won or survived credited, in sats (and the fiat it is worth
 * when the server syncs a price). Only this player's tab reaches this page.
 */
function renderTab(state: ArenaView) {
  const tab = tabOf(state.lightning);
  const balance = tab?.balanceMsat ?? '0';
  const price = priceOf(state.lightning);
  const fiat = price ? ` (${formatAmount(balance, { price })})` : '';
  $('tab-balance').textContent = `${formatAmount(balance)}${fiat}`;
  $<HTMLButtonElement>('withdraw').disabled = balance === '0';
}

/** The outcome of a purchase the server could not confirm at once, read from our entries. */
function showSettledPurchase(state: ArenaView) {
  if (!unconfirmed) return;
  for (const e of entriesOf(state.lightning)) {
    if (e.purpose !== 'spend' || e.description !== unconfirmed) continue;
    if (e.status === 'completed') {
      $('shop-message').textContent = `Confirmed: ${e.description.replace(/^[^:]*: /, '')} bought.`;
      unconfirmed = '';
    } else if (e.status === 'failed' || e.status === 'expired') {
      $('shop-message').textContent = 'It did not go through: nothing was spent.';
      unconfirmed = '';
    }
  }
}

function findPlayer(state: ArenaView, id: string): PlayerView | undefined {
  let found: PlayerView | undefined;
  state.players?.forEach((p, key) => {
    if (key === id) found = p;
  });
  return found;
}

/** Our live entries, plus codes still to claim that the history knows (from a closed room). */
function renderEntries(state: ArenaView) {
  // A client without a view of an entry never receives it: these maps hold only ours.
  const entries = entriesOf(state.lightning);
  const live = new Set(entries.map((e) => e.id));
  for (const row of rows) {
    if (row.code && !live.has(row.id)) entries.push(fromHistory(row));
  }
  // Codes to claim first, then fees to pay; what ended stays below until the server drops it.
  const rank = (e: EntryView) => (e.action === 'claim' ? 0 : e.open ? 1 : 2);
  entries.sort((a, b) => rank(a) - rank(b));
  const box = $('entries');
  const ids = new Set(entries.map((e) => e.id));
  for (const [id, row] of rowsById) {
    if (ids.has(id)) continue;
    row.remove();
    rowsById.delete(id);
    drawn.delete(id);
  }
  for (const entry of entries) {
    let row = rowsById.get(entry.id);
    if (!row) {
      row = document.createElement('div');
      row.className = 'entry';
      rowsById.set(entry.id, row);
    }
    box.append(row); // in the sorted order (moves a row that is already there)
    const key = `${entry.status}|${entry.code}`;
    if (drawn.get(entry.id) === key) continue;
    drawn.set(entry.id, key);
    row.replaceChildren(...entryView(entry));
  }
  $('no-entries').hidden = entries.length > 0;
}

/** A prize or refund of a closed room, still to claim: the history row, as the kit's view. */
function fromHistory(row: MoneyRow): EntryView {
  const msats = row.unit === 'msats';
  const ended = (['completed', 'expired', 'failed'] as const).find((s) => s === row.status);
  const status = ended ?? (row.status === 'pending' ? 'pending' : 'unknown');
  return {
    id: row.id,
    purpose: row.what === 'refund' ? 'refund' : 'payout',
    matchId: '',
    status,
    open: !ended,
    action: status === 'pending' ? 'claim' : null,
    amountMsat: msats ? row.amount : null,
    sats: msats ? satsOf(row.amount) : null,
    amount: row.amount,
    unit: row.unit,
    description: row.what === 'tab' ? 'Arena tab' : row.note,
    expiresAt: null,
    code: row.code,
    lnAddress: '',
  };
}

/** What an entry is to this player, from its purpose (a payout and a refund look alike else). */
const TITLES: Record<EntryView['purpose'], string> = {
  fee: 'Entry fee',
  payout: 'Your prize',
  reward: 'Your prize',
  refund: 'Your refund',
  spend: 'Points spent',
  payment: 'Payment to your address',
};

/** A status in the player's words, where the bare word would puzzle them. */
const LABELS: Partial<Record<EntryView['status'], string>> = {
  unknown: 'not confirmed yet',
  held: 'waits for approval',
  queued: 'queued',
};

function entryView(entry: EntryView): HTMLElement[] {
  const parts: HTMLElement[] = [];
  const text = document.createElement('div');
  // The tab's withdrawal is a claim code like a prize; the room names it so.
  const title = entry.description === 'Arena tab' ? 'Your tab' : TITLES[entry.purpose];
  const amount = entry.amountMsat === null ? `${entry.amount} points` : sats(entry.amountMsat);
  const label = LABELS[entry.status] ?? entry.status;
  const what = entry.purpose === 'spend' ? ` · ${entry.description}` : '';
  text.innerHTML = `<b>${title}</b>${escapeHtml(what)} · ${amount} <span class="status ${entry.status}">${label}</span>`;
  if (entry.action) {
    // The QR and the link: what any wallet scans or opens (from the kit: nothing drawn here).
    const qr = document.createElement('a');
    qr.className = 'qr';
    qr.href = lightningUri(entry.code);
    qr.innerHTML = qrSvg(entry.code, { label: `${title} QR code` });
    parts.push(qr);
    const hint = document.createElement('p');
    hint.textContent =
      entry.action === 'claim'
        ? 'Scan with a Lightning wallet, or tap the code, to claim.'
        : 'Scan with a Lightning wallet, or tap the code, to pay.';
    text.append(hint);
    if ('webln' in globalThis) text.append(browserWalletAction(entry));
    const dev = devWalletAction(entry);
    if (dev) text.append(dev);
  }
  parts.push(text);
  return parts;
}

/** With a browser wallet (WebLN), one press pays or claims; its answer shows under it. */
function browserWalletAction(entry: EntryView): HTMLElement {
  const button = document.createElement('button');
  button.textContent = entry.action === 'claim' ? 'Claim with your wallet' : 'Pay with your wallet';
  button.addEventListener('click', async () => {
    button.disabled = true;
    const result = await (entry.action === 'claim' ? claim(entry.code) : pay(entry.code));
    // The entry's status says when the money moved; this only says what the wallet did.
    button.textContent =
      result.via === 'webln'
        ? 'Sent to your wallet…'
        : result.reason === 'declined'
          ? 'Wallet not connected: scan the code'
          : 'Your wallet could not: scan the code';
    if (result.via === 'show') button.disabled = false;
  });
  return button;
}

/** The player's latest money movements, from the ledger (newest first). */
function renderHistory() {
  const list = $('history');
  list.replaceChildren();
  for (const row of rows) {
    const li = document.createElement('li');
    const amount = row.unit === 'msats' ? sats(row.amount) : `${row.amount} points`;
    // A sign only where money moved: a fee or spend taken, a prize or refund claimed.
    const moved = row.status === 'completed';
    const sign = !moved ? '' : ['prize', 'refund', 'tab'].includes(row.what) ? '+' : '−';
    const note = row.note ? ` · ${row.note}` : '';
    const time = new Date(row.at).toLocaleTimeString();
    li.innerHTML = `<span class="when">${escapeHtml(time)}</span> <b>${escapeHtml(row.what)}</b> ${sign}${escapeHtml(amount)}${escapeHtml(note)} <span class="status ${row.status}">${escapeHtml(statusText(row))}</span>`;
    list.append(li);
  }
  $('history-card').hidden = rows.length === 0;
}

function statusText(row: MoneyRow): string {
  const words: Record<string, Record<string, string>> = {
    'entry fee': { pending: 'to pay', completed: 'paid', expired: 'not paid', failed: 'failed' },
    prize: { pending: 'to claim', completed: 'claimed', expired: 'expired', failed: 'failed' },
    refund: { pending: 'to claim', completed: 'claimed', expired: 'expired', failed: 'failed' },
    points: { completed: 'spent', failed: 'not spent', expired: 'not spent' },
    tab: {
      pending: 'to claim',
      completed: 'claimed',
      expired: 'back in your tab',
      failed: 'back in your tab',
    },
  };
  if (row.status === 'unknown') return 'not confirmed yet';
  return words[row.what]?.[row.status] ?? row.status;
}

/**
 * On the emulator, a button that does what the player's wallet would do. It asks the arena's
 * own server (examples/arena/dev-wallet.ts), as this player: the emulator's dev wallet routes
 * answer no web page but its own.
 */
function devWalletAction(entry: EntryView): HTMLElement | undefined {
  const target = devWalletTarget(entry.code);
  if (!target || !['127.0.0.1', 'localhost'].includes(new URL(target.url).hostname)) return;
  const action = target.kind === 'pay' ? 'pay' : 'claim';
  const button = document.createElement('button');
  button.textContent = action === 'pay' ? 'Pay with dev wallet' : 'Claim with dev wallet';
  button.addEventListener('click', async () => {
    button.disabled = true;
    const res = await fetch(`/dev-wallet/${action}/${encodeURIComponent(target.id)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sessionStorage.getItem('arena.token') ?? ''}` },
    });
    const answer = (await res.json().catch(() => ({}))) as { status?: string; reason?: string };
    if (answer.status !== 'OK') {
      button.disabled = false;
      button.textContent = `Dev wallet: ${answer.reason ?? 'failed'}`;
    }
  });
  return button;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function renderShop() {
  const items = $('items');
  items.className = 'items';
  for (const [item, price] of Object.entries(SHOP)) {
    const button = document.createElement('button');
    button.textContent = `${item} · ${price} points`;
    button.addEventListener('click', () => room?.send('buy', item));
    items.append(button);
  }
}

$('join-button').addEventListener('click', () => {
  join().catch((err) => {
    $('phase').textContent = `Could not join: ${(err as Error).message}`;
  });
});
$('click').addEventListener('click', () => room?.send('click'));
$('again').addEventListener('click', () => room?.send('again'));
$('withdraw').addEventListener('click', () => {
  $('tab-message').textContent = '';
  room?.send('withdraw');
});
