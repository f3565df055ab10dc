/**
 * The soak's money checks (soak/money.ts) on a small world written by hand: a settled match
 * with rake whose winner claimed, its journal built by `postingsFor` as a store would. Every
 * check holds for it; each breakage a store or the game could make (an entry lost, a balance
 * drifting, a pot left in escrow, a winner unpaid, a payout reaching its player twice, a fee
 * refunded out of the pot, no journal at all) is found by the check that should find it.
 */
import { expect } from 'chai';
import {
  accountsOf,
  type Books,
  escrowsEmpty,
  journalChecks,
  payoutsHeld,
  refundsAndPots,
  reissuesDue,
  type ServiceMoney,
} from '../../soak/money.js';
import type { Intent, IntentStatus } from '../../src/ledger/intent.js';
import {
  type AccountBalance,
  accountClass,
  afterWrite,
  type JournalEntry,
  postingsFor,
} from '../../src/ledger/journal.js';
import { positionOf } from '../../src/server/kinds/index.js';

const T0 = Date.UTC(2026, 0, 1);

function intent(
  fields: Partial<Intent> & Pick<Intent, 'id' | 'kind' | 'playerId' | 'amount'>,
): Intent {
  return {
    status: 'creating',
    roomId: 'room',
    unit: 'msats',
    description: 'match test',
    remoteId: null,
    code: null,
    uri: null,
    callbackToken: null,
    idempotencyKey: null,
    openKey: null,
    groupId: null,
    expiresAt: null,
    createdAt: T0,
    updatedAt: T0,
    nextCheckAt: null,
    checks: 0,
    leaseOwner: null,
    leaseUntil: null,
    error: null,
    meta: {},
    history: [{ at: T0, from: null, to: 'creating' }],
    ...fields,
  };
}

/** Plays the steps in order, as a store writes them: the intents where they end, and the journal. */
function play(
  created: Intent[],
  steps: [id: string, to: IntentStatus, patch?: Partial<Intent>][],
): { intents: Intent[]; entries: JournalEntry[] } {
  const now = new Map<string, Intent>();
  const entries: JournalEntry[] = [];
  let at = T0;
  const journal = (before: Intent | null, after: Intent) => {
    for (const p of postingsFor(before, after, positionOf)) {
      entries.push({
        ...p,
        id: `${after.id}:${p.tag}`,
        seq: entries.length + 1,
        intentId: after.id,
        playerId: after.playerId,
        matchId: after.groupId,
        at,
      });
    }
  };
  for (const i of created) {
    now.set(i.id, i);
    journal(null, i);
  }
  for (const [id, to, patch = {}] of steps) {
    at += 1_000;
    const before = now.get(id) as Intent;
    const after = afterWrite(before, to, patch, at);
    now.set(id, after);
    journal(before, after);
  }
  return { intents: [...now.values()], entries };
}

/** The books a store keeps for these entries: balances summed as it writes them. */
function booksOf(intents: Intent[], entries: JournalEntry[]): Books {
  const sums = new Map<string, bigint>();
  const add = (account: string, unit: string, amount: bigint) =>
    sums.set(`${account}|${unit}`, (sums.get(`${account}|${unit}`) ?? 0n) + amount);
  for (const e of entries) {
    add(e.credit, e.unit, BigInt(e.amount));
    add(e.debit, e.unit, -BigInt(e.amount));
  }
  const classes = new Map<string, bigint>();
  for (const [key, amount] of sums) {
    const [account, unit] = key.split('|') as [string, string];
    const k = `${accountClass(account)}|${unit}`;
    classes.set(k, (classes.get(k) ?? 0n) + amount);
  }
  const rows = (map: Map<string, bigint>): AccountBalance[] =>
    [...map].map(([key, amount]) => {
      const [account, unit] = key.split('|') as [string, string];
      return { account, unit, balance: amount.toString() };
    });
  const accounts = accountsOf(intents).map(
    (account) =>
      rows(sums).find((r) => r.account === account) ?? { account, unit: 'msats', balance: '0' },
  );
  const byIntent = new Map(intents.map((i) => [i.id, entries.filter((e) => e.intentId === i.id)]));
  return { error: null, classes: rows(classes), accounts, entries, byIntent };
}

