/**
 * @module synthesis/pipeline
 * The shared synthesis pipeline: segment by segment (`segments.ts`), engine
 * → gain (the voice's loudness gain × volume) → resample → encode, chunk by
 * chunk with resampler and encoder state carried across chunks and
 * segments, so every transport streams the first audio as soon as the
 * engine makes it. For PCM answers gain, resampling and encoding are one
 * output stage (audio/output-stage), which an engine on worker threads runs
 * there (engines/staged), carrying its state from job to job. A silence
 * segment is zeros at the engine's rate fed through the same stage or
 * resampler, so it lasts exactly its length in the output.
 * Whole clips are the same stream collected, with a WAV header that knows
 * its size. Word timestamps name the transcript's own words: the engine's
 * words are mapped back through each segment's text map and aligned to them
 * (`word-align.ts`), on the request's clock or the turn's.
 */
import { createAudioEncoder, finalWavHeader } from '../audio/encoder.js';
import { opusSourceRate } from '../audio/opus.js';
import { OutputStage, stageSpecFor } from '../audio/output-stage.js';
import { applyGainInt16, floatWithGain } from '../audio/pcm.js';
import { createResampler } from '../audio/resampler.js';
import type { EngineChunk, EngineInput, WordTiming } from '../engines/engine.js';
import { offersInt16, type Int16Chunk, type Int16Engine } from '../engines/pcm16.js';
import { offersStaging, type StageCursor, type StagedChunk, type StagingEngine } from '../engines/staged.js';
import { ApiError } from '../errors/api-error.js';
import { speakerAt } from './dialogue.js';
import type { SynthesisRequest } from './request.js';
import { diagnostics, type SynthesisEngineSegment } from './diagnostics.js';
import { requestWords, segmentUnits } from './word-align.js';

export interface AudioPiece {
  /** Encoded audio (a streamed WAV's header is prepended to the first piece). */
  audio: Buffer;
  /** The transcript's words whose timing became known with this piece, on the request's (or turn's) clock. */
  words?: WordTiming[];
  /** Milliseconds spent making this piece (engine, resampling, encoding). */
  stepTime: number;
  /** Seconds of audio the engine made for this piece. */
  seconds: number;
  /** SSML marks passed before this piece's audio, each at its time on the request's clock (seconds from its start). */
  marks?: MarkTiming[];
}

export interface MarkTiming {
  name: string;
  time: number;
}

/** An engine that answers with no audio at all has failed; nothing is charged for it. */
function noAudio(request: SynthesisRequest): ApiError {
  // Remote servers have their own code, so an operator knows where to look.
  return request.engine.type.endsWith('-upstream')
    ? new ApiError('upstream_error', { model: request.model.id, reason: 'the server answered with no audio' })
    : new ApiError('engine_error', { reason: ': the engine produced no audio' });
}

/** Float32 samples of little-endian f32 bytes: a view where the bytes are aligned, else a copy. */
function float32Of(bytes: Buffer): Float32Array {
  if (bytes.byteOffset % 4 === 0) return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2);
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

/** Why an engine segment ended early when its consumer stopped reading; one shared instance. */
const STOPPED = Object.freeze(new Error('stopped before the engine finished'));

/** Silence is handed on in pieces of at most this long, so a long break streams like speech. */
const SILENCE_PIECE_SECONDS = 0.1;

