/**
 * @module api/cartesia/ws-context
 * One WebSocket context (a turn): text arriving in messages is buffered to
 * clause boundaries, spoken segment by segment through the shared pipeline
 * and sent as `chunk` events in order, with `timestamps` offset to the
 * turn's own clock, `flush_done` after a flush and `done` at the end.
 *
 * Billing (docs/billing.md): a turn is charged only once it has delivered
 * audio; then in batches of 1,000 characters as its transcript crosses each
 * mark, and the remainder when it ends however it ends. The balance is
 * checked before text that starts a new batch is accepted.
 */
import { bytesPerSample } from '../../audio/format.js';
import { ApiError, toApiError } from '../../errors/api-error.js';
import type { Admission } from '../../http/gate.js';
import type { Logger } from '../../log/logger.js';
import { takeClauses } from '../../synthesis/clauses.js';
import { synthesizeAudio } from '../../synthesis/pipeline.js';
import { expandForSpeech } from '../../synthesis/pronunciation.js';
import { countCharacters, type SynthesisRequest } from '../../synthesis/request.js';
import { chunkEvent, doneEvent, errorEvent, flushDoneEvent, timestampsEvent, type StreamEvent } from './events.js';

export const BATCH_CHARACTERS = 1000;

export interface ContextHost {
  /** Sends an event, resolving once the socket can take more (backpressure). */
  send(event: StreamEvent): Promise<void>;
  /** Called once when the context has ended, for whatever reason. */
  ended(context: TurnContext): void;
  log: Logger;
}

export interface ContextInput {
  transcript: string;
  continue: boolean;
  flush: boolean;
  maxBufferDelayMs: number;
}

type Item = { kind: 'text'; text: string } | { kind: 'flush'; id: number };

export class TurnContext {
  private pending = '';
  private readonly queue: Item[] = [];
  private inputClosed = false;
  private over = false;
  private wake: (() => void) | null = null;
  private readonly abort = new AbortController();
  private flushes = 0;
  private received = 0;
  private billed = 0;
  private audioStarted = false;
  private offsetSeconds = 0;
  private bufferTimer: NodeJS.Timeout | null = null;
  private readonly lifetimeTimer: NodeJS.Timeout;
  private billing: Promise<void> = Promise.resolve();

  constructor(
    readonly id: string,
    private readonly template: SynthesisRequest,
    private readonly admission: Admission,
    private readonly host: ContextHost,
    lifetimeMs: number,
  ) {
    this.lifetimeTimer = setTimeout(
      () => this.fail(new ApiError('context_expired', { id, seconds: Math.round(lifetimeMs / 1000) })),
      lifetimeMs,
    );
    this.lifetimeTimer.unref();
    void this.run();
  }

  get requestId(): string {
    return this.template.requestId;
  }

  get model() {
    return this.template.model;
  }

  /** Takes one message's text. Messages of a context must be given in order. */
  async accept(input: ContextInput): Promise<void> {
    if (this.over) return;
    const characters = countCharacters(input.transcript);
    if (this.startsNewBatch(characters) && !(await this.admission.hasCredit())) {
      this.fail(new ApiError('insufficient_credits', { balance: '≤ 0' }));
      return;
    }
    if (this.over) return;
    this.received += characters;
    this.pending += input.transcript;
    this.clearBufferTimer();
    if (input.flush) {
      this.enqueuePending();
      this.queue.push({ kind: 'flush', id: ++this.flushes });
    } else if (input.continue) {
      const { clauses, rest } = takeClauses(this.pending);
      for (const text of clauses) this.queue.push({ kind: 'text', text });
      this.pending = rest;
      if (rest.trim()) {
        if (input.maxBufferDelayMs <= 0) this.enqueuePending();
        else this.bufferTimer = setTimeout(() => (this.enqueuePending(), this.notify()), input.maxBufferDelayMs);
      }
    } else {
      this.enqueuePending();
      this.inputClosed = true;
    }
    this.bill(false);
    this.notify();
  }

  /** Client cancel or disconnect: no more audio, nothing more sent. */
  cancel(): void {
    if (this.over) return;
    this.end();
  }

  /** Ends the turn with an error event. */
  fail(error: ApiError): void {
    if (this.over) return;
    void this.host.send(errorEvent(this.id, error, this.template.requestId));
    this.end();
  }

  isOver(): boolean {
    return this.over;
  }

  private startsNewBatch(characters: number): boolean {
    if (this.received === 0 || characters === 0) return false;
    return Math.floor((this.received + characters - 1) / BATCH_CHARACTERS) > Math.floor((this.received - 1) / BATCH_CHARACTERS);
  }

  private enqueuePending(): void {
    this.clearBufferTimer();
    if (this.pending.trim()) this.queue.push({ kind: 'text', text: this.pending });
    this.pending = '';
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
        if (item.kind === 'flush') await this.host.send(flushDoneEvent(this.id, item.id));
        else await this.speak(item.text);
      }
      if (this.over) return;
      await this.host.send(doneEvent(this.id));
      this.end();
    } catch (err) {
      if (this.over) return;
      const error = toApiError(err);
      if (error.status >= 500) this.host.log.error({ err, context_id: this.id, request_id: this.requestId }, 'websocket generation failed');
      this.fail(error);
    }
  }

  private async speak(text: string): Promise<void> {
    // Billing counts the text as received (in accept); the dictionary changes only what is spoken.
    const spoken = expandForSpeech(text, this.template.pronunciation);
    const synthesis: SynthesisRequest = { ...this.template, transcript: text, text: spoken, characters: countCharacters(text) };
    const { format } = synthesis;
    const bytesPerSecond = bytesPerSample(format.encoding ?? 'pcm_s16le') * format.sampleRate;
    let bytes = 0;
    for await (const piece of synthesizeAudio(synthesis, this.abort.signal)) {
      if (this.over) return;
      if (piece.audio.length > 0) {
        await this.host.send(chunkEvent(this.id, piece.audio, piece.stepTime));
        if (!this.audioStarted) {
          this.audioStarted = true;
          this.bill(false);
        }
      }
      if (piece.words && synthesis.wordTimestamps) await this.host.send(timestampsEvent(this.id, piece.words, this.offsetSeconds));
      bytes += piece.audio.length;
    }
    this.offsetSeconds += bytes / bytesPerSecond;
  }

  /** Queues ledger writes in order: complete batches, and at the end the remainder. */
  private bill(final: boolean): void {
    this.billing = this.billing
      .then(async () => {
        if (!this.audioStarted) return;
        while (this.received - this.billed >= BATCH_CHARACTERS) {
          this.billed += BATCH_CHARACTERS;
          await this.admission.chargeBatch(BATCH_CHARACTERS);
        }
        if (final && this.received > this.billed) {
          const rest = this.received - this.billed;
          this.billed = this.received;
          await this.admission.chargeBatch(rest);
        }
      })
      .catch((err) => this.host.log.error({ err, context_id: this.id, request_id: this.requestId }, 'could not record a websocket charge'));
  }

  private end(): void {
    this.over = true;
    this.abort.abort(new Error('context ended'));
    this.clearBufferTimer();
    clearTimeout(this.lifetimeTimer);
    this.notify();
    this.bill(true);
    void this.billing.finally(() => this.admission.release());
    this.host.ended(this);
  }

  /** Resolves when every charge of this turn has been written. */
  settled(): Promise<void> {
    return this.billing;
  }
}
