/**
 * The arena's browser client: signs in (`POST /auth` hands it a token, kept in sessionStorage:
 * a reload is the same player, another window another player), joins the room, renders the
 * synced state (the round, its pot and rake from `lightning.matches`), draws the QR codes of
 * this player's entry fee, prize and refunds, lists their money history (the `history`
 * message), and, on the emulator, pays and claims through the dev wallet. Another player's
 * entries and codes never reach this page: the server does not send them.
 */
import { Client, type Room } from '@colyseus/sdk';
import { bech32 } from 'bech32';
import QRCode from 'qrcode';

interface Entry {
  id: string;
  /** reward, payout, refund, fee, spend or payment: what the entry is for. */
  purpose: string;
  status: string;
  amount: string;
  unit: string;
  description: string;
  code?: string;
}
interface PlayerView {
  name: string;
  ready: boolean;
  playing: boolean;
  paid: boolean;
  out: boolean;
  wins: number;
  items: Iterable<string>;
}
interface MatchView {
  status: string;
  entryFeeMsat: string;
  potMsat: string;
  rakeMsat: string;
  rake: number;
  entered: number;
  paid: number;
  reason: string;
}
/** A row of the `history` message (examples/arena/history.ts). */
interface MoneyRow {
  id: string;
  what: 'entry fee' | 'prize' | 'refund' | 'points';
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
  lightning?: {
    rewards?: MapLike<Omit<Entry, 'id'>>;
    entryFees?: MapLike<Omit<Entry, 'id'>>;
    pointSpends?: MapLike<Omit<Entry, 'id'>>;
    matches?: MapLike<MatchView>;
  };
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const sats = (msat: string) => `${(Number(msat) / 1000).toLocaleString()} sats`;
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
  const last = matchOf(state, state.lastMatchId);
  $('last').hidden = !state.result;
  $('last').className = won ? 'last won' : 'last';
  $('result').textContent = won
    ? state.prizeMsat
      ? `You won ${sats(state.prizeMsat)}! Claim your prize below.`
      : 'You won! Your prize is on its way…'
    : state.result;
  $('last-pot').textContent = last ? potText(last) : '';
  const on = matchOf(state, state.matchId);
  $('pot').textContent = on
    ? potText(on)
    : `Entry fee ${sats(state.entryFeeMsat)} · the winner takes the pot`;
}

function matchOf(state: ArenaView, id: string): MatchView | undefined {
  let found: MatchView | undefined;
  state.lightning?.matches?.forEach((m, key) => {
    if (id !== '' && key === id) found = m;
  });
  return found;
}

/** A round's pot as every player sees it: what is in it, and where it went. */
function potText(m: MatchView): string {
  const rake = `${Math.round(m.rake * 100)}% rake`;
  if (m.status === 'settled' || m.status === 'settling') {
    const house = m.rakeMsat || '0';
    const won = String(BigInt(m.potMsat) - BigInt(house));
    return `Pot ${sats(m.potMsat)} · ${sats(won)} to the winner · ${sats(house)} to the house (${rake})`;
  }
  if (m.status === 'aborted' || m.status === 'aborting')
    return `Pot ${sats(m.potMsat)} · refunded to who paid`;
  return `Pot ${sats(m.potMsat)} · ${m.paid} of ${m.entered} paid · ${rake} · entry ${sats(m.entryFeeMsat)}`;
}