export async function* synthesizeAudio(request: SynthesisRequest, signal: AbortSignal): AsyncGenerator<AudioPiece> {
  const { engine, format } = request;
  const rate = engine.sampleRate;
  // An engine that makes 16-bit samples hands them over as they are, for every output that keeps
  // 16 bits or fewer (f32 keeps the engine's floats). For s16 at the engine's rate they become the
  // bytes (scaled in one pass when the gain is not 1): no stage, no resampler.
  const int16 = offersInt16(engine) && format.encoding !== 'pcm_f32le';
  const asMade = int16 && rate === format.sampleRate && format.encoding === 'pcm_s16le';
  // Opus decodes to 48 kHz whatever it was made from: it is made from the lowest rate it takes that
  // holds the engine's whole band (22,050 Hz speech from 24 kHz), so less is resampled and encoded.
  const encoded = format.container === 'opus' ? { ...format, sampleRate: opusSourceRate(rate, format.sampleRate) } : format;
  // MP3 and Opus are encoded from Float32 at the rate they are made from: when a FIR filter joins
  // the rates, that PCM comes from an output stage like any PCM answer's, and the encoder thread
  // takes it from there.
  const compressed = encoded.container === 'mp3' || encoded.container === 'opus' || encoded.container === 'flac';
  // Every other PCM answer whose rates a FIR filter joins goes through one output stage: in the
  // engine's worker threads when the engine offers that (engines/staged), on this thread otherwise.
  const spec = asMade ? null : stageSpecFor(rate, compressed ? { container: 'raw', encoding: 'pcm_f32le', sampleRate: encoded.sampleRate } : format);
  let stage = spec ? new OutputStage(spec) : null;
  const cursor: StageCursor | null = spec && offersStaging(engine) ? { spec, gain: 1, state: stage!.state() } : null;
  // The rest (rate pairs Speex handles): resampler and encoder here.
  const resampler = stage || rate === encoded.sampleRate ? null : await createResampler(rate, encoded.sampleRate);
  const encoder = await createAudioEncoder(encoded, { streaming: request.streaming });
  let header = request.streaming ? encoder.header() : null;
  /** A stage's bytes as they go out: as they are for PCM, through the encoder for MP3 and Opus. */
  const fromStage = (bytes: Buffer): Buffer | Promise<Buffer> => (compressed ? encoder.encode(float32Of(bytes)) : bytes);
  const encodeHere = (chunk: Float32Array | Int16Array, gain: number): Buffer | Promise<Buffer> => {
    if (stage) return fromStage(stage.encode(chunk, gain));
    if (asMade) return encoder.encodeInt16!(gain === 1 ? (chunk as Int16Array) : applyGainInt16(chunk as Int16Array, gain));
    const samples = floatWithGain(chunk, gain);
    return encoder.encode(resampler ? resampler.process(samples) : samples);
  };
  const withHeader = (audio: Buffer): Buffer => {
    if (!header) return audio;
    const joined = Buffer.concat([header, audio]);
    header = null;
    return joined;
  };
  // The words of the request, or of the turn this request is part of (a WebSocket clause).
  const { speakers } = request;
  const track = request.wordTimestamps ? (request.words ?? requestWords(request.transcript, request.markup, speakers && ((at) => speakerAt(speakers, at)))) : null;
  let samples = 0;
  /** Seconds of audio before the current segment: later segments' word timings count from the start. */
  let offset = 0;
  /** When this request's first audio was handed on: later segments continue what is being heard. */
  let firstAudioAt = request.playback?.startedAt ?? 0;
  const before = request.playback?.seconds ?? 0;
  let started = performance.now();
  /** Marks passed and not yet handed on: they go with the next piece, so none opens a stream before its audio. */
  const marks: MarkTiming[] = [];
  const withMarks = (piece: AudioPiece): AudioPiece => (marks.length > 0 ? { ...piece, marks: marks.splice(0) } : piece);
  // Each engine segment's times are taken only while someone listens (tracing): otherwise no clock is read.
  const timed = diagnostics.engine.hasSubscribers;
  let timing: SynthesisEngineSegment | null = null;
  try {
    for (const [index, segment] of request.segments.entries()) {
      if (segment.kind === 'mark') {
        marks.push({ name: segment.name, time: offset });
        continue;
      }
      if (segment.kind === 'silence') {
        let left = Math.round(segment.seconds * rate);
        offset += left / rate;
        samples += left;
        while (left > 0) {
          signal.throwIfAborted();
          const length = Math.min(left, Math.max(1, Math.round(SILENCE_PIECE_SECONDS * rate)));
          left -= length;
          const audio = await encodeHere(asMade ? new Int16Array(length) : new Float32Array(length), 1);
          if (audio.length === 0) continue;
          if (firstAudioAt === 0) firstAudioAt = performance.now();
          yield withMarks({ audio: withHeader(audio), stepTime: performance.now() - started, seconds: length / rate });
          started = performance.now();
        }
        continue;
      }
      // Words handed out from here on carry what the engine was given for them (normalised, aliased).
      if (track) track.aligner.addSpoken(segment.source, track.textAt);
      // A dialogue's turn is spoken in its speaker's voice.
      const speaker = segment.speaker !== undefined && speakers ? speakers[segment.speaker] : null;
      const input: EngineInput = { text: segment.text, voice: speaker?.voice ?? request.voice, speed: segment.speed, ...(segment.pitch !== undefined ? { pitch: segment.pitch } : {}), language: segment.language ?? request.language ?? undefined, wordTimings: request.wordTimestamps, ...(request.background ? { background: true } : {}) };
      // SSML's phonemes and the text's language reach only an engine that speaks them; any other speaks the text.
      if (segment.phonemes && engine.takes?.phonemes) input.phonemes = segment.phonemes;
      if (segment.language && engine.takes?.languages) input.textLanguage = segment.language;
      const reference = speaker ? speaker.reference : request.reference;
      if (reference) input.reference = reference;
      if (firstAudioAt > 0) input.playback = { startedAt: firstAudioAt, seconds: before + offset };
      let made = 0;
      /** Where the engine's words stop being looked for in the segment's text (engines that report no positions). */
      const located = { at: 0 };
      if (cursor) {
        cursor.gain = segment.gain;
        cursor.state = stage!.state();
      }
      if (timed) {
        const now = performance.now();
        timing = { requestId: request.requestId, engine: engine.id, index, characters: segment.text.length, startedAt: now, firstChunkAt: null, endedAt: now, encodeMs: 0, seconds: 0 };
      }
      const chunks: AsyncIterable<EngineChunk | Int16Chunk | StagedChunk> = cursor
        ? (engine as StagingEngine).synthesizeStaged(input, cursor, signal)
        : int16
          ? (engine as Int16Engine).synthesizeInt16(input, signal)
          : engine.synthesize(input, signal);
      for await (const chunk of chunks) {
        // Bytes from the engine's workers, or samples to encode here.
        const from = 'audio' in chunk ? chunk.made : chunk.samples.length;
        made += from;
        const encodeStart = timing ? performance.now() : 0;
        if (timing) timing.firstChunkAt ??= encodeStart;
        let audio = 'audio' in chunk ? fromStage(Buffer.from(chunk.audio.buffer, chunk.audio.byteOffset, chunk.audio.byteLength)) : encodeHere(chunk.samples, segment.gain);
        if (audio instanceof Promise) audio = await audio; // MP3: frames from the encoder thread
        if (timing) timing.encodeMs += performance.now() - encodeStart;
        if (audio.length === 0 && !chunk.words) continue;
        if (firstAudioAt === 0 && audio.length > 0) firstAudioAt = performance.now();
        const stepTime = performance.now() - started;
        const seconds = from / rate;
        const words = track && chunk.words ? track.aligner.add(segmentUnits(chunk.words, segment.source, track, track.secondsAt + offset, located)) : [];
        if (audio.length === 0 && words.length === 0) continue;
        yield withMarks(words.length > 0 ? { audio: withHeader(audio), words, stepTime, seconds } : { audio: withHeader(audio), stepTime, seconds });
        started = performance.now();
      }
      // Silence and the tail continue where the engine's workers left the stream.
      if (cursor) stage = new OutputStage(cursor.spec, cursor.state);
      samples += made;
      offset += made / rate;
      if (timing) {
        timing.endedAt = performance.now();
        timing.seconds = made / rate;
        diagnostics.engine.publish(timing);
        timing = null;
      }
    }
    if (samples === 0) throw noAudio(request);
    const held = stage ? await fromStage(stage.flush()) : resampler ? await encoder.encode(resampler.flush()) : null;
    const tail = held ? Buffer.concat([held, await encoder.end()]) : await encoder.end();
    // Everything this request's text holds has been spoken: its words are known (a turn's last may go on).
    const words = track ? track.aligner.settle(track.secondsAt + offset, track.last) : [];
    const piece: AudioPiece = { audio: withHeader(tail), stepTime: performance.now() - started, seconds: 0 };
    if (words.length > 0) piece.words = words;
    if (tail.length > 0 || piece.audio.length > 0 || words.length > 0 || marks.length > 0) yield withMarks(piece);
  } catch (err) {
    if (timing) timing.error = err;
    throw err;
  } finally {
    // A segment the engine did not finish (a failure, or its consumer stopped reading) is reported too.
    if (timing) {
      timing.endedAt = performance.now();
      timing.error ??= STOPPED;
      diagnostics.engine.publish(timing);
    }
    resampler?.destroy();
    encoder.close?.();
  }
}

