/**
 * The soak's verdict: what must hold once the storm is over, checked against the emulator's
 * own records (withdrawal requests, static charges, point transfers and balances), the ledger
 * (every intent and its history), and what the game processes reported (`settled` events and
 * room hooks). Each check says how many things it looked at and lists every violation.
 *
 * One allowance, counted and printed: a move a process wrote to the ledger in the instant
 * before it was SIGKILLed may have lost its `settled` event and its room message with it
 * (events are not durable; the ledger is). Only moves recorded within `killWindowMs` before a
 * kill, and that no process reported, are excused (`lostInKill`); an event missing for any
 * other move is a violation.
 *
 * Matches and the journal (pots, payouts, refunds, escrow, balances against the intents and the
 * service) are checked by soak/money.ts, called from here.
 *
 * Pure: no I/O; a few passes over the records.
 */

import type { TransferRecord } from '../src/emulator/index.js';
import { type Intent, type IntentStatus, SETTLED_NOTE } from '../src/ledger/intent.js';
import type { Report } from '../test/cluster/processes.js';
import {
  type Books,
  byOperator,
  escrowsEmpty,
  journalChecks,
  payoutsHeld,
  refundsAndPots,
} from './money.js';

export interface ServiceResource {
  id: string;
  status: string;
  callbackUrl: string | null;
  /** msats */
  amount: string;
  /** Static charges: payments received. */
  slots?: number;
}

export interface PointBalance {
  playerId: string;
  userId: string;
  initial: number;
  now: number;
}

export interface Records {
  intents: Intent[];
  withdrawalRequests: ServiceResource[];
  staticCharges: ServiceResource[];
  /** Payments to players' Lightning addresses (match payouts and refunds). */
  payments: ServiceResource[];
  transfers: TransferRecord[];
  /** The journal the store kept (soak/books.ts). */
  books: Books;
  points: PointBalance[];
  reports: readonly Report[];
  /** Rooms that exist at the end (their process lives): they must have heard every end. */
  liveRooms: ReadonlySet<string>;
  /** When processes were SIGKILLed (epoch ms). */
  kills: readonly number[];
  /** Every crash (process or PostgreSQL), to say when a violation happened relative to them. */
  crashes: readonly { what: string; at: number }[];
  /** The clocks' jumps (game time, from and to): time that passed in an instant. */
  jumps: readonly { from: number; to: number }[];
  settings: {
    creatingGraceMs: number;
    expiryMarginMs: number;
    /** A spend whose answer was lost is re-sent this long after. */
    resendMs: number;
    /** How late a `creating` or `unknown` may end (reconciler pace, leases, a PostgreSQL restart). */
    latenessMs: number;
    killWindowMs: number;
  };
}

export interface Check {
  name: string;
  /** How many things it looked at. */
  checked: number;
  violations: string[];
  /** Excused by the kill window (see the header). */
  excused?: number;
  /** A measured figure worth printing beside it. */
  note?: string;
}

const TERMINAL = new Set<IntentStatus>(['completed', 'expired', 'failed']);

function tokenOf(callbackUrl: string | null): string | null {
  const at = callbackUrl?.lastIndexOf('/callbacks/') ?? -1;
  return at < 0 ? null : (callbackUrl as string).slice(at + '/callbacks/'.length);
}

function group<T>(items: Iterable<T>, key: (item: T) => string | undefined): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    if (k === undefined) continue;
    const list = map.get(k);
    if (list) list.push(item);
    else map.set(k, [item]);
  }
  return map;
}

/**
 * Every resource the service holds of this kind belongs to exactly one intent (by the token
 * in its callback URL), and no intent owns two: a create sent twice would show here.
 */
