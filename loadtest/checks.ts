/**
 * The load test's verdict, once every match has ended: what must hold whatever the crowd, the
 * rate and the SIGKILL did. Against the emulator's records (every withdrawal request, with the
 * callback URL that names the process that made it), the ledger (every intent) and its journal
 * (soak/books.ts reads both; soak/money.ts checks the escrows and the journal):
 *
 * - each payout and refund was made once: one withdrawal request per payout intent, none
 *   belonging to no intent, and never two for one player's prize or refund of one match;
 * - no player was paid by two processes: the requests of one match's payout (or refund) to one
 *   player were all made by one process;
 * - every match ended, nothing is left in flight (`creating`, `unknown`), and every ended
 *   match's escrow is zero;
 * - the journal sums to zero in every unit and agrees with its entries, the intents and the
 *   service's money (soak/money.ts `journalChecks`).
 *
 * Pure: no I/O.
 */

import type { Check } from '../soak/invariants.js';
import { type Books, escrowsEmpty, journalChecks, type ServiceMoney } from '../soak/money.js';
import type { Intent } from '../src/ledger/intent.js';
import { purposeOf } from '../src/server/purpose.js';

export interface ServiceRequest {
  id: string;
  status: string;
  amount: string;
  callbackUrl: string | null;
}

export interface Verdict {
  intents: readonly Intent[];
  books: Books;
  withdrawalRequests: readonly ServiceRequest[];
  money: ServiceMoney;
  /** The process that made a request, from its callback URL. */
  makerOf: (callbackUrl: string | null) => string;
  /** Ids of intents only their deadline can end (loadtest/in-flight.ts). */
  excused: ReadonlySet<string>;
}

function tokenOf(callbackUrl: string | null): string | null {
  const at = callbackUrl?.lastIndexOf('/callbacks/') ?? -1;
  return at < 0 ? null : (callbackUrl as string).slice(at + '/callbacks/'.length);
}

/** One withdrawal request per reward intent, each request some intent's. */
function payoutsOnce(v: Verdict): Check {
  const rewards = v.intents.filter((i) => i.kind === 'reward');
  const byToken = new Map(rewards.map((i) => [i.callbackToken ?? '', i]));
  const owned = new Map<string, string[]>();
  const violations: string[] = [];
  for (const req of v.withdrawalRequests) {
    const intent = byToken.get(tokenOf(req.callbackUrl) ?? '');
    if (!intent) {
      violations.push(`withdrawal request ${req.id} (${req.status}) belongs to no intent`);
      continue;
    }
    owned.set(intent.id, [...(owned.get(intent.id) ?? []), req.id]);
    if (req.amount !== intent.amount)
      violations.push(
        `${req.id} is for ${req.amount} msat, its intent ${intent.id} ${intent.amount}`,
      );
  }
  for (const intent of rewards) {
    const list = owned.get(intent.id) ?? [];
    if (list.length > 1) violations.push(`${intent.id} has ${list.length} requests: ${list}`);
    const made = intent.status === 'pending' || intent.status === 'completed';
    if (made && list.length === 0) violations.push(`${intent.id} is ${intent.status}, no request`);
  }
  return {
    name: 'each payout and refund made once (one withdrawal request per intent)',
    checked: v.withdrawalRequests.length + rewards.length,
    violations,
  };
}

/** Per match, player and purpose: one request, by one process. */
function onePayerEach(v: Verdict): Check {
  const byToken = new Map(
    v.intents.filter((i) => i.kind === 'reward').map((i) => [i.callbackToken ?? '', i]),
  );
  const makers = new Map<string, { requests: number; by: Set<string> }>();
  for (const req of v.withdrawalRequests) {
    const intent = byToken.get(tokenOf(req.callbackUrl) ?? '');
    if (!intent || intent.groupId === null) continue;
    const key = `${purposeOf(intent)} of ${intent.playerId} in ${intent.groupId}`;
    const seen = makers.get(key) ?? { requests: 0, by: new Set<string>() };
    seen.requests++;
    seen.by.add(v.makerOf(req.callbackUrl));
    makers.set(key, seen);
  }
  const violations: string[] = [];
  for (const [key, seen] of makers) {
    if (seen.by.size > 1) violations.push(`${key} was paid by ${[...seen.by].join(' and ')}`);
    else if (seen.requests > 1) violations.push(`${key} was made ${seen.requests} times`);
  }
  return {
    name: 'no player paid twice for one match, nor by two processes',
    checked: makers.size,
    violations,
  };
}

/**
 * Every match ended; nothing left `creating` or `unknown`; no fee open. Excused, and counted:
 * what only its deadline can end (loadtest/in-flight.ts), each still made at most once (above).
 */
function allEnded(v: Verdict): Check {
  const open = v.intents.filter(
    (i) =>
      i.status === 'creating' ||
      i.status === 'unknown' ||
      (i.status === 'pending' && (i.kind === 'match' || i.kind === 'entryFee')),
  );
  return {
    name: 'every match ended, nothing left in flight, no fee open (but what waits for its deadline)',
    checked: v.intents.length,
    violations: open
      .filter((i) => !v.excused.has(i.id))
      .map((i) => {
        const last = i.history.at(-1);
        const children = v.intents
          .filter((c) => c.groupId === i.id)
          .map((c) => `${c.kind} ${c.id.slice(-12)} ${c.status}`);
        return `${i.kind} ${i.id} is still ${i.status} (since ${last?.note ?? 'its last move'}${i.error ? `; ${i.error}` : ''}${children.length > 0 ? `; its intents: ${children.join(', ')}` : ''})`;
      }),
    excused: open.filter((i) => v.excused.has(i.id)).length,
  };
}

export function checkLoad(v: Verdict): Check[] {
  return [
    payoutsOnce(v),
    onePayerEach(v),
    allEnded(v),
    escrowsEmpty(v.intents, v.books),
    ...journalChecks(v.intents, v.books, v.money),
  ];
}

/**
 * What the players saw, as invariants: each of the tournament's entrants had its payout code on
 * its screen, and every bot's visit ended as a player's would (no step that did not come within
 * the bot's limit, no entry refused). Excused, and counted: a player whose payout's create
 * answer was lost (its process SIGKILLed mid-create, or a timeout): the payout is `unknown`
 * until its deadline, never sent twice (docs/MATCHES.md), so no code can reach the screen
 * before then (`excusedPlayers`, from the ledger's excused intents).
 */
export function crowdChecks(
  stories: readonly { playerId: string; where: string; outcome: string; error?: string }[],
  winners: number,
  excusedPlayers: ReadonlySet<string>,
): Check[] {
  const failed = stories.filter((s) => s.outcome === 'failed' || s.outcome === 'refused');
  const hall = stories.filter((s) => s.where === 'hall');
  const won = hall.filter((s) => s.outcome === 'won').length;
  const waiting = hall.filter((s) => s.outcome !== 'won' && excusedPlayers.has(s.playerId)).length;
  return [
    {
      name: "every tournament entrant's payout code reached its screen",
      checked: winners,
      violations:
        won + waiting >= winners ? [] : [`${won} of ${winners} entrants saw their payout code`],
      excused: waiting,
    },
    {
      name: "every bot's visit ended as a player's would (no step late, no entry refused)",
      checked: stories.length,
      violations: failed
        .filter((s) => !excusedPlayers.has(s.playerId))
        .map((s) => `${s.playerId} (${s.where}): ${s.outcome}: ${s.error}`),
      excused: failed.filter((s) => excusedPlayers.has(s.playerId)).length,
    },
  ];
}
