/**
 * @module bench/fallback
 * First audio through a fallback chain, on one Voicegate child (accounts
 * off, eSpeak NG as the fallback model `local`): `/tts/sse`, one request at
 * a time, alternating, first audio as the client sees its first chunk.
 * - `local` on its own: the fallback's own first audio;
 * - `guarded`: the primary (an ElevenLabs-dialect engine whose server is
 *   dead) behind an open breaker, served by `local`. Target: median within
 *   +5 ms of the fallback's own;
 * - `hanging`: the primary's server passes its health probes but never
 *   answers speech (the worst dead server: no breaker, no error), so the
 *   chain waits `firstAudioTimeoutMs` before `local` serves. Target: p99 ≤
 *   `firstAudioTimeoutMs` + the fallback's own p99.
 *
 * Run: `npm run build && node dist/bench/fallback.js` (`BENCH_ROUNDS`: requests per model ÷ 10).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startChild } from './lib/child.js';
import { isMain, note, percentile, rounds } from './lib/load.js';
import { waitForQuiet } from './lib/proc.js';
import { markdownTable, num } from './lib/table.js';

export const TARGET_OPEN_DELTA_MS = 5;
const TIMEOUT_MS = 300;

/** A server that passes health probes (GET) and holds every speech request (POST) open until it closes. */
async function hangingServer(): Promise<{ url: string; close(): Promise<void> }> {
  const held = new Set<import('node:http').ServerResponse>();
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET') return res.end('{}');
    held.add(res);
    res.on('close', () => held.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Milliseconds from sending the request to its first `chunk` event. */
async function firstAudio(url: string, model: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${url}/tts/sse`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model_id: model, transcript: 'The quick brown fox jumps over the lazy dog.', voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } }),
  });
  if (response.status !== 200 || !response.body) throw new Error(`${model}: HTTP ${response.status}`);
  if (response.headers.get('x-voicegate-model') !== 'local') throw new Error(`${model}: served by ${response.headers.get('x-voicegate-model')}`);
  const decoder = new TextDecoder();
  let text = '';
  let at = NaN;
  for await (const bytes of response.body) {
    text += decoder.decode(bytes, { stream: true });
    if (Number.isNaN(at) && text.includes('"type":"chunk"')) at = performance.now() - started;
  }
  return at;
}

export async function runFallbackBench(): Promise<{ markdown: string }> {
  const count = rounds(3) * 10;
  const notes: string[] = [];
  if ((await waitForQuiet()) === null) notes.push('The machine never went quiet for a second within 8 s before this benchmark started: other load was running.');
  const hanging = await hangingServer();
  // Nothing listens there: the primary of `guarded` is dead.
  const dead = 'http://127.0.0.1:9';
  const remote = (url: string) => ({ type: 'elevenlabs-upstream', upstreams: [{ url }], model: 'eleven_flash_v2_5', sampleRate: 22050, voices: { sarah: 'sarah' }, probeIntervalMs: 60_000 });
  const config = {
    accounts: { enabled: false },
    engines: {
      espeak: { type: 'espeak', workers: 1 },
      dead: { ...remote(dead), breaker: { failures: 1, openMs: 3_600_000 } },
      hang: { ...remote(hanging.url), firstAudioTimeoutMs: TIMEOUT_MS },
    },
    models: {
      local: { extends: 'gepard-1.0', engine: 'espeak' },
      guarded: { extends: 'gepard-1.0', engine: 'dead', fallback: ['local'] },
      hanging: { extends: 'gepard-1.0', engine: 'hang', fallback: ['local'] },
    },
  };
  note('fallback: starting the Voicegate child');
  const server = await startChild(new URL('./server-child.js', import.meta.url), [JSON.stringify(config)]);
  try {
    // Warm up; the first request to `guarded` opens its breaker (its server is offline from the first probe).
    for (const model of ['local', 'guarded', 'hanging', 'local', 'guarded']) await firstAudio(server.url, model);
    const models = ['local', 'guarded', 'hanging'] as const;
    const samples: Record<(typeof models)[number], number[]> = { local: [], guarded: [], hanging: [] };
    for (let i = 0; i < count; i++) for (const model of models) samples[model].push(await firstAudio(server.url, model));
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const p = (model: (typeof models)[number], q: number) => percentile(sorted(samples[model]), q);
    const openDelta = p('guarded', 50) - p('local', 50);
    const hangBound = TIMEOUT_MS + p('local', 99);
    const markdown = [
      '### Fallback chains',
      '',
      `First audio on /tts/sse, one request at a time, ${count} per model, alternating; the fallback is eSpeak NG (\`local\`), \`firstAudioTimeoutMs\` ${TIMEOUT_MS}:`,
      '',
      markdownTable(
        ['model', 'p50 (ms)', 'p99 (ms)'],
        [
          ['`local` (the fallback on its own)', num(p('local', 50), 1), num(p('local', 99), 1)],
          ['`guarded`: primary dead, breaker open', num(p('guarded', 50), 1), num(p('guarded', 99), 1)],
          ['`hanging`: primary hangs, no breaker', num(p('hanging', 50), 1), num(p('hanging', 99), 1)],
        ],
      ),
      '',
      `Breaker open: p50 − the fallback's own p50 = ${num(openDelta, 2)} ms (target ≤ ${TARGET_OPEN_DELTA_MS}) — **${openDelta <= TARGET_OPEN_DELTA_MS ? 'MET' : 'MISSED'}**`,
      '',
      `Primary hanging, breaker closed: p99 ${num(p('hanging', 99), 1)} ms (target ≤ firstAudioTimeoutMs + the fallback's p99 = ${num(hangBound, 1)}) — **${p('hanging', 99) <= hangBound ? 'MET' : 'MISSED'}**`,
      ...notes.map((n) => `\n${n}`),
    ].join('\n');
    return { markdown };
  } finally {
    await server.stop();
    await hanging.close();
  }
}

if (isMain(import.meta.url)) {
  const report = await runFallbackBench();
  console.log(report.markdown);
}
