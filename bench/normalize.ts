/**
 * @module bench/normalize
 * How long the normaliser takes over 5,000 characters of German text dense
 * with what it rewrites (numbers, money, dates, times, units, phone numbers,
 * abbreviations), beside English text of the same length and kind: the time
 * of one call on mapped text, as synthesis makes it (`normalize/languages.ts`),
 * median and p99 over many calls after a warm-up. Run:
 * `node dist/bench/normalize.js`.
 */
import { normalizeIn } from '../src/synthesis/normalize/languages.js';
import { MappedText } from '../src/synthesis/text-map.js';
import { isMain } from './lib/load.js';
import { machineLine } from './lib/machine.js';

const CHARACTERS = 5000;
const CALLS = 400;

const GERMAN = [
  'Ich habe am 4. Mai 21 Äpfel für 3,50 € gekauft.',
  'Der Zug fährt um 14:30 Uhr und kostet 1.250 Euro, z. B. für 2 Personen.',
  'Es waren 25 % mehr als 1999, bei 20 °C und 120 km/h.',
  'Ruf Dr. Müller unter +49 30 1234567 an, bis zum 03.10.2026.',
  'Die Strecke ist 12,5 km lang; der 3. Platz bekam 500 € usw.',
  'Wir treffen uns im 2. Stock, Nr. 14, ca. 10–20 Minuten später.',
];
const ENGLISH = [
  'I bought 21 apples for $3.50 on May 4.',
  'The train leaves at 2:30 PM and costs $1,250, e.g. for 2 people.',
  'That was 25% more than 1999, at 20°C and 60 mph.',
  'Call Dr. Smith at (555) 123-4567 by 2026-10-03.',
  'The track is 12.5 km long; 3rd place won $500 etc.',
  'We meet on the 2nd floor, No. 14, about 10-20 minutes later.',
];

function text(sentences: readonly string[]): string {
  let out = '';
  for (let i = 0; out.length < CHARACTERS; i++) out += `${sentences[i % sentences.length]} `;
  return out.slice(0, CHARACTERS);
}

function measure(language: string, sample: string): { median: number; p99: number } {
  const input = MappedText.copied(sample, 0);
  for (let i = 0; i < 50; i++) normalizeIn(language, input);
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    normalizeIn(language, input);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(CALLS / 2)], p99: times[Math.floor(CALLS * 0.99)] };
}

function main(): void {
  const rows = [
    ['German (`de`)', measure('de', text(GERMAN))],
    ['English (`en`)', measure('en', text(ENGLISH))],
  ] as const;
  console.log(machineLine());
  console.log('');
  console.log(`| ${CHARACTERS.toLocaleString('en')} characters | median | p99 |`);
  console.log('|---|---|---|');
  for (const [name, { median, p99 }] of rows) console.log(`| ${name} | ${median.toFixed(2)} ms | ${p99.toFixed(2)} ms |`);
}

if (isMain(import.meta.url)) main();
