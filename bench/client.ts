/**
 * Benchmark 1, client overhead: `withdrawalRequests.get` of our client against a minimal
 * loopback server in a child process (one fixed envelope), side by side with the limit (raw
 * `undici.request` + `JSON.parse`, no validation) and the official SDKs `@zbd/node` and
 * `@zbddev/payments-sdk`, all at the same concurrency. Rounds are interleaved (each round
 * runs every subject once, in rotating order) and medians are taken, so background load on
 * a shared machine hits all subjects alike. Besides requests per second and latency, the
 * load generator's own CPU time per request is reported: it is the client's cost even when
 * the server, not the client, is the bottleneck. Last, the same call against an in-process
 * dispatcher that answers at once isolates what our code adds (no network, no kernel): the
 * steadiest figure on a busy machine.
 */

import { addAbortListener } from 'node:events';
import { zbd } from '@zbd/node';
import ZbdPayments from '@zbddev/payments-sdk';
import { type Dispatcher, request } from 'undici';
import { PaymentsApi } from '../src/api/client.js';
import { startChild } from './support/child.js';
import { median, percentile, rotate, Samples } from './support/stats.js';
import { int, ms, type Row, ratio } from './support/table.js';

export interface ClientBenchOptions {
  seconds?: number;
  rounds?: number;
  concurrency?: number;
}

interface Subject {
  name: string;
  get: (id: string) => Promise<unknown>;
  close?: () => Promise<unknown>;
}

interface Round {
  rps: number;
  p50: number;
  p99: number;
  cpuUsPerRequest: number;
}

export interface ClientResult {
  subject: string;
  rps: number;
  p50: number;
  p99: number;
  cpuUsPerRequest: number;
  /** Median over rounds of this subject's req/s over the limit's in the same round. */
  share: number;
}

const API_KEY = 'bench-api-key-0123456789';
const ID = '5d6e7b2c-3a6f-4b8e-9f4d-2a1c0e9b8f71';
export const LIMIT = 'undici.request + JSON.parse (limit)';
export const OURS = 'colyseus-lightning PaymentsApi';
const GOAL = 0.9;

function subjects(url: string): Subject[] {
  const ours = new PaymentsApi({ apiKey: API_KEY, baseUrl: url });
  const zbdNode = new zbd(API_KEY, url);
  const payments = new ZbdPayments({ apikey: API_KEY, baseURL: url });
  return [
    {
      name: LIMIT,
      get: async (id) => {
        const res = await request(`${url}/v0/withdrawal-requests/${id}`, {
          headers: { apikey: API_KEY },
        });
        return JSON.parse(await res.body.text());
      },
    },
    { name: OURS, get: (id) => ours.withdrawalRequests.get(id), close: () => ours.close() },
    { name: '@zbd/node (fetch)', get: (id) => zbdNode.getWithdrawalRequest(id) },
    { name: '@zbddev/payments-sdk (fetch)', get: (id) => payments.withdrawalRequests.retrieve(id) },
  ];
}

/** Keeps `concurrency` calls in flight for `seconds`; latency per call, CPU of this process. */
async function load(subject: Subject, seconds: number, concurrency: number): Promise<Round> {
  const samples = new Samples();
  let failures = 0;
  let firstError: unknown;
  const deadline = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const started = performance.now();
      try {
        await subject.get(ID);
        samples.push(performance.now() - started);
      } catch (err) {
        failures++;
        firstError ??= err;
      }
    }
  };
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  if (failures > 0)
    throw new Error(`${subject.name}: ${failures} failed calls`, { cause: firstError });
  const values = samples.values();
  return {
    rps: values.length / elapsed,
    p50: percentile(values, 0.5),
    p99: percentile(values, 0.99),
    cpuUsPerRequest: (used.user + used.system) / values.length,
  };
}

/**
 * A dispatcher that answers every request at once with `text`, handling `signal` as undici
 * does (a listener added for the request, removed once the body is read).
 */
function answeringDispatcher(text: string) {
  return {
    async request(options: { signal?: unknown }) {
      const signal = options.signal as
        | AbortSignal
        | { once(e: string, f: () => void): void; removeListener(e: string, f: () => void): void }
        | undefined;
      const listener = () => {};
      let off = () => {};
      if (signal && 'aborted' in signal) {
        const disposable = addAbortListener(signal, listener);
        off = () => disposable[Symbol.dispose]();
      } else if (signal) {
        signal.once('abort', listener);
        off = () => signal.removeListener('abort', listener);
      }
      return {
        statusCode: 200,
        headers: {},
        body: {
          text: async () => {
            off();
            return text;
          },
        },
      };
    },
    close: async () => {},
  };
}

