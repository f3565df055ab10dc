/**
 * Turns a soak run into its figures: what was asked and answered, how the ledger ended every
 * intent and by which road, the matches (opened, ended, pots, payouts and refunds by road, late
 * fees, the operator, the time jumps), what the service holds, which faults hit how many
 * requests, what became of the callbacks, the two crashes, what the game heard, the journal's
 * balances, and each invariant's verdict.
 */
import { INTENT_KINDS, type Intent } from '../src/ledger/intent.js';
import { fromPot } from '../src/ledger/journal.js';
import type { MatchMeta } from '../src/server/kinds/meta.js';
import { attemptOf, wasShown } from '../src/server/kinds/payout-position.js';
import { count, type Figure, percentile, seconds, tally, tallyOf } from './figures.js';
import type { Books } from './money.js';
import type { SoakRun } from './runner.js';

export function soakFigures(run: SoakRun): Figure[] {
  const f: Figure[] = [];
  const add = (section: string, name: string, value: string) => f.push({ section, name, value });
  const { options: o, ops, intents, times } = run;
  const control = run.cluster.emulator.control;

  add('run', 'seed', String(o.seed));
  add(
    'run',
    'cluster',
    `${o.processes} game processes, ${count(run.players.length)} SDK players in ${count(
      new Set(run.players.map((p) => p.roomId)).size,
    )} rooms (the restarted process's included), 1 redis-server (presence), 1 postgresql (fsync on), 1 emulator`,
  );
  add('run', 'wall time', seconds(times.end - times.start));
  const opsMs = times.opsEnd - times.opsStart;
  add(
    'run',
    'ops phase',
    `${seconds(opsMs)}, ${count((ops.length * 1000) / Math.max(1, opsMs))} ops/s`,
  );
  add(
    'run',
    'all intents ended',
    times.settled === null
      ? 'NOT within the run'
      : `${seconds(times.settled - times.opsEnd)} after the last op`,
  );

  add(
    'run',
    '  ... steps of the end',
    run.endgame.steps.map((st) => `${st.what} ${seconds(st.ms)}`).join(', '),
  );

  add('ops', 'asked', count(ops.length));
  for (const kind of ['reward', 'fee', 'spend', 'match', 'tab'] as const) {
    const mine = ops.filter((x) => x.kind === kind);
    const ok = mine.filter((x) => x.ok);
    const did =
      kind === 'match' || kind === 'tab' ? ` (${tally(tallyOf(ok.map((x) => x.did ?? '?')))})` : '';
    const errors = tallyOf(mine.filter((x) => !x.ok).map((x) => x.error ?? '?'));
    add(
      'ops',
      kind === 'match' ? 'match step' : kind,
      `${count(mine.length)}: ok ${count(ok.length)}${did}; refused or lost: ${tally(errors)}`,
    );
  }
  const timing = (list: typeof ops) => {
    const ms = list.filter((x) => x.ok).map((x) => x.ms);
    return `p50 ${percentile(ms, 0.5).toFixed(0)} ms, p99 ${percentile(ms, 0.99).toFixed(0)} ms, max ${Math.max(0, ...ms).toFixed(0)} ms`;
  };
  add('ops', 'answer time (ok)', timing(ops));
  add('ops', '  ... of match steps', timing(ops.filter((x) => x.kind === 'match')));

  add('ledger', 'intents', count(intents.length));
  for (const kind of INTENT_KINDS) {
    const mine = intents.filter((i) => i.kind === kind);
    add('ledger', kind, `${count(mine.length)}: ${tally(tallyOf(mine.map((i) => i.status)))}`);
  }
  const notes = intents.flatMap((i) => i.history.map((h) => h.note ?? ''));
  const through = (to: string) => intents.filter((i) => i.history.some((h) => h.to === to)).length;
  add('ledger', 'went through unknown', count(through('unknown')));
  add(
    'ledger',
    '  ... made unknown by',
    tally({
      'an ambiguous answer': notes.filter((n) => n === 'create outcome unknown').length,
      'the grace period (create never answered)': notes.filter((n) =>
        n.startsWith('create never answered'),
      ).length,
    }),
  );
  const unknownEnds = intents
    .filter((i) => i.history.some((h) => h.to === 'unknown'))
    .map((i) => {
      const k = i.history.findIndex((h) => h.to === 'unknown');
      const next = i.history[k + 1];
      return next
        ? `${next.to}${next.note?.includes('operator') ? ' (operator)' : ''}`
        : 'still unknown';
    });
  add('ledger', '  ... left unknown for', tally(tallyOf(unknownEnds)));
  add(
    'ledger',
    'late create answers that won over unknown',
    count(notes.filter((n) => n.endsWith('(answer after the grace period)')).length),
  );
  add('ledger', 'reconciler re-reads', count(intents.reduce((s, i) => s + i.checks, 0)));

  matchFigures(run, add);

  const wrs = control.withdrawalRequests();
  const charges = control.staticCharges();
  const transfers = control.transfers();
  add(
    'service',
    'withdrawal requests',
    `${count(wrs.length)}: ${tally(tallyOf(wrs.map((w) => w.status)))}`,
  );
  add(
    'service',
    'static charges',
    `${count(charges.length)}: paid ${count(charges.filter((c) => c.slots > 0).length)}, ${tally(
      tallyOf(charges.filter((c) => c.slots === 0).map((c) => `unpaid ${c.status}`)),
    )}`,
  );
  const payments = control.payments();
  add(
    'service',
    'payments to addresses',
    `${count(payments.length)}: ${tally(tallyOf(payments.map((p) => p.status)))}`,
  );
  add(
    'service',
    'deplete transfers',
    `${count(transfers.length)}, ${count(transfers.reduce((s, t) => s + t.amount, 0))} points`,
  );
  const acts = run.wallets.acts;
  const actTally = (kind: 'claim' | 'pay') =>
    tally(
      tallyOf(
        acts
          .filter((a) => a.kind === kind)
          .map((a) => `${a.second ? 'second ' : a.late ? 'late ' : ''}${a.ok ? 'ok' : 'refused'}`),
      ),
    );
  add('service', 'wallet claims (from codes on screen)', actTally('claim'));
  add('service', 'wallet payments (from codes on screen)', actTally('pay'));

  for (const h of run.chaos.hits()) {
    add(
      'faults',
      h.kind,
      `${count(h.hits)} requests hit (${count(h.rules)} rules): ${tally(h.targets)}`,
    );
  }
  const log = control.callbackLog;
  add(
    'callbacks',
    'queued by the service',
    `${count(log.filter((c) => c.copy === 0).length)} (+${count(log.filter((c) => c.copy > 0).length)} duplicate copies)`,
  );
  add('callbacks', 'outcomes', tally(tallyOf(log.map((c) => c.outcome))));
  add('callbacks', 'weather', tally(tallyOf(run.chaos.weathers)));

  for (const c of run.crashes) {
    add(
      'crashes',
      c.what === 'postgres' ? 'postgresql SIGKILL' : `${c.node} SIGKILL`,
      c.what === 'postgres'
        ? `down ${c.downMs} ms, then started again on its WAL`
        : `${c.opsInFlight} ops in flight, ${c.creatingLeft} intents left creating; serving again after ${c.downMs} ms`,
    );
  }
  const events = tallyOf(run.reports.map((r) => r.event));
  add(
    'game',
    'reports heard',
    `settled ${count(events.settled ?? 0)}, room hooks ${count(events.room ?? 0)}, unknown ${count(events.unknown ?? 0)}`,
  );

  journalFigures(run.books, add);

  for (const check of run.checks) {
    const verdict =
      check.violations.length === 0 ? 'ok' : `${count(check.violations.length)} VIOLATIONS`;
    const extra = [
      check.excused ? `${check.excused} excused (moved in the kill instant)` : '',
      check.note ?? '',
    ]
      .filter((x) => x !== '')
      .join('; ');
    add(
      'invariants',
      check.name,
      `${verdict} (${count(check.checked)} checked${extra ? `; ${extra}` : ''})`,
    );
  }
  return f;
}

