/**
 * @module engines/espeak/pool
 * The embedded engine: eSpeak NG in a pool of worker threads
 * (`engines/worker-pool`), since eSpeak blocks the thread it speaks on. This
 * module holds only what is eSpeak's: voice profiles to eSpeak settings, text
 * made safe for its SSML reader, word events, its sample format, and the
 * voices it ships. It takes SSML's phonemes (`[[…]]` input, `phonemes.ts`)
 * and languages: text in another language than the voice's is spoken by
 * eSpeak's voice for that language, with the profile's variant, pitch and
 * rate (`languages.ts`); an unknown language is spoken by the voice itself.
 * Phonemes are mnemonics of eSpeak's English table, so only an English
 * voice speaks them; any other reads the text.
 */
import type { StageSpec } from '../../audio/output-stage.js';
import { int16ToFloat } from '../../audio/pcm.js';
import { ApiError } from '../../errors/api-error.js';
import type { Logger } from '../../log/logger.js';
import { espeakLanguageVoices, NAMED_VOICES, type EspeakListedVoice } from '../../voices/builtin.js';
import { ESPEAK_VOICE_LEVELS } from '../../voices/loudness-table.js';
import type { EspeakVoiceProfile, Voice } from '../../voices/voice.js';
import type { EngineChunk, EngineInfo, EngineInput, WordTiming } from '../engine.js';
import type { Int16Chunk, Int16Engine } from '../pcm16.js';
import type { StageCursor, StagedChunk, StagingEngine } from '../staged.js';
import { sentenceSpans, splitHead } from '../sentences.js';
import { CONTINUATION_LEAD_MS, WorkerPool, type PoolLimits } from '../worker-pool/pool.js';
import { EspeakVoices, primaryLanguage } from './languages.js';
import { espeakMnemonics } from './phonemes.js';
import type { EspeakReady, RawWordEvent, SynthesizeJob } from './protocol.js';
import { prepareText, type MnemonicSpan } from './text.js';
import { WordDecoder, type Decoded } from './words.js';
import { packageVersion } from '../fingerprint.js';

const ESPEAK_PACKAGE = packageVersion('@echogarden/espeak-ng-emscripten');

/** `highWater` counts chunks (~100 ms each) a worker may run ahead of a slow consumer. */
export interface EspeakPoolOptions extends PoolLimits {
  id: string;
  logger: Logger;
  /** While every worker is busy, a first sentence's head is spoken as a job of its own (default true). */
  splitFirstSentence?: boolean;
  /** Jobs each worker speaks before the engine reports ready (default 0; config's default is WARM_UP_JOBS). */
  warmUpJobs?: number;
}

/**
 * eSpeak NG is compiled to JavaScript (wasm2js): a new worker runs it in V8's interpreter, and the
 * first jobs of a cold worker cost 60–210 ms of CPU against 10 ms warm (docs/benchmarks-history.md, warm before
 * ready). So before the engine says ready, every worker speaks real jobs, on the path requests
 * take (named voices and their variants, word events, the output stage), until V8 has optimised it.
 */
export const WARM_UP_JOBS = 40;

/** Varied text for the warm-up: questions, clauses, numbers, names, long and short sentences. */
const WARM_UP_TEXTS = [
  'Good morning, and welcome back. Your balance is forty two dollars and seventeen cents.',
  'Could you spell your last name for me, one letter at a time?',
  'The train to Edinburgh leaves from platform 9 at 10:45; please have your ticket ready.',
  "I'm sorry, I didn't catch that. Would you like me to repeat the options?",
  'Press one for billing, two for technical support, or stay on the line.',
  'Wow! That was quick.',
];

const WORKER_URL = new URL('./worker.js', import.meta.url);

/** The pitch range (Hz) of a voice whose files set none: eSpeak's defaults (a base of 71 << 12 and a range of 4104, read as `pitch 80 118`). */
const ESPEAK_DEFAULT_PITCH_RANGE: [number, number] = [80, 118];


interface Piece {
  text: string;
  /** Where it starts in the engine's input text: word positions count from there. */
  at: number;
  /** The head of a clause cut at a space: spoken on a continuing pitch. */
  continues: boolean;
}