/**
 * The request a clip is made from: not streamed, and without timestamps unless `timings` asks for
 * them (a clip rendered with its timings, JSON with audio and alignment); without, the engine need
 * not report words.
 */
export function clipRequest(request: SynthesisRequest, timings = false): SynthesisRequest {
  return { ...request, streaming: false, wordTimestamps: timings && request.wordTimestamps };
}

/**
 * Collects a clip's pieces (from the pipeline or the audio cache) into the finished clip (WAV with
 * its real size), and the words the pieces carried. One piece is returned as is; several are
 * joined once: one copy costs less than writing them out one by one.
 */
export async function collectClip(source: AsyncIterable<AudioPiece>, format: SynthesisRequest['format']): Promise<{ audio: Buffer; seconds: number; words: WordTiming[] }> {
  const pieces: Buffer[] = [];
  const words: WordTiming[] = [];
  let size = 0;
  let seconds = 0;
  for await (const piece of source) {
    seconds += piece.seconds;
    if (piece.words) for (const word of piece.words) words.push(word);
    if (piece.audio.length === 0) continue;
    pieces.push(piece.audio);
    size += piece.audio.length;
  }
  if (format.container === 'wav') pieces.unshift(finalWavHeader(format, size));
  return { audio: pieces.length === 1 ? pieces[0] : Buffer.concat(pieces), seconds, words };
}

/** The finished clip of audio already joined (a stored entry's): as is, or after a WAV header that knows its size. */
export function storedClip(audio: Buffer, format: SynthesisRequest['format']): Buffer {
  return format.container === 'wav' ? Buffer.concat([finalWavHeader(format, audio.length), audio]) : audio;
}

/** Runs the whole synthesis and returns the finished clip. */
export function renderClip(request: SynthesisRequest, signal: AbortSignal): Promise<{ audio: Buffer; seconds: number }> {
  return collectClip(synthesizeAudio(clipRequest(request), signal), request.format);
}