type Add = (section: string, name: string, value: string) => void;

function msats(n: bigint): string {
  return `${n.toLocaleString('en-US')} msats`;
}

/** How a match ended: settled, or aborted and why (its timeout, the game, closing time). */
function endOf(match: Intent): string {
  const decision = (match.meta as unknown as MatchMeta).decision;
  if (match.status === 'completed') return 'settled';
  if (match.status !== 'failed') return `still ${match.status}`;
  const reason = decision?.reason ?? '';
  return reason.startsWith('timed out') ? 'timed out' : `aborted (${reason})`;
}

/** The matches: how many, how they ended, their money, and by which road it went. */
function matchFigures(run: SoakRun, add: Add): void {
  const { intents, endgame } = run;
  const matches = intents.filter((i) => i.kind === 'match');
  const byId = new Map(intents.map((i) => [i.id, i]));
  const roadOf = (m: Intent) =>
    m.description.startsWith('match api') ? 'server API' : 'room helper';
  add(
    'matches',
    'opened',
    `${count(matches.length)}: ${tally(tallyOf(matches.map((m) => `by the ${roadOf(m)}`)))}`,
  );
  add('matches', 'ended', tally(tallyOf(matches.map(endOf))));
  const decisions = matches
    .map((m) => (m.meta as unknown as MatchMeta).decision)
    .filter((d) => d !== undefined);
  const sum = (kind: 'settle' | 'abort', field: 'potMsat' | 'rakeMsat') =>
    decisions.filter((d) => d.kind === kind).reduce((s, d) => s + BigInt(d[field]), 0n);
  const raked = decisions.filter((d) => d.rakeMsat !== '0').length;
  add(
    'matches',
    'pots',
    `settled ${msats(sum('settle', 'potMsat'))} (rake ${msats(sum('settle', 'rakeMsat'))} from ${count(raked)} matches), aborted ${msats(sum('abort', 'potMsat'))} (refunded)`,
  );

  const fees = intents.filter((i) => i.kind === 'entryFee' && i.groupId !== null);
  const withAddress = fees.filter((f) => typeof f.meta.lnAddress === 'string').length;
  add(
    'matches',
    'fees',
    `${count(fees.length)} (${count(withAddress)} with an address): ${tally(tallyOf(fees.map((f) => f.status)))}`,
  );
  const matchActs = run.wallets.acts.filter((a) => a.match && a.kind === 'pay');
  const lateActs = matchActs.filter((a) => a.late && !a.second);
  const lateFate = lateActs.map((a) => {
    if (!a.ok) return 'refused by the service';
    const fee = byId.get(a.intentId);
    if (fee?.status === 'completed') {
      const match = fee.groupId === null ? undefined : byId.get(fee.groupId);
      const decision = match ? (match.meta as unknown as MatchMeta).decision : undefined;
      return decision?.paidFeeIds.includes(fee.id) ? 'accepted, in the pot' : 'accepted, refunded';
    }
    return `accepted, fee ${fee?.status ?? '?'}${fee?.meta.latePaymentReported === true ? ' (reported late)' : ''}`;
  });
  add(
    'matches',
    'fees paid late (after their deadline)',
    `${count(lateActs.length)}: ${tally(tallyOf(lateFate))}`,
  );
  const reportedLate = intents.filter((i) => i.meta.latePaymentReported === true).length;
  add('matches', 'fees reported paid after they expired', count(reportedLate));

  const pot2 = intents.filter((i) => fromPot(i));
  const road = (i: Intent) => (i.kind === 'payment' ? 'address' : 'claim code');
  const fate = (i: Intent) => {
    if (i.kind === 'payment') return `${road(i)} ${i.status}`;
    if (i.status === 'expired')
      return wasShown(i) ? 'code lapsed unclaimed' : 'code lost, never shown';
    return `code ${i.status === 'completed' ? 'claimed' : i.status}`;
  };
  for (const role of ['payout', 'refund'] as const) {
    const mine = pot2.filter((i) => i.meta.matchRole === role);
    const again = mine.filter((i) => attemptOf(i) > 1);
    add(
      'matches',
      `${role}s (attempts)`,
      `${count(mine.length)}: ${tally(tallyOf(mine.map(fate)))}; issued again: ${count(again.length)}`,
    );
    if (role === 'refund') {
      const why = mine
        .filter((i) => attemptOf(i) === 1)
        .map((i) => String(i.meta.why ?? '?').replace(/^match aborted: /, 'aborted: '));
      add('matches', '  ... why', tally(tallyOf(why)));
    }
  }
  const claimed = run.wallets.acts.filter((a) => a.match && a.kind === 'claim');
  add(
    'matches',
    'codes claimed from screens',
    `${tally(tallyOf(claimed.map((a) => `${a.late ? 'after the deadline ' : ''}${a.ok ? 'ok' : 'refused'}`)))}`,
  );
  add('matches', 'closing time (live rooms decide)', tally(tallyOf(endgame.closings)));
  add(
    'matches',
    'operator (unknown payments)',
    endgame.resolved.length === 0
      ? 'none'
      : tally(
          tallyOf(
            endgame.resolved.map(
              (r) =>
                `${r.status} (${r.note.startsWith('the service holds no') ? 'never reached the service' : 'as the service says'})`,
            ),
          ),
        ),
  );
  add(
    'matches',
    "time jumps (past the codes' deadlines)",
    endgame.jumps.length === 0
      ? 'none'
      : endgame.jumps.map((j) => seconds(j.to - j.from)).join(', '),
  );
}

/** What the journal holds at the end: its size and every class's balance. */
function journalFigures(books: Books, add: Add): void {
  if (books.error) {
    add('journal', 'entries', `none: ${books.error}`);
    return;
  }
  add(
    'journal',
    'entries',
    `${count(books.entries.length)}, ${count(books.byIntent.size)} intents read by id`,
  );
  const units = [...new Set(books.classes.map((b) => b.unit))];
  for (const unit of units) {
    const rows = books.classes.filter((b) => b.unit === unit);
    add(
      'journal',
      `balances (${unit})`,
      rows.map((b) => `${b.account} ${BigInt(b.balance).toLocaleString('en-US')}`).join(', '),
    );
  }
}
