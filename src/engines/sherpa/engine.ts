/**
 * @module engines/sherpa/engine
 * Local neural voices: a sherpa-onnx model (Piper/VITS, Kokoro, Kitten,
 * Matcha, ZipVoice, Pocket) in a pool of worker threads
 * (`engines/worker-pool`), since sherpa blocks the thread it generates on.
 * Start-up finds the model's family and files (`layout.ts`), checks them
 * (`validate.ts`) and loads the model once in a child process (`probe.ts`)
 * before any worker does, because sherpa ends its process natively on a bad
 * model; a failed start rejects with the reason and the registry keeps the
 * rest of the server serving. Audio streams sentence by sentence.
 *
 * ZipVoice and Pocket models clone: they speak only cloned voices, each in
 * the voice of its stored clip, which the request brings
 * (`EngineInput.reference`); ZipVoice also reads what the clip says, so it
 * requires the clip's transcript.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../../errors/api-error.js';
import type { Logger } from '../../log/logger.js';
import { hasClip, type Voice } from '../../voices/voice.js';
import type { CloningSupport, Engine, EngineChunk, EngineInfo, EngineInput } from '../engine.js';
import type { StageCursor, StagedChunk, StagingEngine } from '../staged.js';
import { sentences, splitHead } from '../sentences.js';
import type { ChunkDecoder } from '../worker-pool/stream.js';
import { CONTINUATION_LEAD_MS, WorkerPool, type PoolLimits } from '../worker-pool/pool.js';
import { ensureEspeakData } from './espeak-data.js';
import { CLONING_FAMILIES, detectLayout, sherpaConfig, type Family, type ModelFiles, type ModelLayout } from './layout.js';
import { probeModel } from './probe.js';
import { providerFor, SESSION_OPTIONS } from './session-options.js';
import type { SherpaJob, SherpaReady, SherpaWorkerData } from './protocol.js';
import { validateLayout } from './validate.js';
import { builtinSpeakerVoices, speakerFor, type SherpaVoiceProfile, type SpeakerMap } from './voices.js';
import { MixTableFull, StyleTable, styleShape, type StyleMix } from './style-mix.js';
import { describeSpeaker, kokoroLanguage, speakerNames } from './speakers.js';
import { packageVersion, pathsDigest } from '../fingerprint.js';

const SHERPA_PACKAGE = packageVersion('sherpa-onnx-node');

/** `highWater` counts half-second pieces a worker may run ahead of a slow consumer. */
export interface SherpaEngineOptions extends PoolLimits {
  id: string;
  /** The model folder (an unpacked sherpa-onnx archive). */
  model: string;
  family?: Family;
  files?: ModelFiles;
  lang?: string;
  numThreads: number;
  /** Voice id → speaker id. */
  voices: Record<string, number>;
  defaultSpeaker?: number;
  /** Where the bundled eSpeak NG data is unpacked for models that bring none. */
  espeakDataDir?: string;
  /** The onnxruntime session options file (`session-options.ts`); a file in the temporary folder when absent. */
  sessionOptionsPath?: string;
  probeTimeoutMs?: number;
  /** Flow-matching steps of a cloning model (more: slower, often cleaner); sherpa-onnx's default when absent. */
  numSteps?: number;
  /** Mix rows of a Kokoro model's style table (style-mix.ts); 0 or absent: it does not mix. */
  mixSlots?: number;
  /** Where the model's copy and its style table are written; a folder in the temporary folder when absent. */
  mixDir?: string;
  /** Longest text one generate call is given where clause punctuation allows (engines/sentences); 400 when absent. */
  maxSentenceChars?: number;
  /**
   * Speak a request's first sentence as a short head and the rest: cut at clause punctuation in its
   * first words always, between words while every worker is busy (engines/sentences, splitHead).
   */
  splitFirstSentence?: boolean;
  /** Let go of the model after this long with no request (its workers exit); the next request loads it again. */
  idleUnloadSeconds?: number;
  logger: Logger;
}

const WORKER_URL = new URL('./worker.js', import.meta.url);

