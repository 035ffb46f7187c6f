/**
 * @module test/helpers/cache
 * What the audio-cache tests share: an engine's job count (the worker
 * pool's `info().jobs`) and transcripts no other test speaks.
 */
import { randomUUID } from 'node:crypto';
import type { TestServer } from './server.js';

/** Jobs submitted to the engine's worker pool so far. */
export function engineJobs(server: TestServer, engine = 'espeak'): number {
  const info = server.app.services.engines.get(engine)!.info() as unknown as { jobs: { submitted: number } };
  return info.jobs.submitted;
}

/** First sentences the engine has spoken as a short head and the rest (it does so only while every worker is busy). */
export function headsSplit(server: TestServer, engine = 'espeak'): number {
  return (server.app.services.engines.get(engine)!.info() as unknown as { firstSentencesSplit?: number }).firstSentencesSplit ?? 0;
}

/** A transcript no other test speaks, so its first request is a miss. */
export function fresh(text = 'The quick brown fox jumps over the lazy dog.'): string {
  return `${text} ${randomUUID().slice(0, 8).replace(/[0-9]/g, '')}.`;
}
