/**
 * Names the top costs of a V8 CPU profile (`node --cpu-prof`, or the inspector's): self time
 * per package or source folder, self time per function, and inclusive time of our own
 * functions (src/). Percentages are of busy time: idle, and the profiler's own work, are left
 * out.
 *
 *   node --import tsx bench/support/profile-summary.ts CPU.*.cpuprofile [top=25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function where(url: string): string {
  if (url === '') return '(native/vm)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  if (url.startsWith('node:')) return url;
  const src = /\/((?:src|bench|test)\/[^/]+)/.exec(url);
  return src ? (src[1] as string) : url;
}

function label(node: ProfileNode): string {
  const f = node.callFrame;
  const file = f.url.split('/').slice(-2).join('/');
  return `${f.functionName || '(anonymous)'} ${file}`;
}

const notBusy = (node: ProfileNode) =>
  node.callFrame.functionName === '(idle)' ||
  node.callFrame.functionName === '(program)' ||
  node.callFrame.url.startsWith('node:inspector');

export function summarize(profile: Profile, top = 25): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  const ours = new Map<string, number>();
  let total = 0;
  for (const [id, t] of self) {
    const node = byId.get(id) as ProfileNode;
    if (notBusy(node)) continue;
    total += t;
    byFunction.set(label(node), (byFunction.get(label(node)) ?? 0) + t);
    const place = where(node.callFrame.url);
    byPlace.set(place, (byPlace.get(place) ?? 0) + t);
    // Inclusive time of each of our functions on this stack, counted once per stack.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const frame = byId.get(cur) as ProfileNode;
      if (!/\/src\//.test(frame.callFrame.url)) continue;
      const key = label(frame);
      if (seen.has(key)) continue;
      seen.add(key);
      ours.set(key, (ours.get(key) ?? 0) + t);
    }
  }
  const fmt = (entries: Map<string, number>, n: number) =>
    [...entries]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, t]) => `${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`);
  return [
    `${(total / 1000).toFixed(0)} ms busy (idle and the profiler left out)`,
    '-- self time by package / folder',
    ...fmt(byPlace, Math.ceil(top / 2)),
    '-- self time by function',
    ...fmt(byFunction, top),
    '-- inclusive time of our functions (src/)',
    ...fmt(ours, top),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, top] = process.argv.slice(2);
  if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [top]');
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  for (const line of summarize(profile, Number(top ?? 25))) console.log(line);
}