/** Control characters (NUL cuts text short in C code) become spaces; the rest is read as written. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

export class SherpaEngine implements Engine, StagingEngine {
  readonly type = 'sherpa-onnx';
  readonly id: string;
  sampleRate = 22050;
  numSpeakers = 0;
  private layout: ModelLayout | null = null;
  private modelDigest: string | null = null;
  /** Workers post the model's samples, or the bytes of a job's output stage (Uint8Array). */
  private pool: WorkerPool<SherpaJob, Float32Array | Uint8Array, never, SherpaReady> | null = null;
  private firstSentencesSplit = 0;
  private workerData: SherpaWorkerData | null = null;
  /** A Kokoro model's mixes (style-mix.ts); null when it cannot mix. */
  private styles: StyleTable | null = null;
  /** Pools replaced by one that loaded a new mix, finishing their work. */
  private readonly retiring = new Set<Promise<void>>();
  private mixReloads = 0;
  private stopped = false;
  /** Requests speaking now, and when the last one began or ended (idle unload). */
  private active = 0;
  private lastUsed = performance.now();
  /** Times the workers loaded the model: once at start, and once per load after an idle unload. */
  private loadCount = 0;
  private lastLoadMs: number | null = null;
  private loading: Promise<void> | null = null;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(private readonly options: SherpaEngineOptions) {
    this.id = options.id;
  }

  async start(): Promise<void> {
    const layout = detectLayout(this.options.model, { family: this.options.family, files: this.options.files, lang: this.options.lang });
    if (!layout.files.dataDir && layout.family !== 'pocket') {
      layout.files.dataDir = ensureEspeakData(this.options.espeakDataDir ?? join(tmpdir(), 'voicegate-espeak-ng-data'));
    }
    const problems = validateLayout(layout);
    if (problems.length) throw new Error(problems.join('; '));
    // Every file the model is made of, hashed: a swapped file makes new audio-cache keys.
    this.modelDigest = `${SHERPA_PACKAGE} ${layout.family} ${await pathsDigest(layout.files)}`;
    const sessionOptions = { path: this.options.sessionOptionsPath ?? join(tmpdir(), 'voicegate-sherpa-onnx-session.conf'), text: SESSION_OPTIONS };
    const provider = providerFor(sessionOptions, (err) =>
      this.options.logger.warn({ engine: this.id, path: sessionOptions.path, err }, 'cannot write the onnxruntime options file; the model loads with the memory pattern on (more memory)'),
    );
    this.styles = this.styleTable(layout);
    const loaded = this.styles ? { ...layout, files: { ...layout.files, ...this.styles.files } } : layout;
    const config = sherpaConfig(loaded, { numThreads: this.options.numThreads, lang: this.options.lang, provider });
    const probed = await probeModel(config, this.options.probeTimeoutMs);
    this.layout = layout;
    this.sampleRate = probed.sampleRate;
    // The mix rows are speakers to sherpa, not voices of the model.
    this.numSpeakers = probed.numSpeakers - (this.styles?.capacity ?? 0);
    this.workerData = {
      config,
      ...(provider === 'cpu' ? {} : { sessionOptions }),
      ...(this.options.numSteps !== undefined ? { numSteps: this.options.numSteps } : {}),
      ...(this.options.maxSentenceChars !== undefined ? { maxSentenceChars: this.options.maxSentenceChars } : {}),
    };
    this.pool = this.newPool();
    await this.pool.start();
    this.loadCount = 1;
    const idle = this.options.idleUnloadSeconds;
    if (idle !== undefined) {
      this.idleTimer = setInterval(() => void this.unloadIfIdle(idle * 1000), Math.min(1000, idle * 250));
      this.idleTimer.unref();
    }
  }

  /** Lets the workers go when nothing has used them for `idleMs`: they exit, and their memory with them. */
  private async unloadIfIdle(idleMs: number): Promise<void> {
    const pool = this.pool;
    if (!pool || this.stopped || this.active > 0 || this.loading || this.retiring.size > 0 || performance.now() - this.lastUsed < idleMs) return;
    this.pool = null;
    this.options.logger.info({ engine: this.id, idleSeconds: idleMs / 1000 }, 'engine idle: its workers exit and let go of the model; the next request loads it again');
    await pool.stop().catch((err: unknown) => this.options.logger.warn({ engine: this.id, err }, 'stopping the idle sherpa-onnx workers failed'));
  }

  /** The workers, loaded again when idle unload let them go; requests arriving meanwhile wait for the same load. */
  private async loaded(): Promise<void> {
    if (this.pool || this.stopped) return;
    this.loading ??= (async () => {
      const started = performance.now();
      const pool = this.newPool();
      await pool.start();
      this.pool = pool;
      this.loadCount++;
      this.lastLoadMs = Math.round(performance.now() - started);
      this.options.logger.info({ engine: this.id, loadMs: this.lastLoadMs }, 'engine loaded its model again after idle; this request\'s first audio includes the load');
    })().finally(() => {
      this.loading = null;
    });
    await this.loading;
  }

  /** A Kokoro model's table of mixes (style-mix.ts), unless mixing is off or the model has no style table. */
  private styleTable(layout: ModelLayout): StyleTable | null {
    const slots = this.options.mixSlots ?? 0;
    const shape = styleShape(layout.metadata);
    const speakers = Number(layout.metadata.n_speakers);
    if (layout.family !== 'kokoro' || slots === 0 || !shape || !(speakers >= 1) || !layout.files.model || !layout.files.voices) return null;
    const dir = this.options.mixDir ?? join(tmpdir(), `voicegate-sherpa-mix-${process.pid}`, this.id);
    return new StyleTable({ model: layout.files.model, voices: layout.files.voices }, speakers, slots, shape, dir, () => this.replacePool());
  }

  /**
   * Loads the model again in new workers (a mix was written into the style table): they take new
   * work once ready, and the old ones finish what they hold and stop. Both sets of workers hold the
   * model meanwhile.
   */
  private async replacePool(): Promise<void> {
    const next = this.newPool();
    await next.start();
    if (this.stopped) {
      await next.stop();
      throw new ApiError('engine_unavailable', {}, { 'retry-after': '1' });
    }
    const old = this.pool!;
    this.pool = next;
    this.mixReloads++;
    const retired = old
      .settled(this.options.jobTimeoutMs ?? 60_000)
      .then(() => old.stop())
      .catch((err: unknown) => this.options.logger.warn({ engine: this.id, err }, 'stopping the replaced sherpa-onnx workers failed'))
      .finally(() => this.retiring.delete(retired));
    this.retiring.add(retired);
  }

  private newPool(): WorkerPool<SherpaJob, Float32Array | Uint8Array, never, SherpaReady> {
    return new WorkerPool({
      name: this.id,
      workerUrl: WORKER_URL,
      workerData: this.workerData!,
      workers: this.options.workers,
      queueLimit: this.options.queueLimit,
      highWater: this.options.highWater,
      queueTimeoutMs: this.options.queueTimeoutMs,
      jobTimeoutMs: this.options.jobTimeoutMs,
      cancelGraceMs: this.options.cancelGraceMs,
      // Terminating a worker inside a sherpa-onnx call ends the whole process.
      interruptible: false,
      logger: this.options.logger,
      onReady: (info) => {
        this.sampleRate = info.sampleRate;
        this.numSpeakers = info.numSpeakers - (this.styles?.capacity ?? 0);
      },
    });
  }

  /** The sherpa-onnx build, the model's family and the digest of its files (engines/fingerprint). */
  fingerprint(): string {
    return this.modelDigest ?? 'not started';
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.idleTimer) clearInterval(this.idleTimer);
    await this.loading?.catch(() => {});
    await this.pool?.stop();
    await Promise.all(this.retiring);
  }

  loads(): { count: number; lastMs: number | null } {
    return { count: this.loadCount, lastMs: this.lastLoadMs };
  }

  isReady(): boolean {
    // Let go of while idle, it is still ready: the next request loads it.
    if (!this.pool && this.loadCount > 0 && !this.stopped) return true;
    return this.pool?.isReady() ?? false;
  }

  /** The model's family, once started. */
  get family(): Family | undefined {
    return this.layout?.family;
  }

  /** A cloning family's needs, once started; absent for the others. */
  get cloning(): CloningSupport | undefined {
    if (!this.layout || !CLONING_FAMILIES.has(this.layout.family)) return undefined;
    // ZipVoice conditions on the clip's text as well as its sound; Pocket on the sound alone.
    return { requiresTranscript: this.layout.family === 'zipvoice' };
  }

  supportsVoice(voice: Voice): boolean {
    // A cloning model has no voice of its own: it speaks cloned voices, from their clip.
    if (this.cloning) return hasClip(voice);
    return speakerFor(voice, this.speakerMap()) !== undefined;
  }

  builtinVoices(): Voice[] {
    if (!this.layout || CLONING_FAMILIES.has(this.layout.family)) return [];
    const language = (this.layout.metadata.voice ?? this.options.lang ?? 'en').toLowerCase();
    return builtinSpeakerVoices(this.speakerMap(), `Local neural voice (${this.layout.family} model ${this.layout.dir.split('/').pop()}).`, language);
  }

  info(): EngineInfo {
    return {
      id: this.id,
      type: this.type,
      sampleRate: this.sampleRate,
      ready: this.isReady(),
      family: this.layout?.family ?? null,
      model: this.layout?.dir ?? this.options.model,
      speakers: this.numSpeakers,
      numThreads: this.options.numThreads,
      ...(this.pool?.stats() ?? {}),
      firstSentencesSplit: this.firstSentencesSplit,
      ...(this.styles ? { mixSlots: this.styles.capacity, mixReloads: this.mixReloads } : {}),
      ...(this.options.idleUnloadSeconds !== undefined ? { idleUnloadSeconds: this.options.idleUnloadSeconds, loaded: this.pool !== null, loads: this.loadCount, lastLoadMs: this.lastLoadMs } : {}),
    };
  }

  synthesize(input: EngineInput, signal: AbortSignal): AsyncIterable<EngineChunk> {
    return this.run(input, signal, { chunk: (samples) => ({ samples: samples as Float32Array }) }, (chunk) => chunk.samples.length);
  }

  /** The output stage runs in the worker, on the model's samples (see engines/staged). */
  synthesizeStaged(input: EngineInput, stage: StageCursor, signal: AbortSignal): AsyncIterable<StagedChunk> {
    return this.run(input, signal, { chunk: (bytes, _events, made) => ({ audio: bytes as Uint8Array, made }) }, (chunk) => chunk.made, stage);
  }

  /**
   * One job per sentence (cut as the worker would, at `maxSentenceChars`), each submitted when the
   * one before has ended, so a worker is held by a request for one sentence, not a whole turn: a
   * new request's first sentence goes before the next sentence of one already speaking, until that
   * one's listener is about to run out of audio (WorkerPool.submit), as eSpeak's pool does. Text
   * with `playback` continues what its listener hears: all its sentences queue as continuations.
   * A request's first sentence may go as a head and the rest (firstParts).
   */
  private async *run<T>(input: EngineInput, signal: AbortSignal, decoder: ChunkDecoder<Float32Array | Uint8Array, never, T>, samplesOf: (chunk: T) => number, stage?: StageCursor): AsyncGenerator<T> {
    this.active++;
    this.lastUsed = performance.now();
    try {
      await this.loaded();
      const { job, release } = await this.job(input);
      try {
        yield* this.sentences(job, input, signal, decoder, samplesOf, stage);
      } finally {
        release();
      }
    } finally {
      this.active--;
      this.lastUsed = performance.now();
    }
  }

  private async *sentences<T>(job: SherpaJob, input: EngineInput, signal: AbortSignal, decoder: ChunkDecoder<Float32Array | Uint8Array, never, T>, samplesOf: (chunk: T) => number, stage?: StageCursor): AsyncGenerator<T> {
    const { playback } = input;
    const parts = this.firstParts([...sentences(job.text, this.options.maxSentenceChars)], playback === undefined && input.background !== true);
    let firstAudioAt = playback?.startedAt ?? 0;
    const before = playback?.seconds ?? 0;
    let offset = 0;
    let worked = 0;
    for (const [index, text] of (parts.length > 0 ? parts : [job.text]).entries()) {
      const dueAt = firstAudioAt > 0 ? firstAudioAt + (before + offset) * 1000 - CONTINUATION_LEAD_MS : performance.now();
      const staged = stage ? { stage: { spec: stage.spec, gain: stage.gain, state: stage.state } } : {};
      const stream = this.pool!.submit({ ...job, text }, signal, decoder, {
        continuation: index > 0 || playback !== undefined,
        workedMs: worked,
        dueAt,
        ...staged,
        background: input.background === true,
      });
      let samples = 0;
      for await (const chunk of stream) {
        const made = samplesOf(chunk);
        if (made > 0 && firstAudioAt === 0) firstAudioAt = performance.now();
        samples += made;
        yield chunk;
      }
      // The next sentence's stage continues where this one's ended, on whichever worker it runs.
      if (stage) stage.state = stream.stageState();
      worked += stream.workingMs();
      offset += samples / this.sampleRate;
    }
  }

  /**
   * The first sentence as a short head and the rest, when a listener waits for it (`mayCut`). The
   * model makes a sentence whole before any of it is heard, 150–280 ms for a 7–10-word sentence on
   * an idle worker of `vits-proxy-medium` (2 cores) and 60–115 ms for its head: so a head ending at
   * clause punctuation, where a speaker pauses anyway, always goes first. A head cut between words
   * (spoken with a comma after it, so it ends on a continuing pitch) only while every worker is busy,
   * where the wait for a worker comes on top.
   */
  private firstParts(parts: string[], mayCut: boolean): string[] {
    if (!mayCut || parts.length === 0 || this.options.splitFirstSentence === false) return parts;
    const split = splitHead(parts[0], { betweenWords: !this.pool!.hasIdleWorker() });
    if (!split) return parts;
    this.firstSentencesSplit++;
    return [split.atPunctuation ? split.head : `${split.head},`, split.rest, ...parts.slice(1)];
  }

  /** The worker's job for `input`, and what to free when it is done; throws when the engine cannot speak it. */
  private async job(input: EngineInput): Promise<{ job: SherpaJob; release(): void }> {
    if (!this.pool) throw new ApiError('engine_unavailable', {}, { 'retry-after': '1' });
    const text = input.text.replace(CONTROL, ' ');
    if (this.cloning) {
      const reference = input.reference;
      if (!reference) throw new ApiError('engine_error', { reason: `: voice ${input.voice.id} came without the clip this model clones from` });
      // Samples in shared memory (as the catalogue hands them out) reach the worker uncopied.
      return { job: { text, sid: 0, speed: input.speed, reference: { audio: reference.audio, sampleRate: reference.sampleRate, text: reference.text } }, release: () => {} };
    }
    const mix = (input.voice.profiles['sherpa-onnx'] as SherpaVoiceProfile | undefined)?.mix;
    if (mix && this.styles) {
      const slot = await this.acquireMix(mix);
      // A mix reads in the language of its largest part.
      const lang = this.multilingual ? kokoroLanguage(input.language, this.speakerLanguage(mix[0][0]) ?? input.voice.language) : undefined;
      return { job: { text, sid: slot.sid, speed: input.speed, ...(lang ? { lang } : {}) }, release: slot.release };
    }
    const sid = speakerFor(input.voice, this.speakerMap());
    if (sid === undefined) throw new ApiError('engine_error', { reason: `: voice ${input.voice.id} has no speaker in this model` });
    const lang = this.multilingual ? kokoroLanguage(input.language, this.speakerLanguage(sid) ?? input.voice.language) : undefined;
    return { job: { text, sid, speed: input.speed, ...(lang ? { lang } : {}) }, release: () => {} };
  }

  private async acquireMix(mix: StyleMix): Promise<{ sid: number; release(): void }> {
    try {
      return await this.styles!.acquire(mix);
    } catch (err) {
      if (err instanceof MixTableFull) throw new ApiError('engine_unavailable', {}, { 'retry-after': '1' });
      if (err instanceof ApiError) throw err;
      throw new ApiError('engine_error', { reason: `: the workers could not load the mix (${(err as Error).message})` });
    }
  }

  /**
   * A Kokoro model with a style table mixes: a mix is the weighted mean of its speakers' style
   * vectors (style-mix.ts); one voice left (the others weighed 0) is that speaker.
   */
  mixProfiles(parts: readonly { voice: Voice; weight: number }[]): Voice['profiles'] | null {
    if (!this.styles) return null;
    const map = this.speakerMap();
    const sids = parts.map((part) => speakerFor(part.voice, map));
    if (sids.some((sid) => sid === undefined)) return null;
    if (parts.length === 1) return { 'sherpa-onnx': { engines: { [this.id]: sids[0]! } } satisfies SherpaVoiceProfile };
    return { 'sherpa-onnx': { mix: parts.map((part, i) => [sids[i]!, part.weight] as const) } satisfies SherpaVoiceProfile };
  }

  /** Terminates a busy worker the way a crash would end it; for fault-injection tests and drills. */
  crashBusyWorker(): boolean {
    return this.pool?.crashBusyWorker() ?? false;
  }

  private speakerMap(): SpeakerMap {
    const names = this.layout ? speakerNames(this.layout.metadata, this.numSpeakers) : undefined;
    return { engineId: this.id, numSpeakers: this.numSpeakers, voices: this.options.voices, defaultSpeaker: this.options.defaultSpeaker, ...(names ? { names } : {}) };
  }

  /** A multi-lingual Kokoro model (v1 and later): each sentence is read in the language asked for, or its speaker's. */
  private get multilingual(): boolean {
    return this.layout?.family === 'kokoro' && Number(this.layout.metadata.version ?? 1) >= 2;
  }

  /** The language speaker `sid`'s name says (Kokoro: `ff_siwis` is French), if it says one. */
  private speakerLanguage(sid: number): string | undefined {
    const name = this.speakerMap().names?.[sid];
    return name ? describeSpeaker(name)?.language : undefined;
  }
}
