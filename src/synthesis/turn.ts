/**
 * @module synthesis/turn
 * A streaming-text turn (a WebSocket context, in any dialect): text arriving
 * in messages is buffered to clause boundaries (never inside a tag), spoken
 * segment by segment through the shared pipeline and handed to the turn's
 * `TurnOutput` in order, with the words of the turn on the turn's clock (one
 * aligner for the turn, so a word split across messages is reported once),
 * a flush's end and the turn's end. The output frames them in its dialect;
 * this module knows no wire shape. A turn made with `wordsWithAudio` hands
 * the output no audio before the words that start in it are known: each
 * piece comes with (or after) the words starting in it, never words after
 * their audio (ElevenLabs' `sync_alignment`).
 *
 * The turn is one synthesis session with the batched billing policy
 * (`turn-billing.ts`): audio counts as delivered only once the output says
 * the socket has taken it, and a charge that cannot be written ends the turn
 * with its error; the last batch is charged before `done` is sent, so that
 * holds for it too. The session's release runs once every charge is written.
 */
import { createAudioEncoder } from '../audio/encoder.js';
import { bytesPerSample, type OutputFormat } from '../audio/format.js';
import { opusSourceRate } from '../audio/opus.js';
import { ApiError } from '../errors/api-error.js';
import type { WordTiming } from '../engines/engine.js';
import type { Logger } from '../log/logger.js';
import { beforeUnfinishedNumber, takeClauses } from './clauses.js';
import type { MarkTiming } from './pipeline.js';
import type { SynthesisRequest } from './request.js';
import { segmentsOf, speechSegments } from './segments.js';
import type { SynthesisSession } from './session.js';
import { readSsml } from './ssml.js';
import { countTranscriptCharacters, cutAllowed, speakablePrefix } from './tags.js';
import { TurnBilling } from './turn-billing.js';
import { WordAligner } from './word-align.js';

/** A piece of a turn's audio, with the words and marks that became known with it, all on the turn's clock. */
export interface TurnPiece {
  /** Encoded audio; may be empty (a piece that only carries words or marks). */
  audio: Buffer;
  /** Milliseconds spent making it. */
  stepTime: number;
  /** How long this piece's audio lasts, in seconds. */
  seconds: number;
  words?: WordTiming[];
  marks?: MarkTiming[];
}

/** Where a turn's results go: the dialect's framing on its socket. */
export interface TurnOutput {
  /** A piece; resolves true once its audio (if any) has been taken by the socket, false when the socket is not open. */
  piece(turn: TextTurn, piece: TurnPiece): Promise<boolean>;
  /** Words that became known with no new audio (a flush, the end of the turn). */
  words(turn: TextTurn, words: WordTiming[]): Promise<void>;
  /** A flush's text has all been spoken. */
  flushed(turn: TextTurn, id: number | string): Promise<void>;
  /** One clause (or whole document) of the turn has been spoken, for a dialect that frames each clause's audio apart. */
  spoken?(turn: TextTurn): Promise<void>;
  /** The turn ended normally: everything was spoken. */
  done(turn: TextTurn): Promise<void>;
  /** The turn ends with an error. */
  failed(turn: TextTurn, error: ApiError): Promise<void>;
  /** Called once when the turn has ended, for whatever reason. */
  ended(turn: TextTurn): void;
  log: Logger;
}

export interface TurnInput {
  transcript: string;
  /** The transcript is a whole SSML document: spoken as one piece, never cut into clauses. */
  ssml: boolean;
  /** Its characters for limits and billing (`tags.ts`, or the spoken text of SSML). */
  characters: number;
  continue: boolean;
  flush: boolean;
  /** The client's own `flush_id`, echoed in `flush_done`; absent: the context counts flushes from 1. */
  flushId?: number | string;
  maxBufferDelayMs: number;
  /**
   * Lengths (characters) at which an unfinished clause is spoken up to its last whole word at once,
   * without waiting for its end: the first for the turn's first such cut, the next for the next, the
   * last for every later one (ElevenLabs' `chunk_length_schedule`).
   */
  cutSchedule?: readonly number[];
}