export class EspeakPool implements Int16Engine, StagingEngine {
  readonly type = 'espeak';
  readonly loudness = { levels: ESPEAK_VOICE_LEVELS };
  readonly id: string;
  sampleRate = 22050;
  /** eSpeak's own voice list, known once a worker is ready. */
  listedVoices: EspeakListedVoice[] = [];
  private voices = new EspeakVoices([]);
  /** The pitch range each variant and voice file sets (known once a worker is ready). */
  private pitchRanges: EspeakReady['pitchRanges'] = { variants: {}, voices: {} };
  /** SSML `<phoneme>` and `<lang>` are spoken (see the module's note). */
  readonly takes = { phonemes: true, languages: true };
  /** Workers post eSpeak's samples, or the bytes of a job's output stage (Uint8Array). */
  private readonly pool: WorkerPool<SynthesizeJob, Int16Array | Uint8Array, RawWordEvent, EspeakReady>;
  private readonly splitFirstSentence: boolean;
  private readonly warmUpJobs: number;
  private readonly logger: Logger;
  /** Set once the start's warm-up is done: the engine is ready only then. */
  private warmed = false;
  /** First sentences spoken as a head and a rest since start. */
  private firstSentencesSplit = 0;

  constructor(options: EspeakPoolOptions) {
    this.id = options.id;
    this.splitFirstSentence = options.splitFirstSentence ?? true;
    this.warmUpJobs = options.warmUpJobs ?? 0;
    this.logger = options.logger;
    this.pool = new WorkerPool({
      name: options.id,
      workerUrl: WORKER_URL,
      workers: options.workers,
      queueLimit: options.queueLimit,
      highWater: options.highWater,
      queueTimeoutMs: options.queueTimeoutMs,
      jobTimeoutMs: options.jobTimeoutMs,
      cancelGraceMs: options.cancelGraceMs,
      logger: options.logger,
      onReady: (info) => {
        this.sampleRate = info.sampleRate;
        this.listedVoices = info.voices;
        this.voices = new EspeakVoices(info.voices);
        this.pitchRanges = info.pitchRanges;
      },
    });
  }

  async start(): Promise<void> {
    await this.pool.start();
    await this.warmUp(this.logger);
    this.warmed = true;
  }

  /**
   * `warmUpJobs` jobs per worker, two per worker at a time so that every worker gets its share and
   * first sentences are cut as under load, all with word timings. They alternate between plain
   * samples and the output stages requests take most (same rate, telephony μ-law, 16 kHz, 44.1 kHz).
   * A failed warm-up job is logged and skipped: the engine still starts, only colder.
   */
  private async warmUp(logger: Logger): Promise<void> {
    const total = this.warmUpJobs * this.pool.stats().workers;
    const voices = NAMED_VOICES.filter((v) => v.profiles.espeak);
    const stages: StageSpec[] = [
      { inputRate: this.sampleRate, outputRate: this.sampleRate, encoding: 'pcm_f32le' },
      { inputRate: this.sampleRate, outputRate: 8000, encoding: 'pcm_mulaw' },
      { inputRate: this.sampleRate, outputRate: 16000, encoding: 'pcm_s16le' },
      { inputRate: this.sampleRate, outputRate: 2 * this.sampleRate, encoding: 'pcm_s16le' },
    ];
    let next = 0;
    const lane = async (): Promise<void> => {
      for (let n = next++; n < total; n = next++) {
        const input: EngineInput = { text: WARM_UP_TEXTS[n % WARM_UP_TEXTS.length], voice: voices[n % voices.length], speed: 1, wordTimings: true };
        const signal = new AbortController().signal;
        const spec = stages[(n >> 1) % stages.length];
        try {
          const chunks = n % 2 === 0 ? this.synthesizeInt16(input, signal) : this.synthesizeStaged(input, { spec, gain: 1, state: { resampler: null } }, signal);
          for await (const _ of chunks);
        } catch (err) {
          logger.warn({ engine: this.id, err }, 'a warm-up job failed; the engine starts colder');
        }
      }
    };
    await Promise.all(Array.from({ length: 2 * this.pool.stats().workers }, lane));
  }

  stop(): Promise<void> {
    return this.pool.stop();
  }

  isReady(): boolean {
    return this.warmed && this.pool.isReady();
  }

  /** The eSpeak NG build the workers run (engines/fingerprint). */
  fingerprint(): string {
    return ESPEAK_PACKAGE;
  }

  supportsVoice(voice: Voice): boolean {
    return voice.profiles.espeak !== undefined;
  }

  /**
   * A mix is the weighted mean of its voices' numbers: pitch setting, rate, and the pitch range (Hz)
   * of each one's variant. eSpeak's pitch setting scales its variant's base pitch, so a mean of
   * settings alone keeps the largest part's register (a female and a male voice 1:1 would speak
   * as the male); with the range averaged too, the mix speaks between them. The voice and the
   * variant's other traits are not numbers: the mix has those of its largest part.
   */
  mixProfiles(parts: readonly { voice: Voice; weight: number }[]): Voice['profiles'] | null {
    const profiles = parts.map((part) => part.voice.profiles.espeak);
    if (profiles.some((p) => p === undefined)) return null;
    const mean = (of: (p: EspeakVoiceProfile) => number) => parts.reduce((sum, part, i) => sum + part.weight * of(profiles[i]!), 0);
    const lead = profiles[0]!;
    const mixed: EspeakVoiceProfile = { voice: lead.voice, variant: lead.variant, pitch: Math.round(mean((p) => p.pitch)), rate: Math.round(mean((p) => p.rate)) };
    const ranges = profiles.map((p) => this.pitchRangeOf(p!));
    if (ranges.some((r) => r[0] !== ranges[0][0] || r[1] !== ranges[0][1])) {
      const range = (end: 0 | 1) => Math.round(parts.reduce((sum, part, i) => sum + part.weight * ranges[i][end], 0));
      mixed.pitchRange = [range(0), range(1)];
    }
    return { espeak: mixed };
  }

