/**
 * @module synthesis/turn-billing
 * The batched billing policy of a WebSocket turn (docs/billing.md). Batch 0
 * is reserved when the turn is admitted; text that reaches into batch k
 * first reserves it (refused: the organisation's balance is used up). Nothing
 * is charged until the turn has delivered its first audio; from then on each
 * complete 1,000-character batch is one charge, and when the turn ends the
 * remainder is the last. Charges are written in order, one at a time, each
 * keyed by its batch index, so none is written twice or skipped.
 */
import type { SynthesisSession } from './session.js';

export const BATCH_CHARACTERS = 1000;

export class TurnBilling {
  private received = 0;
  private billed = 0;
  /** Batches reserved so far; batch 0 comes with the admission. */
  private reserved = 1;
  private audioStarted = false;
  private writes: Promise<void> = Promise.resolve();

  /** `onError`: a charge could not be recorded; the turn must end (with that error). */
  constructor(
    private readonly session: SynthesisSession,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Before taking `characters` more of the turn's text: reserves the batches they reach into. */
  async accept(characters: number): Promise<boolean> {
    const needed = Math.max(1, Math.ceil((this.received + characters) / BATCH_CHARACTERS));
    while (this.reserved < needed) {
      if (!(await this.session.reserve(this.reserved, BATCH_CHARACTERS))) return false;
      this.reserved++;
    }
    this.received += characters;
    this.settle(false);
    return true;
  }

  /** `characters` of the text taken were dropped before they were spoken (`TextTurn.cancelUnspoken`): not charged. */
  drop(characters: number): void {
    this.received = Math.max(this.billed, this.received - characters);
  }

  /** Audio of this turn has reached the client's socket. */
  audioDelivered(): void {
    if (this.audioStarted) return;
    this.audioStarted = true;
    this.settle(false);
  }

  /** The turn is over: charges the remainder (if any audio was delivered); resolves once every charge is written. */
  finish(): Promise<void> {
    this.settle(true);
    return this.writes;
  }

  private settle(final: boolean): void {
    this.writes = this.writes.then(async () => {
      if (!this.audioStarted) return;
      try {
        while (this.received - this.billed >= BATCH_CHARACTERS) {
          const index = this.billed / BATCH_CHARACTERS;
          this.billed += BATCH_CHARACTERS;
          await this.session.charge(index, BATCH_CHARACTERS);
        }
        if (final && this.received > this.billed) {
          const index = Math.floor(this.billed / BATCH_CHARACTERS);
          const rest = this.received - this.billed;
          this.billed = this.received;
          await this.session.charge(index, rest);
        }
      } catch (err) {
        // Nothing more is charged for this turn; it ends with the error.
        this.billed = this.received;
        this.onError(err);
      }
    });
  }
}
