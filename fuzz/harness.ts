/**
 * Runs one fuzz target: fast-check feeds it bad inputs, and after each one the harness checks
 * what the outside world saw. A bad input passes when the call rejected with a typed error (or
 * the route answered 4xx) and nothing was sent to the service, nothing was written to the
 * ledger and no event fired; a target passes when, besides, no promise rejection went
 * unhandled while it ran. The first input that breaks a rule is shrunk by fast-check and
 * reported with its seed, so that `FUZZ_SEED` replays it.
 *
 * Cost: the target's own call per input, plus three counter reads.
 */
import fc from 'fast-check';
import { InvalidArgumentError } from '../src/errors.js';

/** What one input came to: a label to count it under, or what went wrong. */
export type Outcome = { label: string } | { problem: string };

export interface Target<T = unknown> {
  /** `api.payments.get`, `lightning.reward`, `room.openWidget`, `route POST /callbacks/:token`. */
  name: string;
  inputs: fc.Arbitrary<T>;
  attempt(input: T): Promise<Outcome>;
}

/** What the outside world has seen so far; each only ever grows. */
export interface Counters {
  /** Requests that reached the service. */
  requests: number;
  /** Calls of the ledger's writing methods. */
  writes: number;
  /** Events the lightning object emitted. */
  events: number;
  /** Promise rejections nobody handled, and exceptions nobody caught (a listener's throw). */
  unhandled: number;
}

export interface Report {
  name: string;
  runs: number;
  /** How many inputs ended in each way (`LN_INVALID_ARGUMENT`, `404`). */
  outcomes: Record<string, number>;
  requests: number;
  writes: number;
  events: number;
  unhandled: number;
  ms: number;
  seed: number;
  /** fast-check's report of the first failing input, shrunk; absent when every input passed. */
  failure?: string;
}

export interface RunOptions {
  runs: number;
  seed?: number | undefined;
}

/**
 * The outcome of a call that must refuse its input: a promise (never a synchronous throw)
 * that rejects with an InvalidArgumentError.
 */
export async function refusal(call: () => unknown): Promise<Outcome> {
  let result: unknown;
  try {
    result = call();
  } catch (err) {
    return { problem: `threw synchronously: ${describe(err)}` };
  }
  if (!(result instanceof Promise)) return { problem: `returned ${describe(result)}, no promise` };
  try {
    await result;
  } catch (err) {
    if (err instanceof InvalidArgumentError) return { label: err.code };
    return { problem: `rejected with ${describe(err)}` };
  }
  return { problem: 'accepted the input' };
}

export function describe(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`.slice(0, 300);
  try {
    return String(value).slice(0, 300);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** One macrotask turn: Node reports the rejections left unhandled by then. */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export async function runTarget<T>(
  target: Target<T>,
  counters: () => Counters,
  options: RunOptions,
): Promise<Report> {
  const outcomes: Record<string, number> = {};
  const start = counters();
  const started = performance.now();
  const property = fc.asyncProperty(target.inputs, async (input) => {
    const before = counters();
    const outcome = await target.attempt(input);
    const after = counters();
    if ('problem' in outcome) throw new Error(outcome.problem);
    for (const what of ['requests', 'writes', 'events'] as const) {
      const more = after[what] - before[what];
      if (more > 0) throw new Error(`${outcome.label}, but ${more} ${what} happened`);
    }
    outcomes[outcome.label] = (outcomes[outcome.label] ?? 0) + 1;
  });
  const details = await fc.check(property, {
    numRuns: options.runs,
    ...(options.seed === undefined ? {} : { seed: options.seed }),
  });
  // A rejection left unhandled by the last input is reported after the current turn.
  await turn();
  await turn();
  const end = counters();
  const report: Report = {
    name: target.name,
    runs: details.numRuns,
    outcomes,
    requests: end.requests - start.requests,
    writes: end.writes - start.writes,
    events: end.events - start.events,
    unhandled: end.unhandled - start.unhandled,
    ms: Math.round(performance.now() - started),
    seed: details.seed,
  };
  if (details.failed) {
    const why = details.errorInstance instanceof Error ? details.errorInstance.message : 'failed';
    const example = fc.stringify(details.counterexample);
    report.failure = [
      `what happened: ${why}`,
      `input (shrunk): ${example.length > 600 ? `${example.slice(0, 600)}…` : example}`,
      `replay: FUZZ_SEED=${details.seed} npm run fuzz -- --only '${target.name}' --runs ${options.runs}`,
    ].join('\n');
  } else if (report.unhandled > 0) report.failure = `${report.unhandled} unhandled rejection(s)`;
  return report;
}

/** Whether a report shows every rule kept. */
export function passed(report: Report): boolean {
  return (
    report.failure === undefined &&
    report.requests === 0 &&
    report.writes === 0 &&
    report.events === 0 &&
    report.unhandled === 0
  );
}

/** One line per target: what was fed, what came back, what leaked. */
export function formatReports(reports: Report[]): string {
  const lines = reports.map((r) => {
    const outcomes = Object.entries(r.outcomes)
      .sort((a, b) => b[1] - a[1])
      .map(([label, n]) => `${label}×${n}`)
      .join(' ');
    const verdict = passed(r) ? 'ok  ' : 'FAIL';
    return `${verdict} ${r.name.padEnd(44)} ${String(r.runs).padStart(6)} inputs  sent ${r.requests}  written ${r.writes}  events ${r.events}  unhandled ${r.unhandled}  ${String(r.ms).padStart(6)} ms  ${outcomes}`;
  });
  for (const r of reports) {
    if (r.failure) lines.push('', `${r.name} (seed ${r.seed}):`, r.failure);
  }
  return lines.join('\n');
}
