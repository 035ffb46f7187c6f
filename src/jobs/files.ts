/**
 * @module jobs/files
 * Where a job's bytes live in its blob storage (`jobs.dir`, by default
 * `<dataDir>/jobs`; one folder all gateways mount, or any other
 * `BlobStorage`): each persisted segment's PCM and timings under
 * `<job id>/segments/`, then the stitched result and its timings. The
 * store's row says how far the job got; these hold what it made.
 */
import type { BlobStorage } from '../cache/blob-storage.js';

export const segmentAudioKey = (jobId: string, index: number) => `${jobId}/segments/${String(index).padStart(6, '0')}.pcm`;
export const segmentTimingsKey = (jobId: string, index: number) => `${jobId}/segments/${String(index).padStart(6, '0')}.json`;
export const resultKey = (jobId: string) => `${jobId}/result`;
export const timestampsKey = (jobId: string) => `${jobId}/timestamps.json`;

/** Words and marks of one segment, in seconds from the segment's start. */
export interface SegmentTimings {
  /** `voice`: the voice that spoke the word, when the job's inputs have voices of their own. */
  words: { word: string; start: number; end: number; voice?: string }[];
  marks: { name: string; time: number }[];
}

/** Removes every blob of the job; what is already gone is no obstacle. */
export async function removeJobFiles(blobs: BlobStorage, jobId: string): Promise<void> {
  await removeUnder(blobs, jobId);
}

/** Removes the segments once the result exists: only the result and its timings are kept. */
export async function removeSegments(blobs: BlobStorage, jobId: string): Promise<void> {
  await removeUnder(blobs, `${jobId}/segments`);
}

/** Deletes at once, at most: a book has thousands of segment blobs, and a bucket's connections are few. */
const DELETES_AT_ONCE = 16;

async function removeUnder(blobs: BlobStorage, prefix: string): Promise<void> {
  const keys: string[] = [];
  for await (const info of blobs.list(prefix)) keys.push(info.key);
  for (let at = 0; at < keys.length; at += DELETES_AT_ONCE) await Promise.all(keys.slice(at, at + DELETES_AT_ONCE).map((key) => blobs.delete(key)));
}
