/**
 * Names the top costs of a V8 CPU profile (`node --cpu-prof`): self time per function, and
 * self time per package or source folder.
 *
 *   node --import tsx bench/support/profile-summary.ts CPU.*.cpuprofile [top=25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
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

export function summarize(profile: Profile, top = 25): string[] {
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const t = self.get(node.id) ?? 0;
    total += t;
    const f = node.callFrame;
    const file = f.url.split('/').slice(-2).join('/');
    const key = `${f.functionName || '(anonymous)'} ${file}:${f.lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + t);
    const place = where(f.url);
    byPlace.set(place, (byPlace.get(place) ?? 0) + t);
  }
  const fmt = (entries: Map<string, number>) =>
    [...entries]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, t]) => `${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`);
  return [
    `total ${(total / 1000).toFixed(0)} ms sampled`,
    '-- self time by package / folder',
    ...fmt(byPlace),
    '-- self time by function',
    ...fmt(byFunction),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, top] = process.argv.slice(2);
  if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [top]');
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  for (const line of summarize(profile, Number(top ?? 25))) console.log(line);
}