function resourcesBelong(
  name: string,
  kinds: readonly Intent['kind'][],
  resources: ServiceResource[],
  intents: Intent[],
): Check {
  const violations: string[] = [];
  const mine = intents.filter((i) => kinds.includes(i.kind));
  const kind = kinds.join(' or ');
  const byToken = new Map(mine.map((i) => [i.callbackToken ?? '', i]));
  const owned = new Map<string, string[]>();
  for (const res of resources) {
    const intent = byToken.get(tokenOf(res.callbackUrl) ?? '');
    if (!intent) {
      violations.push(`${res.id} (${res.status}) belongs to no ${kind} intent`);
      continue;
    }
    owned.set(intent.id, [...(owned.get(intent.id) ?? []), res.id]);
    if (intent.remoteId !== null && intent.remoteId !== res.id) {
      violations.push(`${intent.id} knows ${intent.remoteId}, the service also holds ${res.id}`);
    }
    if (res.amount !== intent.amount) {
      violations.push(`${res.id} is for ${res.amount} msat, its intent ${intent.amount}`);
    }
  }
  const ids = new Set(resources.map((r) => r.id));
  for (const intent of mine) {
    const list = owned.get(intent.id) ?? [];
    if (list.length > 1) violations.push(`${intent.id} was created ${list.length} times: ${list}`);
    if (intent.remoteId !== null && !ids.has(intent.remoteId)) {
      violations.push(`${intent.id} names ${intent.remoteId}, which the service does not hold`);
    }
    const known = intent.status === 'pending' || intent.status === 'completed';
    // An operator who resolved a lost answer from the service's records names no resource.
    if (known && intent.remoteId === null && !byOperator(intent))
      violations.push(`${intent.id} is ${intent.status} without a resource`);
  }
  return { name, checked: resources.length + mine.length, violations };
}

/** What the service says happened agrees with how the ledger ended each intent. */
function outcomesAgree(r: Records): Check {
  const violations: string[] = [];
  const byRemote = new Map(
    r.intents.filter((i) => i.remoteId !== null).map((i) => [`${i.kind}:${i.remoteId}`, i]),
  );
  const byToken = new Map(r.intents.map((i) => [i.callbackToken ?? '', i]));
  const owner = (kind: string, res: ServiceResource) =>
    byRemote.get(`${kind}:${res.id}`) ?? byToken.get(tokenOf(res.callbackUrl) ?? '');
  let checked = 0;
  for (const wr of r.withdrawalRequests) {
    const intent = owner('reward', wr) ?? owner('withdrawal', wr);
    if (!intent) continue;
    checked++;
    const claimed = wr.status === 'completed';
    if (claimed !== (intent.status === 'completed')) {
      violations.push(
        `${intent.kind} ${intent.id} is ${intent.status}, its withdrawal request ${wr.id} ${wr.status}`,
      );
    }
  }
  for (const charge of r.staticCharges) {
    const intent = owner('entryFee', charge);
    if (!intent) continue;
    checked++;
    const paid = (charge.slots ?? 0) > Number(intent.meta.slotsBaseline ?? 0);
    if (paid !== (intent.status === 'completed')) {
      violations.push(
        `fee ${intent.id} is ${intent.status}, its charge ${charge.id} has ${charge.slots} payments`,
      );
    }
  }
  // A payment to an address: completed or failed at the service exactly as in the ledger (one
  // still unknown there, or resolved by an operator, must agree with what the service did).
  const paidBy = new Map<string, ServiceResource>();
  for (const payment of r.payments) {
    const intent = owner('payment', payment);
    if (intent) paidBy.set(intent.id, payment);
  }
  for (const intent of r.intents) {
    if (intent.kind !== 'payment') continue;
    checked++;
    const payment = paidBy.get(intent.id);
    const service = payment?.status ?? 'never sent';
    const agrees =
      intent.status === 'completed'
        ? service === 'completed'
        : intent.status === 'failed'
          ? service !== 'completed'
          : false;
    if (!agrees) {
      violations.push(`payment ${intent.id} is ${intent.status}, at the service ${service}`);
    }
  }
  return {
    name: 'paid and claimed at the service <=> completed in the ledger',
    checked,
    violations,
  };
}

