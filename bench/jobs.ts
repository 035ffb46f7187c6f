/**
 * @module bench/jobs
 * Long-form jobs on the embedded eSpeak NG pool (2 workers), two questions
 * in one run:
 * 1. A job alone: audio seconds per wall second from its start to its end,
 *    against the raw engine rate — an `EspeakPool` with the same workers in
 *    this process speaking the same segments one after another (as the job
 *    does), with nothing in between. Target ≥ 0.9.
 * 2. Jobs beside calls: SSE first-audio p99 of `INTERACTIVE` concurrent
 *    one-sentence streams, with no job running and with 4 jobs running, in
 *    alternating slices. Target: the rise is at most 20 ms.
 * Run: `npm run build && node dist/bench/jobs.js`.
 */
import { Agent } from 'node:http';
import { EspeakPool } from '../src/engines/espeak/pool.js';
import { createLogger } from '../src/log/logger.js';
import { splitText } from '../src/synthesis/split.js';
import { NAMED_VOICES } from '../src/voices/builtin.js';
import { startChild } from './lib/child.js';
import { isMain, note, percentile, rounds, sliceSeconds } from './lib/load.js';
import { machineLine } from './lib/machine.js';
import { markdownTable, num } from './lib/table.js';
import { sseClient, streamSlice } from './streaming-latency.js';

export const TARGET_RATE_RATIO = 0.9;
export const TARGET_P99_RISE_MS = 20;
const WORKERS = 2;
const INTERACTIVE = 2;
const SEGMENT_CHARACTERS = 1000;
const FORMAT = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } as const;

const SENTENCES = [
  'The morning train left the station a little after seven, carrying farmers, clerks and a few sleepy students toward the city.',
  'Outside the window the fields went by in long green bands, broken now and then by a farmhouse or a line of poplars.',
  'Nobody spoke much; the carriage was warm, and the steady rhythm of the wheels made it easy to drift into thought.',
  'By the time the river came into view, the sun had burned away the last of the mist that had hung over the valley.',
  'She opened her notebook and began, slowly at first, to write down everything she remembered about the summer before.',
];

/** A chapter of about `characters` code points, in paragraphs. */
export function chapter(characters: number): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < characters; i++) {
    const sentence = SENTENCES[i % SENTENCES.length];
    parts.push(i % 6 === 5 ? `${sentence}\n\n` : `${sentence} `);
    length += sentence.length + 1;
  }
  return parts.join('').trim();
}

/** Audio seconds per wall second of the engine alone, over the segments a job of `text` is cut into. */
async function rawRate(text: string): Promise<number> {
  const pool = new EspeakPool({ id: 'espeak', workers: WORKERS, queueLimit: 256, highWater: 32, logger: createLogger('silent') });
  await pool.start();
  const voice = NAMED_VOICES.find((v) => v.id === 'sarah')!;
  try {
    // One warm-up segment, as the server is warm by the time its job runs.
    for await (const _ of pool.synthesize({ text: SENTENCES.join(' '), voice, speed: 1, wordTimings: false }, new AbortController().signal));
    let samples = 0;
    const started = performance.now();
    for (const segment of splitText(text, SEGMENT_CHARACTERS)) {
      for await (const chunk of pool.synthesize({ text: segment, voice, speed: 1, wordTimings: false }, new AbortController().signal)) samples += chunk.samples.length;
    }
    return samples / pool.sampleRate / ((performance.now() - started) / 1000);
  } finally {
    await pool.stop();
  }
}

