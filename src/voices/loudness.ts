/**
 * @module voices/loudness
 * One loudness for every voice. Built-in voices differ by up to 20 dB as
 * their engine makes them (eSpeak's Klatt voice, OpenAI's `alloy`, is 10 dB
 * quieter than `nova`), so each voice gets one fixed gain per engine that
 * brings the reference passage below to the target level, measured as plain
 * RMS over the whole passage. The gain is fixed — never worked out per chunk
 * — so a stream does not pump. Measured levels of the built-in eSpeak voices
 * are kept in `loudness-table.ts`; other voices are measured once per engine
 * when first used (`synthesis/voice-gain.ts`).
 */

/** The level every voice is brought to: RMS of the reference passage, in dBFS (full scale = 1.0). */
export const TARGET_DBFS = -20;

/** A voice measured within this much of the target keeps its samples as they are (gain exactly 1). */
export const UNCHANGED_WITHIN_DB = 0.25;

/**
 * What each voice is measured on: six short sentences of the kind a voice agent says (the API
 * documents' own examples among them), about 15 s of speech. One sentence alone may come out up
 * to ±3 dB from the target with the sounds its words happen to have; longer text averages out.
 */
export const REFERENCE_PASSAGE =
  'Today is a wonderful day to build something people love! Your appointment is confirmed for Tuesday at 2 PM. ' +
  'Streaming speech, chunk by chunk. Hello! How can I help you today? ' +
  'Please hold while I transfer your call to the billing department. ' +
  'The weather tomorrow will be sunny with a high of twenty four degrees.';

/** Accumulates RMS over chunks. */
export class LevelMeter {
  private sum = 0;
  private count = 0;

  add(samples: ArrayLike<number>, scale = 1): void {
    let sum = 0;
    for (let i = 0; i < samples.length; i++) {
      const x = samples[i] * scale;
      sum += x * x;
    }
    this.sum += sum;
    this.count += samples.length;
  }

  get samples(): number {
    return this.count;
  }

  /** RMS level in dBFS; −Infinity for silence or no samples. */
  dbfs(): number {
    return this.count === 0 ? -Infinity : 10 * Math.log10(this.sum / this.count);
  }
}

/** The RMS level of `samples` in dBFS. */
export function levelDbfs(samples: ArrayLike<number>): number {
  const meter = new LevelMeter();
  meter.add(samples);
  return meter.dbfs();
}

/** The fixed gain that brings a voice measured at `level` dBFS to the target; 1 for silence or near the target. */
export function gainForLevel(level: number): number {
  if (!Number.isFinite(level)) return 1;
  const db = TARGET_DBFS - level;
  return Math.abs(db) < UNCHANGED_WITHIN_DB ? 1 : 10 ** (db / 20);
}
