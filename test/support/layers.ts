/**
 * The layers of src/ (docs/ARCHITECTURE.md), lower first: a module may import its own layer and
 * the ones before it. Read by test/architecture.test.ts (imports point down) and by the path
 * benchmark (bench/path.ts: the calls of one reward that go up a layer).
 */
export const LAYERS: [string, number][] = [
  ['clock.ts', 0],
  ['parse.ts', 0],
  ['ids.ts', 0],
  ['id-input.ts', 0],
  ['errors.ts', 0],
  ['version.ts', 0],
  ['node-version.ts', 0],
  ['require-node.ts', 0],
  ['port/', 1],
  ['api/', 2],
  ['client/', 2],
  ['ledger/', 2],
  ['emulator/', 3],
  ['server/', 4],
  ['room/', 5],
  ['operator/', 5],
  ['face/', 6],
  ['lightning.ts', 6],
  ['index.ts', 7],
];

/** The layer of a module under src/ (`server/engine.ts`). */
export function layerOf(file: string): number {
  const found = LAYERS.find(([prefix]) => file === prefix || file.startsWith(prefix));
  if (!found) throw new Error(`${file} is in no layer: add it to LAYERS`);
  return found[1];
}
