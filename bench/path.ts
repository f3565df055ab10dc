/**
 * Benchmark 10, a reward's path (issue 33): the modules of src/ one room `reward()` runs in,
 * from the plugin's helper to the room's entry, and the calls on it that go up a layer. Two
 * processes: the emulator and the game (children/path-game.ts, which measures; its header
 * says how). Not a timing: a count, the same on any machine.
 */
import { type Child, startChild } from './support/child.js';
import type { Row } from './support/table.js';

/** Issue 33: at most 15 modules, and no call up a layer. */
const GOAL_MODULES = 15;

interface PathAnswer {
  modules: string[];
  functions: Record<string, string[]>;
  sometimes: string[];
  upCalls: string[];
}

/** The module's folder, as docs/ARCHITECTURE.md names the layers (the root files: leaves). */
function groupOf(module: string): string {
  if (module === 'lightning.ts') return 'face';
  const slash = module.indexOf('/');
  return slash < 0 ? 'leaves' : module.slice(0, slash);
}

export async function benchPath(): Promise<{ rows: Row[]; lines: string[] }> {
  const emulator = await startChild<{ url: string; apiKey: string }>(
    new URL('./children/emulator.ts', import.meta.url),
    ['--drop-callbacks'],
  );
  let game: Child<PathAnswer> | undefined;
  try {
    game = await startChild<PathAnswer>(new URL('./children/path-game.ts', import.meta.url), [
      emulator.info.url,
      emulator.info.apiKey,
    ]);
    const { modules, functions, sometimes, upCalls } = game.info;
    const groups = new Map<string, string[]>();
    for (const module of modules) {
      const group = groupOf(module);
      groups.set(group, [...(groups.get(group) ?? []), module]);
    }
    const byLayer = [...groups].map(([group, in_]) => `${group} ${in_.length}`).join(', ');
    const lines = [
      ...[...groups].flatMap(([group, in_]) => [
        `${group} (${in_.length}):`,
        ...in_.map((m) => `  ${m}: ${(functions[m] ?? []).join(', ')}`),
      ]),
      ...(sometimes.length > 0 ? [`in some calls only (timers): ${sometimes.join(', ')}`] : []),
      ...(upCalls.length > 0 ? upCalls.map((c) => `up a layer: ${c}`) : ['no call up a layer']),
    ];
    const met = modules.length <= GOAL_MODULES && upCalls.length === 0;
    return {
      rows: [
        {
          bench: '10 path',
          subject: 'room reward(): modules from the helper to the entry',
          value: String(modules.length),
          limit: `${GOAL_MODULES} modules`,
          goal: { text: `<= ${GOAL_MODULES} modules, no call up a layer`, met },
          detail: `${byLayer}; ${upCalls.length} call(s) up a layer`,
        },
      ],
      lines,
    };
  } finally {
    await game?.stop();
    await emulator.stop();
  }
}
