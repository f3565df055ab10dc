/**
 * Benchmark 5's side by side (`--against REF`): one store of one checkout's ledger (`root`, this
 * tree or REF's in a temporary worktree), in a process of its own. Records `moves` rewards with
 * their creation posting (untimed), then times their move `creating -> pending` with its posting,
 * as the engine writes it: one at a time, then `inFlight` at once. Prints one JSON line.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

interface Task {
  root: string;
  store: 'sqlite-worker' | 'sqlite-inline' | 'postgres';
  /** A file for SQLite, a connection string for PostgreSQL. */
  where: string;
  /** PostgreSQL's schema, one per run. */
  schema?: string;
  moves: number;
  inFlight: number;
}

/** The few calls a checkout's ledger offers alike, old and new. */
interface Store {
  open(): Promise<void>;
  create(intent: unknown, now: number, guards: object, postings: unknown[]): Promise<Intent>;
  transition(id: string, from: string, to: string, options: object): Promise<Intent | null>;
  close(): Promise<void>;
}
type Intent = { id: string; status: string };
type Postings = (before: Intent | null, after: Intent, positionOf?: unknown) => unknown[];

const task = JSON.parse(process.argv[2] ?? '{}') as Task;
const load = (path: string) => import(pathToFileURL(join(task.root, path)).href);
const ledger = await load('src/ledger/index.ts');
const journal = await load('src/ledger/journal.ts');
const postingsFor = journal.postingsFor as Postings;
// Before the kinds held the money rule, the journal held it itself (two arguments).
const positionOf =
  postingsFor.length >= 3 ? (await load('src/server/kinds/index.ts')).positionOf : undefined;
const store: Store =
  task.store === 'postgres'
    ? new ledger.PostgresLedger(
        { connectionString: task.where, max: task.inFlight },
        {
          schema: task.schema,
        },
      )
    : new ledger.SqliteLedger({ path: task.where, worker: task.store === 'sqlite-worker' });
await store.open();

let n = 0;
async function createMany(count: number): Promise<Intent[]> {
  const made: Intent[] = [];
  for (let i = 0; i < count; i++) {
    const now = Date.now();
    const fields = {
      kind: 'reward',
      roomId: `room-${i % 100}`,
      playerId: `player-${n++ % 1_000}`,
      amount: '21000',
      unit: 'msats',
      description: 'bench',
      callbackToken: `${'t'.repeat(22)}${n}`,
      nextCheckAt: now + 60_000,
    };
    const draft = journal.draftOf(fields, now);
    made.push(await store.create(fields, now, {}, postingsFor(null, draft, positionOf)));
  }
  return made;
}

/** Moves per second, moving every intent to pending with its posting, `inFlight` at once. */
async function moveAll(intents: Intent[], inFlight: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < intents.length) {
      const intent = intents[next++] as Intent;
      const patch = { remoteId: `wr-${intent.id}`, code: `LNURL1${intent.id}` };
      const now = Date.now();
      const after = journal.afterWrite(intent, 'pending', patch, now);
      const moved = await store.transition(intent.id, 'creating', 'pending', {
        patch,
        now,
        postings: postingsFor(intent, after, positionOf),
      });
      if (moved?.status !== 'pending') throw new Error(`the move of ${intent.id} did not apply`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return (intents.length * 1000) / (performance.now() - started);
}

await moveAll(await createMany(100), task.inFlight); // warm up
const alone = await moveAll(await createMany(task.moves), 1);
const busy = await moveAll(await createMany(task.moves), task.inFlight);
await store.close();
console.log(JSON.stringify({ alone, busy }));
