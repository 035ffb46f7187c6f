/**
 * @module bench/compare-builds
 * Two builds side by side in one run: the gateway-overhead request (`POST /tts/bytes`, "Hello.",
 * raw s16 at 24 kHz on the `tone` engine, accounts off) against this build and against another
 * build's `dist/` (the commit before a change, built elsewhere), each a child process under the
 * same autocannon settings, in alternating slices (lib/interleave), so the machine's drift cancels
 * out of the ratio. Prints this build's requests per second over the other's (median over slices)
 * against the target of 0.95.
 * Run: `npm run build && node dist/bench/compare-builds.js /path/to/other/dist`
 * (`BENCH_SLICE_SECONDS`, `BENCH_ROUNDS` as for every benchmark).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startChild, type ChildServer } from './lib/child.js';
import { interleave, median, spread, type Slice } from './lib/interleave.js';
import { combineLoads, isMain, loadSlice, note, rounds, runLoad, sliceSeconds, type LoadOptions, type LoadSlice } from './lib/load.js';
import { waitForQuiet } from './lib/proc.js';
import { markdownTable, num, verdict } from './lib/table.js';

export const TARGET = 0.95;
const CONNECTIONS = 16;
const BODY = { model_id: 'tone-bench', transcript: 'Hello.', voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 } };
const OVERRIDES = { models: { 'tone-bench': { extends: 'gepard-1.0', engine: 'tone' } }, accounts: { enabled: false } };

function loadOptions(server: ChildServer, seconds: number): LoadOptions {
  return { url: server.url, path: '/tts/bytes', bodies: [BODY], connections: CONNECTIONS, seconds, headers: {} };
}

async function slice(server: ChildServer, seconds: number): Promise<Slice<LoadSlice>> {
  const data = await loadSlice(server.pid, loadOptions(server, seconds));
  return { rate: data.load.ok / data.load.seconds, data };
}

export async function compareBuilds(otherDist: string): Promise<{ markdown: string; ratio: number }> {
  const seconds = sliceSeconds();
  const roundCount = rounds(5);
  if ((await waitForQuiet()) === null) note('the machine never went quiet before the comparison started');
  const other = await startChild(pathToFileURL(resolve(otherDist, 'bench/server-child.js')), [JSON.stringify(OVERRIDES)]);
  const own = await startChild(new URL('./server-child.js', import.meta.url), [JSON.stringify(OVERRIDES)]);
  try {
    note(`comparing builds: warm-up, then ${roundCount} slices of ${seconds} s of this build, each between slices of ${otherDist}`);
    await runLoad(loadOptions(other, 2));
    await runLoad(loadOptions(own, 2));
    const result = await interleave(() => slice(other, seconds), [{ id: 'this build', run: () => slice(own, seconds) }], roundCount);
    const { slices, ratios } = result.candidates.get('this build')!;
    const ratio = median(ratios);
    const rate = (list: Slice<LoadSlice>[]) => {
      const load = combineLoads(list.map((s) => s.data.load));
      return load.ok / load.seconds;
    };
    const failed = combineLoads([...slices, ...result.reference].map((s) => s.data.load)).failed;
    const table = markdownTable(
      ['build', 'requests/s', 'per slice', 'ratio (median of slices)'],
      [
        [otherDist, num(rate(result.reference), 0), spread(result.reference.map((s) => s.rate), 0), '1.00'],
        ['this build', num(rate(slices), 0), spread(slices.map((s) => s.rate), 0), `${num(ratio, 3)} (${spread(ratios, 3)})`],
      ],
    );
    const markdown = [
      '### Two builds compared (`/tts/bytes`, raw s16, accounts off)',
      '',
      table,
      '',
      verdict('this build / the other, requests per second', ratio, TARGET),
      ...(failed ? [`${failed} failed requests.`] : []),
    ].join('\n');
    return { markdown, ratio };
  } finally {
    await own.stop();
    await other.stop();
  }
}

if (isMain(import.meta.url)) {
  const otherDist = process.argv[2];
  if (!otherDist) throw new Error('usage: node dist/bench/compare-builds.js <other build’s dist directory>');
  console.log((await compareBuilds(otherDist)).markdown);
}
