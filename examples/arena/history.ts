/**
 * A short history of each player's money: their entry fees, prizes, refunds and point
 * spends, newest first, with the status the ledger holds now. The room sends it to the
 * player's own clients only (a prize or refund still to claim carries its code, a bearer
 * secret), on join and whenever one of their movements changes.
 *
 * The book learns of a movement from the server's events (an intent ended, a spend became
 * unknown, a refund or a payout was created) and from the room (an entry fee it charged);
 * it keeps ids only and reads each row from the ledger when it is sent, so what a player
 * sees is never this process's guess. A claim code from a room that has closed since (a
 * refund issued when everyone left) is in the ledger too: the room notes the player's
 * `lightning.books.claims()` on join, so it shows again wherever they sit down.
 *
 * Costs: per player at most `size` ids in memory (players are never forgotten: an example,
 * not a server for millions); per change, one ledger read per id of that player; five
 * listeners on the server's events.
 */
import type { Intent, IntentStatus, Lightning, MatchView } from 'colyseus-lightning';

/** One movement, as the player's page shows it. */
export interface MoneyRow {
  id: string;
  what: 'entry fee' | 'prize' | 'refund' | 'points' | 'tab';
  /** msats, or points for a spend. */
  amount: string;
  unit: string;
  status: IntentStatus;
  /** What was bought, or why a fee was refunded ('' otherwise). */
  note: string;
  /** A prize or refund still to claim: its code ('' otherwise). */
  code: string;
  /** epoch ms */
  at: number;
}

const KINDS: readonly Intent['kind'][] = ['entryFee', 'reward', 'spend', 'withdrawal'];
/** What a player claims with a code: a prize (a reward, a match's payout) or their tab. */
const CLAIMED: readonly Intent['kind'][] = ['reward', 'withdrawal'];

export class MoneyHistory {
  readonly #lightning: Lightning;
  readonly #size: number;
  /** Per player, the ids of their latest movements, newest noted first. */
  readonly #ids = new Map<string, string[]>();
  readonly #listeners = new Set<(playerId: string) => void>();

  constructor(lightning: Lightning, size = 8) {
    this.#lightning = lightning;
    this.#size = size;
    const note = (intent: Intent) => {
      if (KINDS.includes(intent.kind)) this.note(intent.playerId, intent.id);
    };
    lightning.on('settled', note);
    lightning.on('unknown', note);
    lightning.on('match.refund', note);
    lightning.on('match.settled', (match: MatchView) => {
      for (const payout of match.payouts) this.note(payout.playerId, payout.intentId);
    });
    lightning.on('latePayment', note);
  }

  /** A movement of the player's started or changed: remember it and tell the rooms. */
  note(playerId: string, intentId: string): void {
    const ids = this.#ids.get(playerId) ?? [];
    if (!ids.includes(intentId)) {
      ids.unshift(intentId);
      ids.length = Math.min(ids.length, this.#size);
      this.#ids.set(playerId, ids);
    }
    for (const listener of this.#listeners) listener(playerId);
  }

  /** Called with a player id whenever that player's history may have changed. */
  onChange(listener: (playerId: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The player's rows, newest first, as the ledger holds them now. */
  async of(playerId: string): Promise<MoneyRow[]> {
    const ids = this.#ids.get(playerId) ?? [];
    const intents = await Promise.all(ids.map((id) => this.#lightning.books.ledger.get(id)));
    return intents
      .filter((i): i is Intent => i !== null && i.playerId === playerId)
      .sort((a, b) => b.createdAt - a.createdAt)
      .map(rowOf);
  }
}

function rowOf(intent: Intent): MoneyRow {
  const role = intent.meta.matchRole;
  const what =
    intent.kind === 'entryFee'
      ? 'entry fee'
      : intent.kind === 'spend'
        ? 'points'
        : intent.kind === 'withdrawal'
          ? 'tab'
          : role === 'refund'
            ? 'refund'
            : 'prize';
  const note =
    what === 'points'
      ? intent.description.replace(/^[^:]*: /, '')
      : what === 'refund'
        ? String(intent.meta.why ?? '').replace(/^match aborted: /, 'round called off: ')
        : '';
  const claimable = CLAIMED.includes(intent.kind) && intent.status === 'pending';
  return {
    id: intent.id,
    what,
    amount: intent.amount,
    unit: intent.unit,
    status: intent.status,
    note,
    code: claimable ? (intent.code ?? '') : '',
    at: intent.createdAt,
  };
}
