/**
 * @module test/layers
 * The folders of `src/` point one way (docs/ARCHITECTURE.md, "Layers"). Each
 * folder, and each file at the top of `src/`, has a rank in `LAYERS`; a file
 * imports from its own folder or from a layer below its own, never from one
 * above it or beside it. And no file reaches itself again through its
 * imports: the import graph of `src/` has no circle, whatever the folders.
 *
 * The graph is read from the source `.ts` files, every relative specifier
 * (static, dynamic, `export … from`, `import type`) resolved to the `.ts`
 * file its `.js` names. Unit tests (`*.test.ts`) are left out: nothing
 * imports them, and they may use helpers from `test/`.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const src = join(root, 'src');

/**
 * The layers, top to bottom. A name is a folder of `src/`, or a file at its top without `.ts`.
 * Names in one row share a rank: they may not import each other.
 */
const LAYERS: readonly (readonly string[])[] = [
  // The command, and assembly: a server from config, and every route registered on it.
  ['main'],
  ['cli'],
  ['app'],
  // Warm before ready: requests through the synthesis routes, in-process, before listening.
  ['warm-up'],
  ['routes'],
  // The OpenAPI document: hand-written zod schemas and a table of paths.
  ['openapi'],
  // Routes per dialect: parse into a SpeechInput, frame what comes out.
  ['api'],
  // What the routes are handed (built by app.ts), and the playground and console pages they serve.
  ['services', 'playground', 'console'],
  // Readers of the diagnostics events: metrics (which also reads activity), traces, activity, request logs.
  ['metrics', 'tracing'],
  ['concurrency', 'request-log'],
  // The transport: Fastify instance, request ids, error envelope, bodies, TLS, the synthesis route adapter.
  ['http'],
  // Long-form jobs: the queue's runner, segments, stitching, webhooks; a job runs through the core below.
  ['jobs'],
  // Accounts implement the gate; the change bus carries their changes between servers.
  ['cluster'],
  ['accounts'],
  // The core: session, gate interface, resolve, pipeline, billing policy, diagnostics events.
  ['synthesis'],
  // Blob storage implementations beyond the folder (an S3-compatible bucket), chosen from the config.
  ['storage'],
  // The audio cache: key, memory and disk tiers on blob storage, single flight; the session uses it.
  // Webhooks: signing, the SSRF guard, delivery from an outbox (jobs' ends, usage alerts).
  ['cache', 'webhooks'],
  // What the core stands on. The config schema is built from each engine type's registration,
  // so config sits above engines, and what sits below it is handed values, never the config.
  ['models', 'limits'],
  ['config'],
  ['engines'],
  ['voices'],
  ['store', 'audio', 'redis', 'captions'],
  ['log'],
  ['errors'],
];

const rank = new Map<string, number>();
LAYERS.forEach((names, index) => {
  for (const name of names) rank.set(name, LAYERS.length - index);
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The layer a file belongs to: its top folder under src/, or its own name at the top. */
function layerOf(file: string): string {
  const [first, ...rest] = relative(src, file).split(sep);
  return rest.length === 0 ? first.replace(/\.ts$/, '') : first;
}

const show = (file: string) => relative(root, file).split(sep).join('/');

interface Graph {
  files: string[];
  imports: Map<string, string[]>;
  unresolved: string[];
}

function readGraph(): Graph {
  const files = sourceFiles(src).sort();
  const imports = new Map<string, string[]>();
  const unresolved: string[] = [];
  for (const file of files) {
    const targets = new Set<string>();
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolve(dirname(file), fileName.replace(/\.js$/, '.ts'));
      // Files outside src/ (package.json) are no layer's.
      if (!target.startsWith(src + sep)) continue;
      if (existsSync(target)) targets.add(target);
      else unresolved.push(`${show(file)}: '${fileName}'`);
    }
    imports.set(file, [...targets].sort());
  }
  return { files, imports, unresolved };
}

/** Every strongly connected set of more than one file (or a file importing itself), by Tarjan's algorithm. */
function circles(graph: Graph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next++;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.imports.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const members: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      members.push(member);
    } while (member !== file);
    if (members.length > 1 || graph.imports.get(file)!.includes(file)) found.push(members);
  };
  for (const file of graph.files) if (!index.has(file)) visit(file);
  return found;
}

/** One circle through the first file of a strongly connected set, as the path of imports that makes it. */
function circleThrough(members: string[], graph: Graph): string[] {
  const inSet = new Set(members);
  const start = [...members].sort()[0];
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const target of graph.imports.get(file) ?? []) {
      if (!inSet.has(target)) continue;
      if (target === start) {
        const path = [start];
        for (let at: string | undefined = file; at !== undefined && at !== start; at = cameFrom.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, file);
        queue.push(target);
      }
    }
  }
  return members;
}

const graph = readGraph();

test('every relative import names a source file', () => {
  assert.deepEqual(graph.unresolved, [], `imports that name no .ts file:\n  ${graph.unresolved.join('\n  ')}`);
});