async function submit(url: string, transcript: string): Promise<string> {
  const response = await fetch(`${url}/tts/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model_id: 'gepard-1.0', voice: { mode: 'id', id: 'sarah' }, output_format: FORMAT, transcript }),
  });
  if (response.status !== 202) throw new Error(`submit: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

async function read(url: string, id: string): Promise<any> {
  return (await fetch(`${url}/tts/jobs/${id}`)).json();
}

async function until(check: () => Promise<boolean>, withinMs: number): Promise<void> {
  const deadline = performance.now() + withinMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function runJobsBench(): Promise<{ markdown: string; rateRatio: number; p99RiseMs: number }> {
  const text = chapter(8_000);
  const raw = await rawRate(text);
  note(`jobs: raw engine rate ${raw.toFixed(1)} audio s per s`);
  const server = await startChild(new URL('./server-child.js', import.meta.url), [
    JSON.stringify({ accounts: { enabled: false }, engines: { espeak: { type: 'espeak', workers: WORKERS } }, jobs: { pollMs: 50, concurrency: 4, maxRunningPerOrg: 4 } }),
  ]);
  const agent = new Agent({ keepAlive: true, maxSockets: INTERACTIVE });
  const client = sseClient(server.url, agent);
  try {
    // 1. A job alone (after one to warm the server's path).
    const warm = await submit(server.url, SENTENCES.join(' '));
    await until(async () => (await read(server.url, warm)).status === 'succeeded', 60_000);
    const id = await submit(server.url, text);
    let job: any;
    await until(async () => ['succeeded', 'failed'].includes((job = await read(server.url, id)).status), 300_000);
    if (job.status !== 'succeeded') throw new Error(`job failed: ${JSON.stringify(job.error)}`);
    const wall = (Date.parse(job.finished_at) - Date.parse(job.started_at)) / 1000;
    const jobRate = job.result.duration_seconds / wall;
    const rateRatio = jobRate / raw;
    note(`jobs: a job alone ${jobRate.toFixed(1)} audio s per s (${rateRatio.toFixed(2)} of raw)`);

    // 2. Interactive first audio without and with 4 jobs running, alternating.
    const seconds = sliceSeconds(6);
    const without: number[] = [];
    const beside: number[] = [];
    for (let round = 0; round < rounds(2); round++) {
      without.push(...(await streamSlice(client, INTERACTIVE, seconds, server.pid, { leadInSeconds: 1 })).firstAudio);
      const ids = await Promise.all(Array.from({ length: 4 }, () => submit(server.url, chapter(40_000))));
      await until(async () => (await Promise.all(ids.map((j) => read(server.url, j)))).every((j) => j.status === 'running'), 10_000);
      beside.push(...(await streamSlice(client, INTERACTIVE, seconds, server.pid, { leadInSeconds: 1 })).firstAudio);
      const progress = await Promise.all(ids.map((j) => read(server.url, j)));
      note(`jobs round ${round + 1}: segments made beside the calls: ${progress.map((j) => j.progress.segments_done).join(', ')}`);
      await Promise.all(ids.map((j) => fetch(`${server.url}/tts/jobs/${j}`, { method: 'DELETE' })));
    }
    without.sort((a, b) => a - b);
    beside.sort((a, b) => a - b);
    const rise = percentile(beside, 99) - percentile(without, 99);
    const markdown = [
      '### Long-form jobs (eSpeak NG, 2 workers)',
      '',
      machineLine(),
      '',
      markdownTable(
        ['Measure', 'Value', 'Target'],
        [
          ['Raw engine rate (audio s / s, same segments back to back)', num(raw, 1), ''],
          ['A job alone (audio s / s, start to end)', num(jobRate, 1), ''],
          ['Job ÷ raw', num(rateRatio, 2), `≥ ${TARGET_RATE_RATIO} → **${rateRatio >= TARGET_RATE_RATIO ? 'MET' : 'MISSED'}**`],
          [`SSE first audio p50 / p99, ${INTERACTIVE} streams, no jobs (ms)`, `${num(percentile(without, 50), 1)} / ${num(percentile(without, 99), 1)}`, ''],
          [`The same beside 4 running jobs (ms)`, `${num(percentile(beside, 50), 1)} / ${num(percentile(beside, 99), 1)}`, ''],
          ['p99 rise (ms)', num(rise, 1), `≤ ${TARGET_P99_RISE_MS} → **${rise <= TARGET_P99_RISE_MS ? 'MET' : 'MISSED'}**`],
        ],
      ),
    ].join('\n');
    return { markdown, rateRatio, p99RiseMs: rise };
  } finally {
    agent.destroy();
    await server.stop();
  }
}

if (isMain(import.meta.url)) console.log((await runJobsBench()).markdown);
