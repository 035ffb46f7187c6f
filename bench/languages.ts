/**
 * @module bench/languages
 * `/tts/bytes` throughput on German text against English text of the same
 * length and kind (dense with numbers, money, dates, times and units, so the
 * normaliser has work in both): characters served per second at 8
 * connections, German slices interleaved with English ones on the same
 * server child (lib/interleave), the ratio of each German slice to the
 * English ones around it. Two rows: the `tone` engine, whose synthesis costs
 * nearly nothing, so the ratio is the gateway's and the normaliser's own
 * cost; and eSpeak NG, where each language's own synthesis cost comes in
 * too. The target (issue: German ≥ 0.95 of English) is read on the tone row.
 * Run: `npm run build && node dist/bench/languages.js`.
 */
import { startChild } from './lib/child.js';
import { interleave, median, spread, type Slice } from './lib/interleave.js';
import { isMain, loadSlice, note, rounds, sliceSeconds, type LoadSlice } from './lib/load.js';
import { machineLine } from './lib/machine.js';
import { waitForQuiet } from './lib/proc.js';
import { markdownTable, num, verdict } from './lib/table.js';

export const TARGET = 0.95;
const CONNECTIONS = 8;
const CHARACTERS = 260;

const GERMAN = 'Ich habe am 4. Mai 21 Äpfel für 3,50 € gekauft. Der Zug fährt um 14:30 Uhr und kostet 1.250 Euro, z. B. für 2 Personen. Es waren 25 % mehr als 1999, bei 20 °C und 120 km/h. Die Strecke ist 12,5 km lang; der 3. Platz bekam 500 € usw. Wir treffen uns im 2. Stock.';
const ENGLISH = 'I bought 21 apples for $3.50 on May 4. The train leaves at 2:30 PM and costs $1,250, e.g. for 2 people. That was 25% more than 1999, at 20°C and 60 mph. The track is 12.5 km long; 3rd place won $500 etc. We meet on the 2nd floor, No. 14, about 10 minutes later, or so.';

const clip = (text: string) => [...text].slice(0, CHARACTERS).join('');

function body(model: string, transcript: string, language: string) {
  return { model_id: model, transcript: clip(transcript), language, voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 } };
}

const ROWS = [
  { id: 'tone engine (the gateway and normaliser)', model: 'tone-bench', overrides: { models: { 'tone-bench': { extends: 'gepard-1.0', engine: 'tone' } }, accounts: { enabled: false } } },
  { id: 'eSpeak NG (each language\'s synthesis too)', model: 'gepard-1.0', overrides: { accounts: { enabled: false } } },
];

export async function runLanguagesBench(): Promise<{ markdown: string; ratio: number }> {
  const seconds = sliceSeconds();
  const roundCount = rounds(4);
  if ((await waitForQuiet()) === null) note('languages: the machine was not quiet before the run');
  const table: (string | number)[][] = [];
  let ratio = NaN;
  for (const row of ROWS) {
    note(`languages: ${row.id}`);
    const server = await startChild(new URL('./server-child.js', import.meta.url), [JSON.stringify(row.overrides)]);
    try {
      const slice = async (transcript: string, language: string): Promise<Slice<LoadSlice>> => {
        const data = await loadSlice(server.pid, { url: server.url, path: '/tts/bytes', bodies: [body(row.model, transcript, language)], connections: CONNECTIONS, seconds });
        if (data.load.failed > 0) throw new Error(`${data.load.failed} requests failed`);
        return { rate: (data.load.ok * [...clip(transcript)].length) / data.load.seconds, data };
      };
      const result = await interleave(() => slice(ENGLISH, 'en'), [{ id: 'de', run: () => slice(GERMAN, 'de') }], roundCount);
      const german = result.candidates.get('de')!;
      const ratios = german.ratios;
      if (row.model === 'tone-bench') ratio = median(ratios);
      table.push([row.id, num(median(result.reference.map((s) => s.rate)), 0), num(median(german.slices.map((s) => s.rate)), 0), `${median(ratios).toFixed(3)} (${spread(ratios, 3)})`]);
    } finally {
      await server.stop();
    }
  }
  const markdown = [
    '### Throughput by language',
    '',
    `\`/tts/bytes\`, ${CHARACTERS} characters of number-dense text, raw s16 at 16 kHz, ${CONNECTIONS} connections, ${roundCount} German slices of ${seconds} s each between English ones.`,
    '',
    markdownTable(['engine', 'English characters/s', 'German characters/s', 'German / English (median, range)'], table),
    '',
    verdict('German throughput over English (tone engine)', ratio, TARGET),
  ].join('\n');
  return { markdown, ratio };
}

if (isMain(import.meta.url)) {
  const report = await runLanguagesBench();
  console.log(machineLine());
  console.log('');
  console.log(report.markdown);
}