const decision = {
  kind: 'settle',
  reason: null,
  shares: { alice: 1 },
  paidFeeIds: ['fee-a', 'fee-b'],
  potMsat: '40000',
  rakeMsat: '4000',
  payouts: [{ playerId: 'alice', amountMsat: '36000' }],
  at: T0,
};
const terms = {
  entryFeeMsat: '20000',
  rakeBps: 1000,
  feeExpiresIn: 10,
  timeoutMs: 10_000,
  claimExpiresIn: 60,
  description: 'match test',
};

function match(): Intent {
  return intent({
    id: 'm',
    kind: 'match',
    playerId: 'match:m',
    amount: '20000',
    groupId: 'm',
    meta: { terms },
  });
}
function fee(id: string, playerId: string): Intent {
  return intent({
    id,
    kind: 'entryFee',
    playerId,
    amount: '20000',
    groupId: 'm',
    meta: { matchRole: 'fee' },
  });
}
function payout(id: string, attempt = 1): Intent {
  return intent({
    id,
    kind: 'reward',
    playerId: 'alice',
    amount: '36000',
    groupId: 'm',
    expiresAt: T0 + 60_000,
    meta: { matchRole: 'payout', payKey: 'm:payout:alice', why: 'won', attempt },
  });
}
function refund(id: string, feeId: string, playerId: string): Intent {
  return intent({
    id,
    kind: 'reward',
    playerId,
    amount: '20000',
    groupId: 'm',
    expiresAt: T0 + 60_000,
    meta: { matchRole: 'refund', payKey: `${feeId}:refund`, why: 'aborted', feeId },
  });
}

/** Two fees paid, the match settled with 10 % rake: alice wins the rest. */
const DECIDE: [string, IntentStatus, Partial<Intent>?][] = [
  ['fee-a', 'pending'],
  ['fee-b', 'pending'],
  ['fee-a', 'completed'],
  ['fee-b', 'completed'],
  ['m', 'pending', { meta: { terms, decision } }],
];
/** Alice's code shown and claimed, the match ended. */
const claimed = (): [string, IntentStatus, Partial<Intent>?][] => [
  ['p', 'pending', { code: 'lnurl', remoteId: 'wr-1' }],
  ['p', 'completed'],
  ['m', 'completed'],
];
/** The decided match, then `steps`; `more` intents recorded beside its payout. */
function replay(steps: [string, IntentStatus, Partial<Intent>?][], more: Intent[] = []) {
  return play(
    [match(), fee('fee-a', 'alice'), fee('fee-b', 'bob'), payout('p'), ...more],
    [...DECIDE, ...steps],
  );
}

const service = (out = '36000'): ServiceMoney => ({
  staticCharges: [
    { id: 'c1', slots: 1, amount: '20000' },
    { id: 'c2', slots: 1, amount: '20000' },
  ],
  withdrawalRequests: [{ id: 'wr-1', status: 'completed', amount: out }],
  payments: [],
});

function all(intents: Intent[], books: Books, money = service()) {
  return [
    payoutsHeld(intents, 'at the end'),
    ...refundsAndPots(intents, money.staticCharges, 'at the end'),
    escrowsEmpty(intents, books),
    ...journalChecks(intents, books, money),
  ];
}
function broken(intents: Intent[], books: Books, money = service()): Record<string, string[]> {
  return Object.fromEntries(
    all(intents, books, money)
      .filter((c) => c.violations.length > 0)
      .map((c) => [c.name, c.violations]),
  );
}

