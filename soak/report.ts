/**
 * Turns a soak run into its figures: what was asked and answered, how the ledger ended every
 * intent and by which road, what the service holds, which faults hit how many requests, what
 * became of the callbacks, the two crashes, what the game heard, and each invariant's verdict.
 */
import { count, type Figure, percentile, seconds, tally, tallyOf } from './figures.js';
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
    )} rooms (the restarted process's included), 1 redis-server (AOF always), 1 emulator`,
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

  add('ops', 'asked', count(ops.length));
  for (const kind of ['reward', 'fee', 'spend'] as const) {
    const mine = ops.filter((x) => x.kind === kind);
    const ok = mine.filter((x) => x.ok).length;
    const errors = tallyOf(mine.filter((x) => !x.ok).map((x) => x.error ?? '?'));
    add('ops', kind, `${count(mine.length)}: ok ${count(ok)}; refused or lost: ${tally(errors)}`);
  }
  const latency = ops.filter((x) => x.ok).map((x) => x.ms);
  add(
    'ops',
    'answer time (ok)',
    `p50 ${percentile(latency, 0.5).toFixed(0)} ms, p99 ${percentile(latency, 0.99).toFixed(0)} ms, max ${Math.max(0, ...latency).toFixed(0)} ms`,
  );

  add('ledger', 'intents', count(intents.length));
  for (const kind of ['reward', 'entryFee', 'spend'] as const) {
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
      c.what === 'redis'
        ? 'redis-server SIGKILL'
        : c.what === 'postgres'
          ? 'postgresql SIGKILL'
          : `${c.node} SIGKILL`,
      c.what === 'redis'
        ? `down ${c.downMs} ms, then started again on its AOF`
        : c.what === 'postgres'
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