/** Each deplete at the service belongs to one spend intent, once; balances add up. */
function depletesOnce(r: Records): Check {
  const violations: string[] = [];
  const spends = r.intents.filter((i) => i.kind === 'spend');
  const byKey = new Map(spends.map((i) => [i.idempotencyKey ?? '', i]));
  const transfers = group(r.transfers, (t) => t.idempotencyKey);
  for (const t of r.transfers) {
    const intent = byKey.get(t.idempotencyKey);
    if (!intent) violations.push(`transfer ${t.transferId} belongs to no spend intent`);
    else if (String(t.amount) !== intent.amount || t.userId !== intent.meta.userId)
      violations.push(`transfer ${t.transferId} differs from its intent ${intent.id}`);
  }
  const debitedBy = new Map<string, number>();
  for (const intent of spends) {
    const applied = transfers.get(intent.idempotencyKey ?? '')?.length ?? 0;
    if (applied > 1) violations.push(`spend ${intent.id} was applied ${applied} times`);
    if (intent.status === 'completed' && applied !== 1)
      violations.push(`spend ${intent.id} is completed, applied ${applied} times`);
    if (intent.status === 'failed' && applied !== 0)
      violations.push(`spend ${intent.id} is failed, yet its deplete was applied`);
    if (intent.status === 'completed') {
      const user = String(intent.meta.userId);
      debitedBy.set(user, (debitedBy.get(user) ?? 0) + Number(intent.amount));
    }
  }
  for (const p of r.points) {
    const fromService = r.transfers
      .filter((t) => t.userId === p.userId)
      .reduce((sum, t) => sum + t.amount, 0);
    const fromLedger = debitedBy.get(p.userId) ?? 0;
    if (p.initial - p.now !== fromService || fromService !== fromLedger) {
      violations.push(
        `${p.playerId}: ${p.initial - p.now} points left the balance, the service's transfers say ${fromService}, the ledger's completed spends ${fromLedger}`,
      );
    }
  }
  return {
    name: 'each deplete applied once, by one intent; balances add up',
    checked: r.transfers.length + spends.length + r.points.length,
    violations,
  };
}

/** When the intent reached its terminal status, per its history. */
function endedAt(intent: Intent): number {
  return intent.history.at(-1)?.at ?? intent.updatedAt;
}

/** `t` relative to the nearest crash, e.g. `312 ms after the postgres kill`. */
function sinceCrash(t: number, r: Records): string {
  const nearest = [...r.crashes].sort((a, b) => Math.abs(t - a.at) - Math.abs(t - b.at))[0];
  if (!nearest) return `at ${new Date(t).toISOString()}`;
  const d = t - nearest.at;
  return `${Math.abs(d)} ms ${d >= 0 ? 'after' : 'before'} the ${nearest.what} kill`;
}

/**
 * Ended intents whose events may have died with a SIGKILLed process: no process reported
 * their `settled` (a live writer always does), and the ledger recorded the end within
 * `killWindowMs` before a kill. Their room message died with the same process.
 */
export function lostInKill(r: Records): Set<string> {
  const settled = new Set(r.reports.filter((x) => x.event === 'settled').map((x) => x.id));
  const lost = new Set<string>();
  for (const intent of r.intents) {
    if (!TERMINAL.has(intent.status) || settled.has(intent.id)) continue;
    const at = endedAt(intent);
    if (r.kills.some((k) => at <= k && at >= k - r.settings.killWindowMs)) lost.add(intent.id);
  }
  return lost;
}