  /** The pitch range (Hz) a profile speaks in: its own, its variant's, its voice's, or eSpeak's default. */
  private pitchRangeOf(profile: EspeakVoiceProfile): [number, number] {
    if (profile.pitchRange) return profile.pitchRange;
    const variant = profile.variant ? this.pitchRanges.variants[profile.variant] : undefined;
    const voice = this.voices.byName(profile.voice)?.voice.identifier;
    return variant ?? (voice ? this.pitchRanges.voices[voice] : undefined) ?? ESPEAK_DEFAULT_PITCH_RANGE;
  }

  /** `espeak-<language>` voices for every voice this eSpeak NG ships. */
  builtinVoices(): Voice[] {
    return espeakLanguageVoices(this.listedVoices);
  }

  info(): EngineInfo {
    return { id: this.id, type: this.type, sampleRate: this.sampleRate, ready: this.isReady(), ...this.pool.stats(), firstSentencesSplit: this.firstSentencesSplit };
  }

  synthesize(input: EngineInput, signal: AbortSignal): AsyncIterable<EngineChunk> {
    // ÷32767, the exact inverse of floatToInt16 for the worker's samples (never -32768).
    return this.run(input, signal, (pcm) => int16ToFloat(pcm as Int16Array));
  }

  /** eSpeak's own 16-bit samples, as the worker made them (see engines/pcm16). */
  synthesizeInt16(input: EngineInput, signal: AbortSignal): AsyncIterable<Int16Chunk> {
    return this.run(input, signal, (pcm) => pcm as Int16Array);
  }

  /** The output stage runs in the worker, on eSpeak's 16-bit samples (see engines/staged). */
  async *synthesizeStaged(input: EngineInput, stage: StageCursor, signal: AbortSignal): AsyncGenerator<StagedChunk> {
    for await (const chunk of this.run(input, signal, (bytes) => bytes as Uint8Array, stage)) {
      yield chunk.words ? { audio: chunk.samples, made: chunk.made, words: chunk.words } : { audio: chunk.samples, made: chunk.made };
    }
  }

  /** Terminates a busy worker the way a crash would end it; for fault-injection tests and drills. */
  crashBusyWorker(): boolean {
    return this.pool.crashBusyWorker();
  }

  /**
   * One job per sentence, each submitted when the one before has ended: a worker is never held
   * by one request for longer than a sentence. The pool serves a waiting request's first piece
   * before the next sentence of one already speaking, until that one's listener is about to run
   * out of audio (WorkerPool.submit). When no worker is free, the first sentence's head (a
   * clause, or a few words) goes first on its own, so first audio waits for a short piece. Text
   * with `playback` continues what its listener hears: all its sentences queue as continuations.
   */
  private async *run<T>(input: EngineInput, signal: AbortSignal, convert: (pcm: Int16Array | Uint8Array) => T, stage?: StageCursor): AsyncGenerator<Decoded<T>> {
    const profile = input.voice.profiles.espeak;
    if (!profile) throw new ApiError('engine_error', { reason: `: voice ${input.voice.id} has no eSpeak profile` });
    const { name, english } = this.voiceName(profile.voice, input.textLanguage);
    // A profile with a pitch range of its own speaks in a variant made for it: its variant with that range.
    const variant = profile.pitchRange ? { name: `${profile.variant ?? 'none'}-pitch-${profile.pitchRange.join('-')}`, from: profile.variant, pitch: profile.pitchRange } : undefined;
    const voice = variant ? `${name}+${variant.name}` : profile.variant ? `${name}+${profile.variant}` : name;
    const phonemes = english && input.phonemes ? mnemonicSpans(input.phonemes) : [];
    const rate = Math.round(profile.rate * input.speed);
    // eSpeak's base pitch runs 0-99.
    const pitch = Math.max(0, Math.min(99, Math.round(profile.pitch * (input.pitch ?? 1))));
    // Text that continues what its listener is hearing is queued like any later sentence, whole.
    const { playback } = input;
    const pieces = this.pieces(input.text, playback === undefined);
    let offset = 0;
    let worked = 0;
    let firstAudioAt = playback?.startedAt ?? 0;
    const before = playback?.seconds ?? 0;
    for (const [index, piece] of pieces.entries()) {
      const prepared = prepareText(piece.text, { continues: piece.continues, phonemes: within(phonemes, piece.at, piece.text.length) });
      const job: SynthesizeJob = variant ? { text: prepared.text, voice, pitch, rate, variant } : { text: prepared.text, voice, pitch, rate };
      const decoder = new WordDecoder(prepared, input.wordTimings, this.sampleRate, convert, () => (stage ? new Uint8Array(0) : new Int16Array(0)));
      let samples = 0;
      // Its listener has heard from firstAudioAt on, in real time, what was sent before and what was made here.
      const dueAt = firstAudioAt > 0 ? firstAudioAt + (before + offset) * 1000 - CONTINUATION_LEAD_MS : performance.now();
      const continuation = index > 0 || playback !== undefined;
      const staged = stage ? { stage: { spec: stage.spec, gain: stage.gain, state: stage.state } } : {};
      const stream = this.pool.submit(job, signal, decoder, { continuation, workedMs: worked, dueAt, ...staged, ...(input.background ? { background: true } : {}) });
      for await (const chunk of stream) {
        if (chunk.made > 0 && firstAudioAt === 0) firstAudioAt = performance.now();
        samples += chunk.made;
        yield chunk.words && (offset > 0 || piece.at > 0) ? { ...chunk, words: chunk.words.map((w) => shifted(w, offset, piece.at)) } : chunk;
      }
      // The next sentence's stage continues where this one's ended, on whichever worker it runs.
      if (stage) stage.state = stream.stageState();
      worked += stream.workingMs();
      offset += samples / this.sampleRate;
    }
  }