test('every folder of src/ has a layer, and every layer a folder', () => {
  const present = new Set(graph.files.map(layerOf));
  const unranked = [...present].filter((name) => !rank.has(name)).sort();
  assert.deepEqual(unranked, [], `src/ holds ${unranked.join(', ')}, which LAYERS does not rank; give each a layer (and docs/ARCHITECTURE.md a line)`);
  const stale = [...rank.keys()].filter((name) => !present.has(name)).sort();
  assert.deepEqual(stale, [], `LAYERS ranks ${stale.join(', ')}, which src/ no longer has`);
});

test('imports point down the layers', () => {
  const against: string[] = [];
  for (const [file, targets] of graph.imports) {
    const from = layerOf(file);
    for (const target of targets) {
      const to = layerOf(target);
      if (from === to) continue;
      const fromRank = rank.get(from);
      const toRank = rank.get(to);
      if (fromRank === undefined || toRank === undefined) continue; // reported by the test above
      if (fromRank > toRank) continue;
      const how = fromRank === toRank ? 'beside it' : 'above it';
      against.push(`${show(file)} → ${show(target)}  (${from} → ${to}: ${how})`);
    }
  }
  assert.deepEqual(against, [], `${against.length} import(s) against the layers (docs/ARCHITECTURE.md, "Layers"):\n  ${against.join('\n  ')}`);
});

test('no file imports itself back, through any number of others', () => {
  const found = circles(graph).map((members) => circleThrough(members, graph).map(show).join(' → '));
  assert.deepEqual(found, [], `${found.length} circle(s) of imports:\n  ${found.join('\n  ')}`);
});

/** The dialect a file of `src/api/dialects/<dialect>/` speaks, or null for Voicegate's own routes (`resources/`, `admin/`, `service/`) and the shared files. */
function dialectOf(file: string): string | null {
  const parts = relative(join(src, 'api', 'dialects'), file).split(sep);
  return parts.length > 1 && !parts[0].startsWith('..') ? parts[0] : null;
}

test('no dialect imports another: each folder under src/api/ is its own wire shape', () => {
  const crossing: string[] = [];
  for (const [file, targets] of graph.imports) {
    const from = dialectOf(file);
    if (from === null || layerOf(file) !== 'api') continue;
    for (const target of targets) {
      const to = layerOf(target) === 'api' ? dialectOf(target) : null;
      if (to !== null && to !== from) crossing.push(`${show(file)} → ${show(target)}`);
    }
  }
  assert.deepEqual(crossing, [], `dialects that import another dialect (shared framing belongs in src/http/):\n  ${crossing.join('\n  ')}`);
});

test('long-form jobs go through the session: nothing under src/jobs/ reaches the pipeline, resolve or the gate itself', () => {
  const around = ['synthesis/pipeline.ts', 'synthesis/resolve.ts', 'accounts/gate.ts'].map((path) => join(src, path));
  const reaching: string[] = [];
  for (const [file, targets] of graph.imports) {
    if (layerOf(file) !== 'jobs') continue;
    for (const target of targets) if (around.includes(target)) reaching.push(`${show(file)} → ${show(target)}`);
  }
  assert.deepEqual(reaching, [], `jobs that go around the session (synthesis/session.ts):\n  ${reaching.join('\n  ')}`);
  // Calls through the services too: the gate is `services.gate`, reachable without an import.
  const calls = graph.files.filter((file) => layerOf(file) === 'jobs' && /\.gate\.|\bgate\.(admit|settleHeld|releaseHeld)\(/.test(readFileSync(file, 'utf8')));
  assert.deepEqual(calls.map(show), [], 'jobs that call the gate');
});

/** What a dialect under src/api/ leaves to the core's `openTurn` and `TurnContexts` (synthesis/open-turn.ts, turn-contexts.ts). */
const TURN_OWN_WORK: readonly [RegExp, string][] = [
  [/\bnew TextTurn\b/, 'builds a TextTurn itself (open it with openTurn, or TurnContexts.open)'],
  [/\breserveCharacters\b|\ballowEmptyTranscript\b|\bBATCH_CHARACTERS\b/, "admits a turn with the billing batch itself (openTurn reserves it)"],
  [/\bRECENT_CONTEXTS\b|\.(?:values|keys|entries)\(\)\.next\(\)/, 'keeps a bounded table of recent contexts of its own (TurnContexts keeps the connection\'s)'],
];

test('the streaming turn is opened by the core: no file under src/api/ imports the turn\'s billing, admits a turn or keeps its own table of recent contexts', () => {
  const billing = join(src, 'synthesis', 'turn-billing.ts');
  const found: string[] = [];
  for (const file of graph.files) {
    if (layerOf(file) !== 'api') continue;
    if (graph.imports.get(file)!.includes(billing)) found.push(`${show(file)}: imports synthesis/turn-billing`);
    const text = readFileSync(file, 'utf8');
    for (const [pattern, what] of TURN_OWN_WORK) if (pattern.test(text)) found.push(`${show(file)}: ${what}`);
  }
  assert.deepEqual(found, [], `dialects doing the core's work of a streaming turn (a dialect keeps only its wire):\n  ${found.join('\n  ')}`);
});
