/**
 * The path benchmark's game (bench/path.ts): one room of bench-game.ts on an in-memory ledger,
 * no `rateLimit`, the emulator in its own process. After warm-up rewards it measures one
 * `reward()` of the room's plugin, from the call to its entry, twice over:
 *
 * - the modules it runs in: V8's precise coverage (call counts, reset just before the call),
 *   each of `RUNS` calls apart; a module counts when a function of it ran in every one of them
 *   (a module seen in some only, a timer's, is listed apart);
 * - the calls that go up a layer: a logpoint (a breakpoint whose condition notes the stack and
 *   never pauses) on every function that ran, around one more call; a call goes up when its
 *   caller, the frame right under it, is a module of a lower layer (test/support/layers.ts).
 *
 * Args: <emulatorUrl> <apiKey>. Prints one JSON line: `{ modules, functions, sometimes, upCalls }`.
 */
import { Session } from 'node:inspector/promises';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { layerOf } from '../../test/support/layers.js';
import { reply, startBenchGame } from './bench-game.js';

const RUNS = 5;
const WARM_UP = 300;
const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

const [emulatorUrl, apiKey] = process.argv.slice(2);
const game = await startBenchGame({
  emulatorUrl: emulatorUrl as string,
  apiKey: apiKey as string,
  ledger: ':memory:',
  rooms: 1,
  patchRate: 50,
  // A catch-up round reads every open entry of the room: a timer's work, not the call's.
  catchUpMs: 0,
});
const room = game.rooms[0] as (typeof game.rooms)[number];
let players = 0;
const reward = () =>
  room.plugins.lightning.reward(`path-player-${players++}`, {
    amountMsat: 10_000,
    description: 'path',
  });

/** The module under src/ of a script URL or stack path (`server/engine.ts`), or null. */
function srcModule(location: string): string | null {
  const path = location.startsWith('file://') ? fileURLToPath(location) : location;
  const rel = relative(SRC, path).replaceAll('\\', '/');
  return rel.startsWith('..') || rel.startsWith('/') || !rel.endsWith('.ts') ? null : rel;
}

interface Ran {
  scriptId: string;
  module: string;
  name: string;
  startOffset: number;
}

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
// Precise coverage runs unoptimized code: warm up under it, so every path is compiled as it runs.
for (let i = 0; i < WARM_UP; i++) await reward();

/** The functions of src/ that ran in one call (counts reset by the take before it). */
async function oneCall(): Promise<Ran[]> {
  await session.post('Profiler.takePreciseCoverage');
  await reward();
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const ran: Ran[] = [];
  for (const script of result) {
    const module = srcModule(script.url);
    if (module === null) continue;
    for (const fn of script.functions) {
      const range = fn.ranges[0];
      // The module's own top level ran when it was loaded, not in this call.
      if (range === undefined || range.count === 0 || range.startOffset === 0) continue;
      // tsx's helper that names each function as it is made: the transform's, not ours.
      if (fn.functionName === '__name') continue;
      ran.push({
        scriptId: script.scriptId,
        module,
        name: fn.functionName,
        startOffset: range.startOffset,
      });
    }
  }
  return ran;
}

const runs: Ran[][] = [];
for (let i = 0; i < RUNS; i++) runs.push(await oneCall());
await session.post('Profiler.stopPreciseCoverage');
const key = (r: Ran) => `${r.module}@${r.startOffset}`;
const everyRun = (runs[0] ?? []).filter((r) =>
  runs.every((run) => run.some((o) => key(o) === key(r))),
);
const modules = [...new Set(everyRun.map((r) => r.module))].sort();
/** What ran in each module, by function name. */
const functions = Object.fromEntries(
  modules.map((m) => [
    m,
    [...new Set(everyRun.filter((r) => r.module === m).map((r) => r.name || '(anonymous)'))],
  ]),
);
const sometimes = [
  ...new Set(
    runs
      .flat()
      .map((r) => r.module)
      .filter((m) => !modules.includes(m)),
  ),
].sort();

// The calls up a layer: a logpoint at the start of every function that ran in every call.
const stacks: [string, string][] = [];
(globalThis as { __pathStacks?: [string, string][] }).__pathStacks = stacks;
Error.stackTraceLimit = 100;
await session.post('Debugger.enable');
const sources = new Map<string, string>();
for (const fn of everyRun) {
  let source = sources.get(fn.scriptId);
  if (source === undefined) {
    source = (await session.post('Debugger.getScriptSource', { scriptId: fn.scriptId }))
      .scriptSource;
    sources.set(fn.scriptId, source);
  }
  const before = source.slice(0, fn.startOffset).split('\n');
  await session.post('Debugger.setBreakpoint', {
    location: {
      scriptId: fn.scriptId,
      lineNumber: before.length - 1,
      columnNumber: (before.at(-1) ?? '').length,
    },
    condition: `(globalThis.__pathStacks.push([${JSON.stringify(fn.module)}, new Error().stack]), false)`,
  });
}
await reward();
await session.post('Debugger.disable');
session.disconnect();

/** One stack line: its function's name, its module under src/ (or null), whether it is awaited. */
function frame(line: string): { name: string; module: string | null; awaited: boolean } | null {
  const m = /^\s*at (async )?(?:(.*?) \()?(.+?):\d+:\d+\)?$/.exec(line);
  if (!m) return null;
  return {
    awaited: m[1] !== undefined,
    name: m[2] ?? '(anonymous)',
    module: srcModule(m[3] ?? ''),
  };
}

const upCalls = new Set<string>();
for (const [module, stack] of stacks) {
  const frames = stack
    .split('\n')
    .slice(1)
    .map(frame)
    .filter((f) => f !== null);
  const at = frames.findIndex((f) => f.module === module);
  const callee = frames[at];
  if (callee === undefined) continue;
  // Its caller is the frame right under it; a call a library makes (zod running a schema's
  // transform) is the library's, and an awaiting frame is a continuation, not a caller.
  const caller = frames[at + 1];
  if (caller === undefined || caller.awaited || caller.module === null) continue;
  if (layerOf(caller.module) < layerOf(module)) {
    upCalls.add(`${caller.module} ${caller.name} -> ${module} ${callee.name}`);
  }
}

reply({ modules, functions, sometimes, upCalls: [...upCalls].sort() });
await game.stop();
process.exit(0);