/** Microseconds per call with 32 in flight, CPU-bound in this process. */
async function inProcess(call: () => Promise<unknown>, calls: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < calls; i += 32) await Promise.all(Array.from({ length: 32 }, call));
  return ((performance.now() - started) * 1000) / calls;
}

/** What our client adds per call over `JSON.parse`, with nothing on the wire. */
async function ownCost(text: string, rounds: number) {
  const dispatcher = answeringDispatcher(text);
  const api = new PaymentsApi({
    apiKey: API_KEY,
    baseUrl: 'http://127.0.0.1:9',
    dispatcher: dispatcher as unknown as Dispatcher,
  });
  const plain = async () => {
    const res = await dispatcher.request({});
    return JSON.parse(await res.body.text());
  };
  const ours = () => api.withdrawalRequests.get(ID);
  const calls = 40_000;
  await inProcess(plain, calls);
  await inProcess(ours, calls);
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < rounds; i++) {
    a.push(await inProcess(plain, calls));
    b.push(await inProcess(ours, calls));
  }
  await api.close();
  return { plain: median(a), ours: median(b) };
}

export async function benchClient(options: ClientBenchOptions = {}): Promise<{
  rows: Row[];
  results: ClientResult[];
}> {
  const seconds = options.seconds ?? 1.5;
  const rounds = options.rounds ?? 8;
  const concurrency = options.concurrency ?? 32;
  const server = await startChild<{ url: string; bytes: number }>(
    new URL('./children/envelope-server.ts', import.meta.url),
  );
  const list = subjects(server.info.url);
  try {
    // Every subject must get the envelope's data (the SDKs may hand back the whole envelope).
    for (const s of list) {
      const answer = (await s.get(ID)) as { id?: string; data?: { id?: string } };
      if ((answer.id ?? answer.data?.id) !== ID) throw new Error(`${s.name}: wrong answer`);
    }
    for (const s of list) await load(s, 0.5, concurrency); // warm-up: JIT, connections
    const perSubject = new Map<string, Round[]>(list.map((s) => [s.name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const s of rotate(list, round)) {
        perSubject.get(s.name)?.push(await load(s, seconds, concurrency));
      }
    }
    const limitRounds = perSubject.get(LIMIT) ?? [];
    const results: ClientResult[] = list.map((s) => {
      const r = perSubject.get(s.name) ?? [];
      return {
        subject: s.name,
        rps: median(r.map((x) => x.rps)),
        p50: median(r.map((x) => x.p50)),
        p99: median(r.map((x) => x.p99)),
        cpuUsPerRequest: median(r.map((x) => x.cpuUsPerRequest)),
        // Paired per round: neighbours in time share the machine's background load.
        share: median(r.map((x, i) => x.rps / (limitRounds[i]?.rps ?? Number.NaN))),
      };
    });
    const limitRps = results.find((r) => r.subject === LIMIT)?.rps ?? Number.NaN;
    const rows: Row[] = results.map((r) => {
      const share = r.share;
      const row: Row = {
        bench: '1 client',
        subject: r.subject,
        value: `${int(r.rps)} req/s`,
        detail: `p50 ${ms(r.p50)}, p99 ${ms(r.p99)}, ${r.cpuUsPerRequest.toFixed(0)} µs CPU/req`,
        ratio: ratio(share),
      };
      if (r.subject !== LIMIT) row.limit = `${int(limitRps)} req/s (the limit)`;
      if (r.subject === OURS) row.goal = { text: `>= ${GOAL}`, met: share >= GOAL };
      if (r.subject === LIMIT)
        row.note = `the limit; ${concurrency} in flight, ${rounds}x${seconds}s, medians`;
      return row;
    });
    const envelope = await (
      await request(`${server.info.url}/v0/withdrawal-requests/${ID}`)
    ).body.text();
    const own = await ownCost(envelope, rounds);
    rows.push({
      bench: '1 client',
      subject: 'in-process: dispatcher + JSON.parse',
      value: `${own.plain.toFixed(2)} µs/call`,
      note: 'no network: an answering dispatcher',
    });
    rows.push({
      bench: '1 client',
      subject: 'in-process: PaymentsApi (validation on)',
      value: `${own.ours.toFixed(2)} µs/call`,
      limit: `${own.plain.toFixed(2)} µs/call (dispatcher + JSON.parse)`,
      ratio: ratio(own.plain / own.ours),
      note: `adds ${(own.ours - own.plain).toFixed(2)} µs per call`,
    });
    return { rows, results };
  } finally {
    for (const s of list) await s.close?.();
    await server.stop();
  }
}