/** A text to speak (an SSML document with its characters as counted when it came), or a flush. */
type Item = { kind: 'text'; text: string; ssml?: boolean; characters?: number } | { kind: 'flush'; id: number | string };

export interface TurnOptions {
  /**
   * Hold each piece of audio until the words starting in it are known, and hand those words with it
   * (or with an earlier piece): a word's alignment never comes after its audio. Costs the time the
   * engine takes to make one word (its end is known when the next word starts).
   */
  wordsWithAudio?: boolean;
  /**
   * Each flush ends a reply the client plays: the audio after it is first audio again, not the
   * continuation of what was playing (Deepgram's socket is a conversation, a `Flush` a reply's end).
   */
  flushEndsPlayback?: boolean;
}

export class TextTurn {
  private pending = '';
  private readonly queue: Item[] = [];
  private inputClosed = false;
  private over = false;
  private wake: (() => void) | null = null;
  private readonly abort = new AbortController();
  private flushes = 0;
  private offsetSeconds = 0;
  /** When this context's first audio went to the socket (`performance.now()` ms); 0 before. */
  private firstAudioAt = 0;
  /** Where on the turn's clock what the client plays now began (`restartPlayback`). */
  private playbackFrom = 0;
  private bufferTimer: NodeJS.Timeout | null = null;
  private readonly lifetimeTimer: NodeJS.Timeout;
  private readonly wordsWithAudio: boolean;
  private readonly flushEndsPlayback: boolean;
  /** Where the words handed out so far end, on the turn's clock (`wordsWithAudio`). */
  private wordsKnownTo = 0;
  private readonly billing: TurnBilling;
  private readonly template: SynthesisRequest;
  /** The turn's words, when it asked for timestamps. */
  private readonly words: WordAligner | null;
  private settled: Promise<void> = Promise.resolve();
  /** Messages taken so far. */
  private messages = 0;
  /** Unfinished clauses cut by length so far (`cutSchedule`). */
  private cuts = 0;
  /** Audio is being made or sent now (not only waiting for more text). */
  private speaking = false;
  /** A compressed turn's one encoder (`turnEncoder`). */
  private encoding: Promise<TurnEncoder | null> | null = null;
  /**
   * The turn came whole in its first message (neither `continue` nor `flush`): it is one response,
   * which the audio cache may answer and keep. A turn built from several messages never is.
   */
  private wholeTurn = false;
  /** Stops the clause being spoken (`cancelUnspoken`), not the turn. */
  private clause: AbortController | null = null;

  /** The model that made this turn's first audio (a fallback's after a fall-over): what it is priced by, and its `done` names. */
  get servedModel(): string {
    return this.session.servedModel;
  }

  constructor(
    readonly id: string,
    private readonly session: SynthesisSession,
    private readonly output: TurnOutput,
    lifetimeMs: number,
    options: TurnOptions = {},
  ) {
    this.template = session.synthesis;
    this.words = this.template.wordTimestamps ? new WordAligner() : null;
    this.wordsWithAudio = options.wordsWithAudio === true && this.words !== null;
    this.flushEndsPlayback = options.flushEndsPlayback === true;
    this.billing = new TurnBilling(session, (err) => {
      // A charge after the turn ended (the client left mid-turn) has no one to tell, but is still reported.
      if (this.over) this.output.log.error({ err, context_id: this.id, request_id: this.requestId }, 'could not record a websocket charge');
      else this.failWith(err, 'could not record a websocket charge');
    });
    this.lifetimeTimer = setTimeout(
      () => this.fail(new ApiError('context_expired', { id, seconds: Math.round(lifetimeMs / 1000) })),
      lifetimeMs,
    );
    this.lifetimeTimer.unref();
    // The socket closed (or the session ended): stop at once, as a cancel does.
    if (session.signal.aborted) queueMicrotask(() => this.cancel());
    else session.signal.addEventListener('abort', () => this.cancel(), { once: true });
    void this.run();
  }

  get requestId(): string {
    return this.template.requestId;
  }

  get model() {
    return this.template.model;
  }