/** The game heard each end exactly once: the `settled` event, and the room's hook. */
function heardOnce(r: Records): Check[] {
  const settled = group(
    r.reports.filter((x) => x.event === 'settled'),
    (x) => x.id,
  );
  const hooks = group(
    r.reports.filter((x) => x.event === 'room'),
    (x) => x.id,
  );
  const messages = group(
    r.reports.filter((x) => x.event === 'message'),
    (x) => x.id,
  );
  const byId = new Map(r.intents.map((i) => [i.id, i]));
  const lost = lostInKill(r);
  const events: Check = {
    name: '`settled` event exactly once per end',
    checked: 0,
    violations: [],
  };
  const rooms: Check = { name: 'room hook exactly once per end', checked: 0, violations: [] };
  let excusedEvents = 0;
  let excusedHooks = 0;
  const matchEnds = group(
    r.reports.filter((x) => x.event === 'match'),
    (x) => x.id,
  );
  const matches: Check = {
    name: '`match.settled` or `match.aborted` exactly once per ended match',
    checked: 0,
    violations: [],
    excused: 0,
  };
  for (const intent of r.intents) {
    if (!TERMINAL.has(intent.status)) continue;
    if (intent.kind === 'match') {
      // A match is a record of ours: its own events say how it ended, it has no room hook.
      matches.checked++;
      const heard = matchEnds.get(intent.id) ?? [];
      const status = intent.status === 'completed' ? 'settled' : 'aborted';
      if (heard.length === 0 && lost.has(intent.id)) matches.excused = (matches.excused ?? 0) + 1;
      else if (heard.length !== 1 || heard[0]?.status !== status)
        matches.violations.push(
          `match ${intent.id} ${status}: heard [${heard.map((h) => `${h.status} by ${h.node}`)}]`,
        );
      continue;
    }
    // A record ended at its create (a tab's credit) has no end to hear: no event, no hook.
    if (intent.history[1]?.note === SETTLED_NOTE) continue;
    events.checked++;
    const heard = settled.get(intent.id) ?? [];
    if (heard.length > 1) events.violations.push(`${intent.id} settled ${heard.length} times`);
    if (heard.length === 0) {
      if (lost.has(intent.id)) excusedEvents++;
      else events.violations.push(`${intent.id} (${intent.kind} ${intent.status}) never settled`);
    }
    for (const h of heard) {
      if (h.status !== intent.status)
        events.violations.push(
          `${intent.id} settled ${h.status}, the ledger says ${intent.status}`,
        );
    }
    if (intent.roomId === null) continue;
    const hooked = hooks.get(intent.id) ?? [];
    const live = r.liveRooms.has(intent.roomId);
    if (live) rooms.checked++;
    if (hooked.length > 1) rooms.violations.push(`${intent.id} hooked ${hooked.length} times`);
    for (const h of hooked) {
      if (h.status !== intent.status || h.heardBy !== intent.roomId)
        rooms.violations.push(`${intent.id} hooked ${h.status} in ${String(h.heardBy)}`);
    }
    if (live && hooked.length === 0) {
      if (lost.has(intent.id)) excusedHooks++;
      else
        rooms.violations.push(
          `${intent.id} (${intent.kind} ${intent.status}) never reached the hook of its live room; ended ${sinceCrash(endedAt(intent), r)}; its room's process heard [${(messages.get(intent.id) ?? []).map((m) => m.status)}] on the room's channel; settled by [${heard.map((h) => h.node)}]; history ${intent.history.map((h) => `${h.to}${h.note ? ` (${h.note})` : ''}`).join(' > ')}`,
        );
    }
  }
  for (const [id, list] of settled) {
    const intent = byId.get(id);
    if (!intent || !TERMINAL.has(intent.status))
      events.violations.push(
        `${id} settled ${list[0]?.status}, the ledger has it ${intent?.status}`,
      );
  }
  events.excused = excusedEvents;
  rooms.excused = excusedHooks;
  return [events, rooms, matches];
}

/**
 * Nothing is left in between: every intent ended; none stayed `creating` past its grace
 * period, and none stayed `unknown` past its deadline (a reward or fee: its expiry plus the
 * margin; a spend: its re-send), beyond `latenessMs`.
 */
