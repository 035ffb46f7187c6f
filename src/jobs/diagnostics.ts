/**
 * @module jobs/diagnostics
 * The `diagnostics_channel` events of long-form jobs: each segment a server
 * made and persisted, and each job's end as its run saw it. Metrics and logs
 * read these; the runner counts nothing itself.
 */
import { channel } from 'node:diagnostics_channel';
import type { JobStatus } from '../store/store.js';

export interface JobSegmentMade {
  instance: string;
  jobId: string;
  index: number;
  characters: number;
  audioSeconds: number;
  /** Milliseconds from the segment's start to its persisted audio. */
  ms: number;
}

export interface JobEnded {
  instance: string;
  jobId: string;
  orgId: string;
  status: JobStatus;
  errorCode: string | null;
}

export const jobDiagnostics = {
  segment: channel('voicegate:job:segment'),
  end: channel('voicegate:job:end'),
};

export function publishJob<T extends object>(target: ReturnType<typeof channel>, message: T): void {
  if (target.hasSubscribers) target.publish(message);
}