  /**
   * Takes one message's text. Messages of a context must be given in order. Complete clauses are
   * spoken at once; an unfinished one waits for more text at most `max_buffer_delay_ms` from when
   * it started (0: it is spoken now). A tag or `<spell>` run is never cut, and one still arriving
   * waits for the rest, up to a flush or the end of input.
   */
  async accept(input: TurnInput): Promise<void> {
    if (this.over) return;
    let accepted: boolean;
    try {
      accepted = await this.billing.accept(input.characters);
    } catch (err) {
      return this.failWith(err, 'could not reserve credits for a websocket turn');
    }
    if (!accepted) return this.fail(new ApiError('insufficient_credits', { balance: '≤ 0' }));
    if (this.over) return;
    if (this.messages++ === 0 && !input.continue && !input.flush) this.wholeTurn = true;
    if (input.ssml) {
      // A whole document: what was buffered before it is spoken first, then the document as one piece.
      this.enqueuePending();
      this.queue.push({ kind: 'text', text: input.transcript, ssml: true, characters: input.characters });
      if (input.flush) this.queue.push({ kind: 'flush', id: input.flushId ?? ++this.flushes });
      else if (!input.continue) this.inputClosed = true;
      return this.notify();
    }
    this.pending += input.transcript;
    if (input.flush) {
      this.enqueuePending();
      this.queue.push({ kind: 'flush', id: input.flushId ?? ++this.flushes });
    } else if (input.continue) {
      const { clauses, rest } = takeClauses(this.pending, this.template.spokenLanguage);
      for (const text of clauses) this.queue.push({ kind: 'text', text });
      this.pending = rest;
      // The text the timer waited for is spoken now: what is left starts its own wait.
      if (clauses.length > 0 || !rest.trim()) this.clearBufferTimer();
      if (rest.trim()) {
        if (input.maxBufferDelayMs <= 0) this.enqueueSpeakable();
        else {
          const schedule = input.cutSchedule;
          if (schedule && schedule.length > 0 && rest.length >= schedule[Math.min(this.cuts, schedule.length - 1)]) {
            this.cuts++;
            this.enqueueSpeakable(true);
          }
          if (this.pending.trim()) this.bufferTimer ??= setTimeout(() => (this.bufferTimer = null, this.enqueueSpeakable(), this.notify()), input.maxBufferDelayMs);
        }
      }
    } else {
      this.enqueuePending();
      this.inputClosed = true;
    }
    this.notify();
  }

  /**
   * No more text will come: what was already queued to be spoken (clauses, flushes) is spoken, text
   * still buffered in an unfinished clause is dropped, and the turn then ends as it does at the end
   * of input (ElevenLabs' `close_context`).
   */
  close(): void {
    if (this.over) return;
    this.clearBufferTimer();
    this.pending = '';
    this.inputClosed = true;
    this.notify();
  }

  /**
   * Barge-in: the text not yet begun (queued clauses, an unfinished one) is dropped and not charged;
   * the clause being spoken stops at once and is charged whole, as it had begun. Flushes already
   * asked for are still answered, in order, and the turn stays open for more text.
   */
  cancelUnspoken(): void {
    if (this.over) return;
    this.clearBufferTimer();
    let dropped = countTranscriptCharacters(this.pending);
    this.pending = '';
    for (const item of this.queue) if (item.kind === 'text') dropped += item.characters ?? countTranscriptCharacters(item.text);
    const flushes = this.queue.filter((item) => item.kind === 'flush');
    this.queue.splice(0, this.queue.length, ...flushes);
    this.clause?.abort(new Error('cancelled'));
    // The client stopped playing: the next audio is first audio (the stopped clause restarts it again as it ends).
    this.restartPlayback();
    this.billing.drop(dropped);
    this.notify();
  }

  /** Whether the turn is making or sending audio, or has text queued to speak (not only waiting for text). */
  get busy(): boolean {
    return !this.over && (this.speaking || this.queue.length > 0);
  }

  /** Client cancel or disconnect: no more audio, nothing more sent. */
  cancel(): void {
    if (this.over) return;
    this.end();
  }

