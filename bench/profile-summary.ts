/**
 * @module bench/profile-summary
 * Summarises a V8 `.cpuprofile` (e.g. from `BENCH_CPU_PROF=<dir>`, which
 * starts every benchmark child with `--cpu-prof`): share of sampled time by
 * area (Voicegate's own modules, each dependency, Node internals, GC, idle),
 * then the top functions by self time and by total (inclusive) time.
 * Run: `node dist/bench/profile-summary.js <file.cpuprofile> [top N]`.
 */
import { readFileSync } from 'node:fs';
import { isMain } from './lib/load.js';
import { markdownTable, num } from './lib/table.js';

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

/** Where a function lives: `src/<dir>`, a package name, `node:internal`, or V8's own pseudo-frames. */
export function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const own = /\/dist\/(src|bench)\/([^/]+)/.exec(url);
  if (own) return `${own[1]}/${own[2].replace(/\.js$/, '')}`;
  if (url.startsWith('node:')) return 'node:internal';
  return url;
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.replace(/^.*\/(node_modules|dist)\//, '').replace(/^node:internal\//, 'node:');
  return `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
}

export function summarise(profile: Profile, top = 15): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(id, (self.get(id) ?? 0) + dt);
    total += dt;
  });
  const idle = [...self].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((n, [, t]) => n + t, 0);
  const busy = total - idle;

  const areas = new Map<string, number>();
  const selfByLabel = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, time] of self) {
    const node = byId.get(id)!;
    const area = areaOf(node.callFrame.url, node.callFrame.functionName);
    areas.set(area, (areas.get(area) ?? 0) + time);
    selfByLabel.set(label(node), (selfByLabel.get(label(node)) ?? 0) + time);
    // Inclusive: charge every distinct function on the stack once.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = label(byId.get(at)!);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + time);
    }
  }
  const pct = (t: number) => `${num((100 * t) / busy, 1)} %`;
  const sorted = (m: Map<string, number>) => [...m].filter(([k]) => k !== '(idle)' && k !== '(root)').sort((a, b) => b[1] - a[1]);
  return [
    `Sampled ${num(total / 1e6, 2)} s, of which busy ${num(busy / 1e6, 2)} s (${num((100 * busy) / total, 0)} %); shares below are of busy time.`,
    '',
    markdownTable(['Area', 'Self time'], sorted(areas).slice(0, top).map(([k, t]) => [k, pct(t)])),
    '',
    markdownTable(['Function (self time)', 'Self'], sorted(selfByLabel).slice(0, top).map(([k, t]) => [k, pct(t)])),
    '',
    markdownTable(['Function (total time)', 'Total'], sorted(inclusive).slice(0, top).map(([k, t]) => [k, pct(t)])),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node dist/bench/profile-summary.js <file.cpuprofile> [top N]');
    process.exit(2);
  }
  console.log(summarise(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(top) || 15));
}
