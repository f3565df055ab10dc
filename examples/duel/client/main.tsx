/**
 * The duel's browser client, in React: sign in, join, pay the entry fee (WebLN, else a QR code),
 * click first once both paid, claim the pot: the money on screen from the client kit, the page
 * holding its own player's entries only (the server sends no other).
 */
import { Callbacks, Client, type Room } from '@colyseus/sdk';
import {
  claim,
  type EntryView,
  formatAmount,
  type LightningSnapshot,
  lightningUri,
  matchOf,
  type PriceView,
  pay,
  qrSvg,
  type SyncedLightning,
  watchLightning,
} from 'colyseus-lightning/client';
import { useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';

/** The duel's own fields of the room's state (examples/duel/room.ts). */
type DuelFields = { phase: string; matchId: string; winner: string; lightning?: SyncedLightning };

/** What an entry is to this player: by its purpose (a payout and a refund look alike else). */
const TITLES: Partial<Record<EntryView['purpose'], string>> = {
  fee: 'Your entry fee',
  payout: 'Your winnings',
  refund: 'Your refund',
};

/** Sats, and dollars once the server synced a price. */
function amount(msat: string | null, price: PriceView | null): string {
  const sats = formatAmount(msat ?? '0');
  return price ? `${sats} (${formatAmount(msat ?? '0', { price })})` : sats;
}

const NOTHING_YET: LightningSnapshot = { entries: [], matches: [], price: null, tab: null };

/** The room's state and the player's money, drawn again at each change the server sends. */
function useDuel(room: Room) {
  const [money, setMoney] = useState<LightningSnapshot>(NOTHING_YET);
  const [, redraw] = useState(0);
  useEffect(() => {
    const callbacks = Callbacks.get(room);
    const changed = () => redraw((n) => n + 1);
    const stops = ['phase', 'matchId', 'winner'].map((key) => callbacks.listen(key, changed));
    stops.push(watchLightning(callbacks, { change: setMoney }));
    return () => stops.forEach((stop) => void stop());
  }, [room]);
  return { ...money, state: room.state as DuelFields };
}

/** What the wallet did with a press: nothing yet, asked, took the code (WebLN), or is none. */
const NOTES = {
  '': 'Or scan the code, or tap it to open your wallet.',
  asking: 'Asking your wallet…',
  webln: 'Sent by your wallet…', // it took the code: the entry's status says when money moved
  show: 'No wallet in this browser: scan the code.',
};

/** One of the player's entries: what it is, its status, and the code to pay or claim. */
function Entry({ entry, price }: { entry: EntryView; price: PriceView | null }) {
  const [wallet, setWallet] = useState<keyof typeof NOTES>('');
  const title = TITLES[entry.purpose] ?? entry.description;
  const qr = entry.action ? `data:image/svg+xml,${encodeURIComponent(qrSvg(entry.code))}` : '';
  const act = async () => {
    setWallet('asking');
    setWallet((await (entry.action === 'claim' ? claim(entry.code) : pay(entry.code))).via);
  };
  return (
    <div className={`entry ${entry.purpose}`}>
      <b>{title}</b> {amount(entry.amountMsat, price)}{' '}
      <span className={`status ${entry.status}`}>{entry.status}</span>
      {entry.action && (
        <div className="code">
          <a className="qr" href={lightningUri(entry.code)}>
            <img alt={`${title} QR code`} src={qr} />
          </a>
          <button type="button" onClick={act} disabled={wallet === 'asking' || wallet === 'webln'}>
            {entry.action === 'pay' ? 'Pay' : 'Claim'} with your wallet
          </button>
          <p>{NOTES[wallet]}</p>
        </div>
      )}
    </div>
  );
}

function Duel({ room, name }: { room: Room; name: string }) {
  const duel = useDuel(room);
  const { phase: now, matchId, winner, lightning } = duel.state;
  const match = matchOf(lightning, matchId);
  const click = () => room.send('click');
  const phase: Record<string, string> = {
    paying: match ? `${match.paid} of 2 paid, ${match.entered} of 2 here.` : 'Opening the duel…',
    playing: 'Both paid. First to click wins the pot!',
    won: winner === name ? 'You won! Claim the pot below.' : 'You lost this one.',
    off: `Called off (${match?.reason || 'no duel'}): a fee you paid comes back below.`,
  };
  return (
    <main>
      <h1>Duel</h1>
      {match && (
        <p id="pot">
          Pot {amount(match.potMsat, duel.price)} · entry {amount(match.entryFeeMsat, duel.price)} ·{' '}
          {Math.round(match.rake * 100)}% to the house
        </p>
      )}
      <p id="phase">{phase[now] ?? ''}</p>
      <button id="click" type="button" onClick={click} disabled={now !== 'playing'}>
        Click!
      </button>
      {duel.entries.map((entry) => (
        <Entry key={entry.id} entry={entry} price={duel.price} />
      ))}
    </main>
  );
}

function App() {
  const [room, setRoom] = useState<Room>();
  const [name, setName] = useState(() => `player ${Math.floor(Math.random() * 900 + 100)}`);
  const [error, setError] = useState('');
  if (room) return <Duel room={room} name={name.trim()} />;
  // Signed in as the README's client is: `POST /login`, the token on the SDK.
  const join = async () => {
    const [headers, body] = [{ 'content-type': 'application/json' }, JSON.stringify({ name })];
    const login = await fetch('/login', { method: 'POST', headers, body });
    const { token } = (await login.json()) as { token?: string }; // none: the join is refused
    const sdk = new Client(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}`);
    sdk.auth.token = token ?? '';
    sdk.joinOrCreate('duel').then(setRoom, (e: Error) => setError(`Could not join: ${e.message}`));
  };
  return (
    <main>
      <h1>Duel</h1>
      <p>Two players pay an entry fee; once both paid, the first click takes the pot.</p>
      <input id="name" value={name} onChange={(e) => setName(e.target.value)} />{' '}
      <button id="join" type="button" onClick={join}>
        Join a duel
      </button>
      <p>{error}</p>
    </main>
  );
}

createRoot(document.getElementById('app') as HTMLElement).render(<App />);