  /** Ends the turn with an error event. */
  fail(error: ApiError): void {
    if (this.over) return;
    this.session.fail(error);
    void this.output.failed(this, error);
    this.end();
  }

  private failWith(err: unknown, what: string): void {
    if (this.over) return;
    const error = this.session.fail(err);
    if (error.status >= 500) this.output.log.error({ err, context_id: this.id, request_id: this.requestId }, what);
    this.fail(error);
  }

  isOver(): boolean {
    return this.over;
  }

  /** Queues everything buffered (a flush, the end of input). */
  private enqueuePending(): void {
    this.clearBufferTimer();
    // Text of only whitespace is queued too: it still separates the words around it.
    if (this.pending) this.queue.push({ kind: 'text', text: this.pending });
    this.pending = '';
  }

  /**
   * Queues what is buffered but a tag, a `<spell>` run or a number still arriving, which waits for
   * its rest; `wholeWords`: also a last word that more text may continue.
   */
  private enqueueSpeakable(wholeWords = false): void {
    this.clearBufferTimer();
    // A number still arriving waits for its rest too, so it is read whole (never cutting a tag for it).
    const speakable = speakablePrefix(this.pending);
    const beforeNumber = beforeUnfinishedNumber(this.pending.slice(0, speakable));
    let end = cutAllowed(this.pending, beforeNumber) ? beforeNumber : speakable;
    if (wholeWords) {
      const space = this.pending.slice(0, end).search(/\s\S*$/u);
      if (space > 0 && cutAllowed(this.pending, space + 1)) end = space + 1;
    }
    const text = this.pending.slice(0, end);
    if (text) this.queue.push({ kind: 'text', text });
    this.pending = this.pending.slice(end);
  }