function nothingStuck(r: Records): Check[] {
  // How long passed between two readings of the jumped clocks, without the jumps themselves.
  const elapsed = (a: number, b: number) =>
    r.jumps.reduce((ms, j) => ms - Math.max(0, Math.min(b, j.to) - Math.max(a, j.from)), b - a);
  const { creatingGraceMs, expiryMarginMs, resendMs, latenessMs } = r.settings;
  const ended: Check = { name: 'every intent ended', checked: r.intents.length, violations: [] };
  const creating: Check = {
    name: `no intent left creating (grace ${creatingGraceMs} ms)`,
    checked: 0,
    violations: [],
  };
  const unknown: Check = { name: 'no unknown past its deadline', checked: 0, violations: [] };
  let worstCreating = 0;
  let worstUnknown = Number.NEGATIVE_INFINITY;
  let operated = 0;
  const now = Date.now();
  for (const intent of r.intents) {
    if (!TERMINAL.has(intent.status)) ended.violations.push(`${intent.id} is ${intent.status}`);
    const h = intent.history;
    for (let k = 0; k < h.length; k++) {
      const entry = h[k];
      if (!entry) continue;
      const left = h[k + 1]?.at ?? now;
      // A match's `creating` is its being open: its timeout, not a grace period, ends it.
      if (entry.to === 'creating' && intent.kind !== 'match') {
        creating.checked++;
        const age = elapsed(entry.at, left);
        worstCreating = Math.max(worstCreating, age);
        if (age > creatingGraceMs + latenessMs)
          creating.violations.push(`${intent.id} was creating for ${age} ms`);
      }
      if (entry.to === 'unknown') {
        unknown.checked++;
        if (intent.kind === 'payment') {
          // Never re-sent, no deadline: a proven callback or an operator ends it.
          if (byOperator(intent)) operated++;
          continue;
        }
        const deadline =
          intent.kind === 'spend'
            ? entry.at + resendMs
            : intent.expiresAt === null
              ? null
              : intent.expiresAt + expiryMarginMs;
        if (deadline === null) {
          unknown.violations.push(`${intent.id} became unknown with no deadline`);
          continue;
        }
        const since = Math.max(deadline, entry.at);
        const late = left >= since ? elapsed(since, left) : left - since;
        worstUnknown = Math.max(worstUnknown, late);
        if (late > latenessMs)
          unknown.violations.push(
            `${intent.id} (${intent.kind}) stayed unknown ${late} ms past its deadline`,
          );
      }
    }
  }
  creating.note = `longest ${worstCreating} ms`;
  unknown.note = [
    unknown.checked === 0 ? 'none became unknown' : `latest end ${worstUnknown} ms after deadline`,
    operated > 0 ? `${operated} payments resolved by the operator` : '',
  ]
    .filter((x) => x !== '')
    .join('; ');
  return [ended, creating, unknown];
}

export function checkInvariants(r: Records): Check[] {
  return [
    resourcesBelong(
      'each withdrawal request belongs to exactly one reward or tab withdrawal intent',
      ['reward', 'withdrawal'],
      r.withdrawalRequests,
      r.intents,
    ),
    resourcesBelong(
      'each static charge belongs to exactly one entry-fee intent',
      ['entryFee'],
      r.staticCharges,
      r.intents,
    ),
    resourcesBelong(
      'each payment to an address belongs to exactly one payment intent',
      ['payment'],
      r.payments,
      r.intents,
    ),
    depletesOnce(r),
    outcomesAgree(r),
    ...heardOnce(r),
    ...nothingStuck(r),
    payoutsHeld(r.intents, 'at the end'),
    ...refundsAndPots(r.intents, r.staticCharges.map(chargeMoney), 'at the end'),
    escrowsEmpty(r.intents, r.books),
    ...journalChecks(r.intents, r.books, {
      staticCharges: r.staticCharges.map(chargeMoney),
      withdrawalRequests: r.withdrawalRequests,
      payments: r.payments,
    }),
  ];
}

function chargeMoney(c: ServiceResource): { id: string; slots: number; amount: string } {
  return { id: c.id, slots: c.slots ?? 0, amount: c.amount };
}
