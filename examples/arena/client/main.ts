/**
 * The arena's browser client: signs in (`POST /auth` hands it a token, kept in sessionStorage:
 * a reload is the same player, another window another player), joins the room, renders the
 * synced state, draws the QR codes of this player's entry fee and prize, and, on the emulator,
 * pays and claims through the dev wallet. Another player's entries never reach this page: the
 * server does not send them.
 */
import { Client, type Room } from '@colyseus/sdk';
import { bech32 } from 'bech32';
import QRCode from 'qrcode';

interface Entry {
  id: string;
  kind: string;
  status: string;
  playerId: string;
  amount: string;
  unit: string;
  description: string;
  code?: string;
  uri?: string;
  expiresAt: number;
}
interface PlayerView {
  name: string;
  paid: boolean;
  playing: boolean;
  out: boolean;
  wins: number;
  items: Iterable<string>;
}
type MapLike<T> = { forEach(cb: (value: T, key: string) => void): void } | undefined;
interface ArenaView {
  phase: string;
  winner: string;
  prizeMsat: string;
  entryFeeMsat: string;
  players: MapLike<PlayerView>;
  lightning?: {
    rewards?: MapLike<Entry>;
    entryFees?: MapLike<Entry>;
    pointSpends?: MapLike<Entry>;
  };
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const sats = (msat: string) => `${(Number(msat) / 1000).toLocaleString()} sats`;
const SHOP: Record<string, number> = { 'golden hat': 150, 'speed boots': 400, 'lucky charm': 900 };

let room: Room | undefined;
let me = '';
const drawn = new Map<string, string>();
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
  room.onMessage('fee', () => {});
  renderShop();
}

function render(state: ArenaView) {
  const button = $<HTMLButtonElement>('click');
  const self = findPlayer(state, me);
  const phaseText: Record<string, string> = {
    waiting: 'Waiting for every player to pay the entry fee…',
    countdown: 'Get ready…',
    ready: 'Wait for it…',
    go: 'GO!',
    finished:
      state.winner === me
        ? `You won ${sats(state.prizeMsat)}! Claim it below; pay again to play the next round.`
        : 'Round over. Pay again to play the next round.',
  };
  const running = ['countdown', 'ready', 'go'].includes(state.phase);
  $('phase').textContent =
    running && self && !self.playing
      ? `A round is on; ${self.paid ? 'you are in the next one.' : 'pay to play the next one.'}`
      : (phaseText[state.phase] ?? state.phase);
  button.disabled = !(self?.playing && !self.out && running);
  button.textContent = state.phase === 'go' ? 'CLICK!' : self?.out ? 'Too early: out' : 'Wait…';
  button.classList.toggle('go', state.phase === 'go');
  // No fee to pay (it expired, or could not be opened) and not paid: offer a new one.
  let feeOpen = false;
  state.lightning?.entryFees?.forEach((e) => {
    if (e.status === 'pending' || e.status === 'unknown') feeOpen = true;
  });
  $('again').hidden = !self || self.paid || feeOpen;

  const list = $('players');
  list.replaceChildren();
  state.players?.forEach((p, id) => {
    const li = document.createElement('li');
    li.className = id === me ? 'me' : '';
    const items = [...p.items];
    li.textContent = `${p.name}${id === me ? ' (you)' : ''} · ${p.paid ? 'paid' : 'not paid'} · ${p.wins} wins${p.out ? ' · out' : ''}${items.length ? ` · owns ${items.join(', ')}` : ''}`;
    list.append(li);
  });
  renderEntries(state);
  showSettledPurchase(state);
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

function renderEntries(state: ArenaView) {
  const entries: Entry[] = [];
  // A client without a view of an entry never receives it: these maps hold only ours.
  const add = (e: Entry) => {
    entries.push(e);
  };
  state.lightning?.entryFees?.forEach(add);
  state.lightning?.rewards?.forEach(add);
  state.lightning?.pointSpends?.forEach(add);
  const box = $('entries');
  const ids = new Set(entries.map((e) => e.id));
  for (const child of [...box.children])
    if (!ids.has((child as HTMLElement).dataset.id ?? '')) child.remove();
  for (const entry of entries) {
    let row = box.querySelector<HTMLElement>(`[data-id="${entry.id}"]`);
    if (!row) {
      row = document.createElement('div');
      row.className = 'entry';
      row.dataset.id = entry.id;
      box.append(row);
    }
    const key = `${entry.status}|${entry.code ?? ''}`;
    if (drawn.get(entry.id) === key) continue;
    drawn.set(entry.id, key);
    row.replaceChildren(...entryView(entry));
  }
}

function entryView(entry: Entry): HTMLElement[] {
  const parts: HTMLElement[] = [];
  const text = document.createElement('div');
  const title =
    entry.kind === 'reward'
      ? 'Your prize'
      : entry.kind === 'entryFee'
        ? 'Entry fee'
        : 'Points spent';
  const amount = entry.unit === 'msats' ? sats(entry.amount) : `${entry.amount} points`;
  const label = entry.status === 'unknown' ? 'not confirmed yet' : entry.status;
  const what = entry.kind === 'spend' ? ` · ${entry.description}` : '';
  text.innerHTML = `<b>${title}</b>${escapeHtml(what)} · ${amount} <span class="status ${entry.status}">${label}</span>`;
  const showCode = entry.code && entry.status === 'pending';
  if (showCode) {
    const canvas = document.createElement('canvas');
    canvas.setAttribute('aria-label', `${title} QR code`);
    QRCode.toCanvas(canvas, (entry.code as string).toUpperCase(), { width: 180, margin: 1 });
    parts.push(canvas);
    const hint = document.createElement('p');
    hint.textContent =
      entry.kind === 'reward'
        ? 'Scan with a Lightning wallet to claim.'
        : 'Scan with a Lightning wallet to pay.';
    text.append(hint);
    const dev = devWalletAction(entry);
    if (dev) text.append(dev);
  }
  parts.push(text);
  return parts;
}

/** On the emulator, a button that does what the player's wallet would do. */
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
    const path = kind === 'pay' ? `static-charges/${id}/pay` : `withdrawal-requests/${id}/claim`;
    const res = await fetch(`${url.origin}/_emulator/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const answer = (await res.json()) as { status?: string; reason?: string };
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
