/**
 * `lightning.matches`: paid matches from the server, outside a room (docs/MATCHES.md); a room
 * uses its plugin's `openMatch`, which keeps the match alive while the room lives.
 */
import type { Intent } from '../ledger/intent.js';
import { parseInput } from '../parse.js';
import type { Matches } from '../server/match/matches.js';
import {
  type EnterInput,
  enterInput,
  matchIdInput,
  type OpenMatchInput,
  openMatchInput,
  reasonInput,
  type Shares,
  sharesInput,
} from '../server/match/terms.js';
import type { MatchView } from '../server/match/view.js';
import type { Reach } from './reach.js';

export class LightningMatches {
  readonly #reach: Reach<{ matches: Matches }>;

  /** Made by `createLightning`. */
  constructor(reach: Reach<{ matches: Matches }>) {
    this.#reach = reach;
  }

  /** Opens a match: entry fees in escrow, paid out by `settle` or refunded by `abort`, once. */
  async open(input: OpenMatchInput): Promise<MatchView> {
    const args = parseInput(openMatchInput, input);
    return (await this.#reach.start()).matches.open(args);
  }

  /** Charges a player's fee into a match; an open or paid fee of theirs is returned instead. */
  async enter(input: EnterInput): Promise<Intent> {
    const args = parseInput(enterInput, input);
    return (await this.#reach.start()).matches.enter(args);
  }

  /** Pays shares of the pot minus the rake, e.g. `{ [winnerId]: 1 }`, once. */
  async settle(matchId: string, shares: Shares): Promise<MatchView> {
    const id = parseInput(matchIdInput, matchId, 'matchId');
    const wanted = parseInput(sharesInput, shares, 'shares');
    return (await this.#reach.start()).matches.settle(id, wanted);
  }

  /** Refunds every paid fee and closes every open one; idempotent. */
  async abort(matchId: string, reason: string): Promise<MatchView> {
    const id = parseInput(matchIdInput, matchId, 'matchId');
    const why = parseInput(reasonInput, reason, 'reason');
    return (await this.#reach.start()).matches.abort(id, why);
  }

  /** A match as the ledger holds it now. */
  async get(matchId: string): Promise<MatchView> {
    const id = parseInput(matchIdInput, matchId, 'matchId');
    return (await this.#reach.start()).matches.view(id);
  }
}