describe('soak money checks', () => {
  it('hold for a settled match whose winner claimed, journaled by the rule', () => {
    const { intents, entries } = replay(claimed());
    const books = booksOf(intents, entries);
    expect(broken(intents, books)).to.deep.equal({});
    // Not vacuous: the wallet moved, the rake was taken, the escrow filled and emptied.
    const balance = (a: string) => books.accounts.find((r) => r.account === a)?.balance;
    expect(balance('wallet')).to.equal('-4000');
    expect(balance('house:rake')).to.equal('4000');
    expect(balance('escrow:m')).to.equal('0');
    expect(entries.map((e) => e.id)).to.include.members([
      'fee-a:completed',
      'm:pending',
      'p:completed',
    ]);
  });

  it('find an entry the store lost (its balances still moved)', () => {
    const { intents, entries } = replay(claimed());
    const books = booksOf(intents, entries);
    const lost = books.entries.filter((e) => e.id !== 'p:completed');
    books.entries = lost;
    books.byIntent.set(
      'p',
      lost.filter((e) => e.intentId === 'p'),
    );
    const found = broken(intents, books);
    expect(Object.keys(found)).to.have.members([
      "the journal's entries add up to its balances (accounts and classes)",
      "each intent's entries are one chain from its source to its position",
    ]);
    expect(
      found["each intent's entries are one chain from its source to its position"],
    ).to.deep.equal([
      'reward p (completed): its entries end at claimable:alice, it sits at wallet',
    ]);
  });

  it('find a wallet that drifted from the service and from the intents', () => {
    const { intents, entries } = replay(claimed());
    const books = booksOf(intents, entries);
    const money = service('35000');
    const found = broken(intents, books, money);
    expect(found["the wallet account = the service's money in minus out"]).to.deep.equal([
      'wallet -4000 msats; the service took in 40000 and paid out 35000 (wallet should be -5000)',
    ]);
    const drifted = booksOf(intents, entries);
    drifted.accounts = drifted.accounts.map((a) =>
      a.account === 'wallet' ? { ...a, balance: '-3000' } : a,
    );
    expect(Object.keys(broken(intents, drifted))).to.have.members([
      "the journal's entries add up to its balances (accounts and classes)",
      "the wallet account = the service's money in minus out",
      "every class and account holds what the intents' statuses say",
    ]);
  });

  it('find a settled match whose pot stayed in escrow and whose winner got nothing', () => {
    const { intents, entries } = play(
      [match(), fee('fee-a', 'alice'), fee('fee-b', 'bob')],
      [...DECIDE, ['m', 'completed']],
    );
    const found = broken(intents, booksOf(intents, entries), {
      ...service(),
      withdrawalRequests: [],
    });
    expect(found['every ended match: its escrow account balances to 0']).to.deep.equal([
      'match m (completed) holds 36000 msats in escrow',
    ]);
    expect(found['every winner of a settled match holds its payout (at the end)']).to.deep.equal([
      'match m: payout of 36000 to alice: never issued',
    ]);
  });

  it('find a payout that reached its winner twice, and a lost attempt not issued again', () => {
    const twice = replay(
      [...claimed(), ['p2', 'pending', { code: 'lnurl-2', remoteId: 'wr-2' }]],
      [payout('p2', 2)],
    );
    const found = broken(twice.intents, booksOf(twice.intents, twice.entries));
    expect(found['every winner of a settled match holds its payout (at the end)']?.[0]).to.match(
      /2 attempts reached the player/,
    );
    const lost = replay([
      ['p', 'unknown'],
      ['p', 'expired'],
    ]);
    expect(reissuesDue(lost.intents).map((i) => i.id)).to.deep.equal(['p']);
    const again = replay(
      [
        ['p', 'unknown'],
        ['p', 'expired'],
      ],
      [payout('p:2', 2)],
    );
    expect(reissuesDue(again.intents)).to.deep.equal([]);
  });

  it('find a fee refunded out of the pot, and one owed back that never was', () => {
    const refunded = replay(claimed(), [refund('fee-a:refund', 'fee-a', 'alice')]);
    const found = broken(refunded.intents, booksOf(refunded.intents, refunded.entries));
    expect(
      found['every fee owed back was refunded, once; none in a pot was (at the end)'],
    ).to.deep.equal(['fee fee-a (completed) of match m was refunded, owed nothing']);
    const aborted = play(
      [match(), fee('fee-a', 'alice')],
      [
        ['fee-a', 'pending'],
        ['fee-a', 'completed'],
        [
          'm',
          'pending',
          {
            meta: {
              terms,
              decision: {
                ...decision,
                kind: 'abort',
                reason: 'test',
                paidFeeIds: ['fee-a'],
                potMsat: '20000',
                rakeMsat: '0',
                payouts: [],
              },
            },
          },
        ],
        ['m', 'failed'],
      ],
    );
    const owed = refundsAndPots(aborted.intents, [], 'at the end')[0];
    expect(owed?.violations).to.deep.equal(['match m: refund of fee fee-a: never issued']);
  });

  it('fail every journal check when the store keeps no journal', () => {
    const { intents } = replay(claimed());
    const none: Books = {
      error: 'no journal()',
      classes: [],
      accounts: [],
      entries: [],
      byIntent: new Map(),
    };
    const checks = [escrowsEmpty(intents, none), ...journalChecks(intents, none, service())];
    expect(checks).to.have.length(6);
    for (const check of checks)
      expect(check.violations).to.deep.equal(['no journal: no journal()']);
  });
});