/** The outcome of a purchase the server could not confirm at once, read from our entries. */
function showSettledPurchase(state: ArenaView) {
  if (!unconfirmed) return;
  state.lightning?.pointSpends?.forEach((e) => {
    if (e.description !== unconfirmed) return;
    if (e.status === 'completed') {
      $('shop-message').textContent = `Confirmed: ${e.description.replace(/^[^:]*: /, '')} bought.`;
      unconfirmed = '';
    } else if (e.status === 'failed' || e.status === 'expired') {
      $('shop-message').textContent = 'It did not go through: nothing was spent.';
      unconfirmed = '';
    }
  });
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
  const entries: Entry[] = [];
  // A client without a view of an entry never receives it: these maps hold only ours.
  // An entry's id is its key in the map: the synced entry does not repeat it.
  const add = (e: Omit<Entry, 'id'>, id: string) => {
    entries.push({
      id,
      purpose: e.purpose,
      status: e.status,
      amount: e.amount,
      unit: e.unit,
      description: e.description,
      ...(e.code === undefined ? {} : { code: e.code }),
    });
  };
  state.lightning?.entryFees?.forEach(add);
  state.lightning?.rewards?.forEach(add);
  state.lightning?.pointSpends?.forEach(add);
  const live = new Set(entries.map((e) => e.id));
  for (const row of rows) {
    if (row.code && !live.has(row.id)) {
      entries.push({
        id: row.id,
        purpose: row.what === 'refund' ? 'refund' : 'payout',
        status: row.status,
        amount: row.amount,
        unit: row.unit,
        description: row.what === 'refund' ? 'Arena round: refund' : 'Arena round: winnings',
        code: row.code,
      });
    }
  }
  // Codes to claim first, then fees to pay; what ended stays below until the server drops it.
  const rank = (e: Entry) =>
    e.status !== 'pending' && e.status !== 'unknown' ? 2 : claims(e) ? 0 : 1;
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
    const key = `${entry.status}|${entry.code ?? ''}`;
    if (drawn.get(entry.id) === key) continue;
    drawn.set(entry.id, key);
    row.replaceChildren(...entryView(entry));
  }
  $('no-entries').hidden = entries.length > 0;
}

/** A code this player claims (a prize or a refund), rather than one they pay. */
function claims(entry: Entry): boolean {
  return entry.purpose === 'reward' || entry.purpose === 'payout' || entry.purpose === 'refund';
}

/** What an entry is to this player: its synced `purpose` tells a refund from a prize. */
function titleOf(entry: Entry): string {
  if (entry.purpose === 'fee') return 'Entry fee';
  if (entry.purpose === 'spend') return 'Points spent';
  return entry.purpose === 'refund' ? 'Your refund' : 'Your prize';
}

function entryView(entry: Entry): HTMLElement[] {
  const parts: HTMLElement[] = [];
  const text = document.createElement('div');
  const title = titleOf(entry);
  const amount = entry.unit === 'msats' ? sats(entry.amount) : `${entry.amount} points`;
  const label = entry.status === 'unknown' ? 'not confirmed yet' : entry.status;
  const what = entry.purpose === 'spend' ? ` · ${entry.description}` : '';
  text.innerHTML = `<b>${title}</b>${escapeHtml(what)} · ${amount} <span class="status ${entry.status}">${label}</span>`;
  const showCode = entry.code && entry.status === 'pending';
  if (showCode) {
    const canvas = document.createElement('canvas');
    canvas.setAttribute('aria-label', `${title} QR code`);
    QRCode.toCanvas(canvas, (entry.code as string).toUpperCase(), { width: 180, margin: 1 });
    parts.push(canvas);
    const hint = document.createElement('p');
    hint.textContent = claims(entry)
      ? 'Scan with a Lightning wallet to claim.'
      : 'Scan with a Lightning wallet to pay.';
    text.append(hint);
    const dev = devWalletAction(entry);
    if (dev) text.append(dev);
  }
  parts.push(text);
  return parts;
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
    const sign = !moved ? '' : row.what === 'prize' || row.what === 'refund' ? '+' : '−';
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
  };
  if (row.status === 'unknown') return 'not confirmed yet';
  return words[row.what]?.[row.status] ?? row.status;
}

/**
 * On the emulator, a button that does what the player's wallet would do. It asks the arena's
 * own server (examples/arena/dev-wallet.ts), as this player: the emulator's dev wallet routes
 * answer no web page but its own.
 */
function devWalletAction(entry: Entry): HTMLElement | undefined {
  const url = lnurlTarget(entry.code ?? '');
  if (!url || !['127.0.0.1', 'localhost'].includes(url.hostname)) return undefined;
  const match = url.pathname.match(/\/lnurl\/(withdraw|pay)\/([^/]+)$/);
  if (!match) return undefined;
  const [, kind, id] = match;
  const button = document.createElement('button');
  button.textContent = kind === 'pay' ? 'Pay with dev wallet' : 'Claim with dev wallet';
  button.addEventListener('click', async () => {
    button.disabled = true;
    const action = kind === 'pay' ? 'pay' : 'claim';
    const res = await fetch(`/dev-wallet/${action}/${encodeURIComponent(id ?? '')}`, {
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

function lnurlTarget(code: string): URL | undefined {
  try {
    const { words } = bech32.decode(code.toLowerCase(), 2000);
    return new URL(new TextDecoder().decode(new Uint8Array(bech32.fromWords(words))));
  } catch {
    return undefined;
  }
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