  private clearBufferTimer(): void {
    if (this.bufferTimer) clearTimeout(this.bufferTimer);
    this.bufferTimer = null;
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private async run(): Promise<void> {
    try {
      for (;;) {
        if (this.over) return;
        const item = this.queue.shift();
        if (!item) {
          if (this.inputClosed) break;
          await new Promise<void>((resolve) => (this.wake = resolve));
          continue;
        }
        if (item.kind === 'flush') {
          // A flush ends the word it cuts: its timestamps come before flush_done.
          this.words?.endWord();
          await this.sendWords(this.words?.settle(this.offsetSeconds, false));
          await this.output.flushed(this, item.id);
          if (this.flushEndsPlayback) this.restartPlayback();
        } else {
          this.speaking = true;
          try {
            await this.speak(item.text, item.ssml === true);
            if (!this.over) await this.output.spoken?.(this);
          } finally {
            this.speaking = false;
          }
        }
      }
      if (this.over) return;
      await this.finishEncoding();
      if (this.over) return;
      await this.sendWords(this.words?.settle(this.offsetSeconds, true));
      // The last batch is charged (or journaled) before `done`: a charge that cannot be recorded ends
      // the turn with its error while it is still open, instead of being dropped after it.
      await this.billing.finish();
      if (this.over) return;
      await this.output.done(this);
      this.end();
    } catch (err) {
      this.failWith(err, 'websocket generation failed');
    }
  }

  private async speak(text: string, ssml: boolean): Promise<void> {
    // Billing counts the text as received (in accept); tags and the dictionary change only what is spoken.
    const { model, settings, streaming, pronunciation, voiceGain, normalize, spokenLanguage } = this.template;
    const context = { model, settings, streaming, pronunciation, voiceGain, normalize, ...(spokenLanguage ? { language: spokenLanguage } : {}) };
    const reading = ssml ? readSsml(text) : null;
    const segments = reading ? segmentsOf(reading.segments, context) : speechSegments(text, context);
    // Every piece of text joins the turn's words, in order, whether or not it has anything to speak.
    const textAt = this.words?.addText(text, reading?.markup) ?? 0;
    if (segments.length === 0) return;
    const synthesis: SynthesisRequest = { ...this.template, transcript: text, segments, characters: reading ? reading.characters : countTranscriptCharacters(text) };
    if (reading) synthesis.markup = reading.markup;
    else delete synthesis.markup;
    // Its last word is complete once spoken when no text can continue it: a whole turn's text (as an
    // HTTP request's), text a flush follows, or the last text of a closed input.
    const last = this.wholeTurn || this.queue[0]?.kind === 'flush' || (this.inputClosed && this.queue.length === 0);
    if (this.words) synthesis.words = { aligner: this.words, textAt, secondsAt: this.offsetSeconds, last };
    // A later clause continues what the client is already playing: the engine may serve others' first audio before it.
    if (this.firstAudioAt > 0) synthesis.playback = { startedAt: this.firstAudioAt, seconds: this.offsetSeconds - this.playbackFrom };
    // A compressed turn's clauses are made as PCM and encoded here by the turn's one encoder, so the
    // turn is one MP3 or Ogg Opus stream (one Ogg stream, no encoder delay at each clause).
    const encoder = await this.turnEncoder();
    if (encoder) synthesis.format = encoder.pcm;
    // The turn's clock, by the bytes of its clauses' PCM (exact).
    const { format } = synthesis;
    const bytesPerSecond = bytesPerSample(format.encoding ?? 'pcm_s16le') * format.sampleRate;
    let bytes = 0;
    const clauseAt = this.offsetSeconds;
    /** Pieces waiting for the words that start in them (`wordsWithAudio`), each with where it ends on the turn's clock. */
    const held: { piece: TurnPiece; end: number; pcm: boolean }[] = [];
    let words: WordTiming[] = [];
    const clause = (this.clause = new AbortController());
    for await (const piece of untilCancelled(this.session.pieces(synthesis, AbortSignal.any([this.abort.signal, clause.signal]), { cache: this.wholeTurn }), clause.signal)) {
      if (this.over) return;
      if (clause.signal.aborted) break;
      bytes += piece.audio.length;
      const audio = encoder && piece.audio.length > 0 ? await encoder.encode(piece.audio) : piece.audio;
      if (this.over) return;
      const out: TurnPiece = { audio, stepTime: piece.stepTime, seconds: piece.seconds };
      if (piece.words && piece.words.length > 0) out.words = piece.words;
      // Marks on the turn's clock, before the audio that starts where they stand.
      if (piece.marks) out.marks = piece.marks.map((m) => ({ name: m.name, time: clauseAt + m.time }));
      if (!this.wordsWithAudio) {
        if (!(await this.deliver(out, piece.audio.length > 0))) return;
        continue;
      }
      // Held until the words that start in it are known: the next word's start ends the one before.
      if (out.words) {
        words = words.concat(out.words);
        this.wordsKnownTo = Math.max(this.wordsKnownTo, out.words.at(-1)!.end);
        delete out.words;
      }
      if (out.audio.length > 0 || out.marks) held.push({ piece: out, end: clauseAt + bytes / bytesPerSecond, pcm: piece.audio.length > 0 });
      while (held.length > 0 && held[0].end <= this.wordsKnownTo) {
        const next = held.shift()!;
        if (!(await this.deliver(withWords(next.piece, words), next.pcm))) return;
        words = [];
      }
    }
    if (this.clause === clause) this.clause = null;
    if (clause.signal.aborted) {
      this.offsetSeconds = clauseAt + bytes / bytesPerSecond;
      this.restartPlayback();
      return;
    }
    // The clause is spoken: what is held goes (a word that more text may continue is timed later).
    for (const next of held) {
      if (!(await this.deliver(withWords(next.piece, words), next.pcm))) return;
      words = [];
    }
    if (words.length > 0 && !(await this.deliver(withWords({ audio: Buffer.alloc(0), stepTime: 0, seconds: 0 }, words), false))) return;
    this.offsetSeconds = clauseAt + bytes / bytesPerSecond;
  }

  /** What the client plays ended (a reply's end, a barge-in): the next audio is first audio. */
  private restartPlayback(): void {
    this.firstAudioAt = 0;
    this.playbackFrom = this.offsetSeconds;
  }

  /** Hands the output a piece; false when the socket is closing (the turn is then cancelled). `pcm`: it holds audio the engine made. */
  private async deliver(out: TurnPiece, pcm: boolean): Promise<boolean> {
    // Only audio the socket took counts as delivered (a closing socket drops it).
    if (!(await this.output.piece(this, out))) {
      // The socket is closing: the client has left, whether or not its close event has come yet.
      this.session.leave();
      this.cancel();
      return false;
    }
    if (out.audio.length > 0) {
      if (this.firstAudioAt === 0) this.firstAudioAt = performance.now();
      this.billing.audioDelivered();
    }
    if (pcm) this.session.delivered(out.seconds);
    return true;
  }

  /**
   * The turn's encoder when its format is compressed (MP3, Ogg Opus): made on first use, with the
   * PCM format its clauses are made in (16-bit at the rate it encodes from). Null for PCM.
   */
  private turnEncoder(): Promise<TurnEncoder | null> | null {
    const { format } = this.template;
    if (format.container !== 'mp3' && format.container !== 'opus' && format.container !== 'flac') return null;
    this.encoding ??= openTurnEncoder(format, this.template.engine.sampleRate);
    return this.encoding;
  }

  /** The end of a compressed turn's stream (the encoder's last frames, Ogg's last page), sent before the turn's end. */
  private async finishEncoding(): Promise<void> {
    const encoder = await this.encoding;
    if (!encoder) return;
    const tail = await encoder.end();
    if (tail.length === 0 || this.over) return;
    if (!(await this.output.piece(this, { audio: tail, stepTime: 0, seconds: 0 }))) {
      this.session.leave();
      this.cancel();
    }
  }

  /** Words already on the turn's clock; none for none. */
  private async sendWords(words: WordTiming[] | undefined): Promise<void> {
    if (words && words.length > 0 && !this.over) await this.output.words(this, words);
  }

  private end(): void {
    this.over = true;
    void this.encoding?.then((encoder) => encoder?.close()).catch(() => {});
    this.abort.abort(new Error('context ended'));
    this.clearBufferTimer();
    clearTimeout(this.lifetimeTimer);
    this.notify();
    // Release comes after the last charge is written, so the reservation it settles is still held.
    this.settled = this.billing.finish().finally(() => this.session.end());
    this.output.ended(this);
  }

  /** Resolves when every charge of this turn has been written and the turn released. */
  done(): Promise<void> {
    return this.settled;
  }
}

/** A clause's pieces, ending quietly (not with the abort's error) once `cancelled` has aborted. */
async function* untilCancelled<T>(pieces: AsyncGenerator<T>, cancelled: AbortSignal): AsyncGenerator<T> {
  try {
    yield* pieces;
  } catch (err) {
    if (!cancelled.aborted) throw err;
  }
}

/** `piece` with `words` (none: as it is). */
function withWords(piece: TurnPiece, words: WordTiming[]): TurnPiece {
  return words.length > 0 ? { ...piece, words } : piece;
}

/** One encoder for a whole compressed turn: its clauses' 16-bit PCM in, the stream's bytes out. */
interface TurnEncoder {
  /** The format the turn's clauses are made in. */
  pcm: OutputFormat;
  encode(pcm: Buffer): Promise<Buffer>;
  end(): Promise<Buffer>;
  close(): void;
}

async function openTurnEncoder(format: OutputFormat, engineRate: number): Promise<TurnEncoder> {
  // Opus is made from the lowest rate that holds the engine's band, as the pipeline makes it.
  const rate = format.container === 'opus' ? opusSourceRate(engineRate, format.sampleRate) : format.sampleRate;
  const encoder = await createAudioEncoder({ ...format, sampleRate: rate }, { streaming: true });
  let ended = false;
  return {
    pcm: { container: 'raw', encoding: 'pcm_s16le', sampleRate: rate },
    async encode(pcm) {
      const samples = new Float32Array(pcm.length >> 1);
      for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(i * 2) / 32768;
      return encoder.encode(samples);
    },
    async end() {
      ended = true;
      return encoder.end();
    },
    close() {
      if (!ended) encoder.close?.();
    },
  };
}
