/**
 * @module jobs/stitch
 * Joins a job's persisted segments into its result, in one pass and without
 * holding it in memory: every segment is 16-bit PCM at the result's rate, so
 * the join is sample-exact, and one encoder runs over the whole — MP3 frames
 * continue across segment joins (no gap, no click), and a WAV header carries
 * the final length, known before the first byte from the segments' sizes.
 * The silence between inputs is written here. Timings are moved onto the
 * result's clock the same way.
 */
import type { BlobStorage } from '../cache/blob-storage.js';
import { createAudioEncoder } from '../audio/encoder.js';
import type { OutputFormat } from '../audio/format.js';
import { segmentAudioKey, segmentTimingsKey, type SegmentTimings } from './files.js';
import type { PlannedSegment } from './plan.js';

export interface StitchedTimings {
  words: { word: string; start: number; end: number; voice?: string }[];
  marks: { name: string; time: number }[];
}

/** A segment the job's row counts as made is not in the storage: the result cannot be made from what is stored. */
export class MissingSegmentError extends Error {
  constructor(jobId: string, index: number) {
    super(`segment ${index} of job ${jobId} is missing`);
  }
}

/** Samples of each segment and of the pause before it, from the stored sizes (one listing, not a look-up per segment). */
async function layout(blobs: BlobStorage, jobId: string, segments: readonly PlannedSegment[], rate: number): Promise<{ pause: number; samples: number }[]> {
  const sizes = new Map<string, number>();
  for await (const info of blobs.list(`${jobId}/segments`)) sizes.set(info.key, info.size);
  return segments.map((segment, index) => {
    const size = sizes.get(segmentAudioKey(jobId, index));
    if (size === undefined) throw new MissingSegmentError(jobId, index);
    return { pause: Math.round(segment.pauseBefore * rate), samples: size / 2 };
  });
}

/** The result's bytes, encoded as `format`, with its length in seconds and the timings on its clock. */
export async function stitch(
  blobs: BlobStorage,
  jobId: string,
  segments: readonly PlannedSegment[],
  format: OutputFormat,
): Promise<{ audio: AsyncIterable<Buffer>; seconds: number; timings: () => Promise<StitchedTimings> }> {
  const rate = format.sampleRate;
  const parts = await layout(blobs, jobId, segments, rate);
  const totalSamples = parts.reduce((sum, part) => sum + part.pause + part.samples, 0);
  const encoder = await createAudioEncoder(format, { streaming: false, totalSamples });
  async function* audio(): AsyncGenerator<Buffer> {
    try {
      const header = encoder.header();
      if (header) yield header;
      for (let index = 0; index < parts.length; index++) {
        if (parts[index].pause > 0) yield await encode(new Int16Array(parts[index].pause));
        const pcm = await blobs.get(segmentAudioKey(jobId, index));
        if (!pcm) throw new MissingSegmentError(jobId, index);
        const aligned = Buffer.from(pcm);
        yield await encode(new Int16Array(aligned.buffer, aligned.byteOffset, aligned.length / 2));
      }
      const tail = await encoder.end();
      if (tail.length > 0) yield tail;
    } finally {
      encoder.close?.();
    }
  }
  async function encode(samples: Int16Array): Promise<Buffer> {
    if (encoder.encodeInt16) return encoder.encodeInt16(samples);
    const floats = new Float32Array(samples.length);
    for (let i = 0; i < samples.length; i++) floats[i] = samples[i] / 32768;
    return encoder.encode(floats);
  }
  const timings = async (): Promise<StitchedTimings> => {
    const result: StitchedTimings = { words: [], marks: [] };
    let offset = 0;
    for (let index = 0; index < parts.length; index++) {
      offset += parts[index].pause / rate;
      const stored = await blobs.get(segmentTimingsKey(jobId, index));
      if (stored) {
        const own = JSON.parse(stored.toString('utf8')) as SegmentTimings;
        for (const word of own.words) result.words.push({ word: word.word, start: round(word.start + offset), end: round(word.end + offset), ...(word.voice ? { voice: word.voice } : {}) });
        for (const mark of own.marks) result.marks.push({ name: mark.name, time: round(mark.time + offset) });
      }
      offset += parts[index].samples / rate;
    }
    return result;
  };
  return { audio: audio(), seconds: totalSamples / rate, timings };
}

function round(seconds: number): number {
  return Math.round(seconds * 1e6) / 1e6;
}