  /**
   * The eSpeak voice for a profile's voice name, or for `language` when that is another language than
   * the profile's and eSpeak has a voice for it; and whether it speaks English (reads the phonemes).
   */
  private voiceName(profileVoice: string, language: string | undefined): { name: string; english: boolean } {
    const bound = this.voices.byName(profileVoice);
    // A per-language voice is named by its language, which eSpeak's set_voice does not take: its identifier is.
    let name = bound?.byLanguage ? bound.voice.identifier : profileVoice;
    let speaks = bound ? primaryLanguage(bound.voice) : profileVoice.toLowerCase().split(/[-+/]/u)[0];
    if (language) {
      const other = this.voices.forLanguage(language);
      if (other && primaryLanguage(other) !== speaks) {
        name = other.identifier;
        speaks = primaryLanguage(other);
      }
    }
    return { name, english: speaks === 'en' };
  }

  /** The text's sentences; the first one's head on its own when it would wait for a worker (and `mayCut`). */
  private pieces(text: string, mayCut: boolean): Piece[] {
    const pieces: Piece[] = [...sentenceSpans(text)].map((sentence) => ({ ...sentence, continues: false }));
    // Text with no letters or digits is still eSpeak's to read (or not) as a whole.
    if (pieces.length === 0) return [{ text, at: 0, continues: false }];
    const split = !mayCut || !this.splitFirstSentence || this.pool.hasIdleWorker() ? null : splitHead(pieces[0].text);
    if (split) {
      const { at, text: sentence } = pieces[0];
      pieces.splice(0, 1, { text: split.head, at, continues: !split.atPunctuation }, { text: split.rest, at: at + sentence.length - split.rest.length, continues: false });
      this.firstSentencesSplit++;
    }
    return pieces;
  }
}

/** Phoneme spans as eSpeak mnemonics; a span whose phonemes cannot be written so is read as text. */
function mnemonicSpans(spans: readonly { from: number; to: number; ipa: string }[]): MnemonicSpan[] {
  const out: MnemonicSpan[] = [];
  for (const { from, to, ipa } of spans) {
    try {
      out.push({ from, to, mnemonics: espeakMnemonics(ipa) });
    } catch {
      // Normalised IPA always converts; anything else is spoken as its text.
    }
  }
  return out;
}

/** The spans inside a piece `[at, at + length)` of the text, placed in the piece; one a cut runs through is read as text. */
function within(spans: readonly MnemonicSpan[], at: number, length: number): MnemonicSpan[] {
  return spans.filter((s) => s.from >= at && s.to <= at + length).map((s) => ({ ...s, from: s.from - at, to: s.to - at }));
}

/** A sentence's word, moved to the request's clock and to its place in the whole text. */
function shifted(word: WordTiming, seconds: number, at: number): WordTiming {
  const moved = { ...word, start: word.start + seconds, end: word.end + seconds };
  if (word.from !== undefined) moved.from = word.from + at;
  if (word.to !== undefined) moved.to = word.to + at;
  return moved;
}
