/**
 * The SQLite ledger's worker thread: SQL, commits and their fsync off the game's event loop.
 * Group commit: the calls that queued up meanwhile run in one transaction, each in a savepoint
 * of its own, so a burst costs one fsync and each call still fails alone.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { SqliteCore } from './sqlite-core.js';
import { openLedgerDatabase } from './sqlite-schema.js';
import {
  type Answer,
  type Call,
  encodeError,
  type Hello,
  type WorkerInit,
} from './sqlite-thread.js';

/** The most calls one commit covers: bounds the latency a call adds to the others of its batch. */
const MAX_BATCH = 64;

const port = parentPort;
if (port === null) throw new Error('sqlite-worker.ts runs as a worker thread only');
const init = workerData as WorkerInit;

let core: SqliteCore | undefined;
try {
  core = new SqliteCore(openLedgerDatabase(init.path, init.busyTimeoutMs));
  port.postMessage({ ready: true } satisfies Hello);
} catch (err) {
  port.postMessage({ ready: false, error: encodeError(err) } satisfies Hello);
}

function run(target: SqliteCore, call: Call): Answer {
  try {
    if ('close' in call) return { id: call.id, ok: true, value: target.close() };
    const method = target[call.method] as (...args: unknown[]) => unknown;
    return { id: call.id, ok: true, value: method.apply(target, call.args) };
  } catch (err) {
    return { id: call.id, ok: false, error: encodeError(err) };
  }
}

port.on('message', (first: Call) => {
  if (core === undefined) return;
  const target = core;
  const calls: Call[] = [first];
  while (calls.length < MAX_BATCH && !('close' in (calls.at(-1) as Call))) {
    const next = receiveMessageOnPort(port);
    if (next === undefined) break;
    calls.push(next.message as Call);
  }
  const work = calls.filter((c) => !('close' in c));
  let answers: Answer[] = [];
  try {
    if (work.length > 1) target.batch(() => (answers = work.map((call) => run(target, call))));
    else answers = work.map((call) => run(target, call));
  } catch (err) {
    // The lock could not be had, or the commit failed: nothing of the batch was kept.
    answers = work.map((call) => ({ id: call.id, ok: false, error: encodeError(err) }));
  }
  const close = calls.find((c) => 'close' in c);
  if (close !== undefined) {
    answers.push(run(target, close));
    // The caller ends the thread once it has this answer (Worker.terminate).
    core = undefined;
  }
  for (const answer of answers) port.postMessage(answer);
});
