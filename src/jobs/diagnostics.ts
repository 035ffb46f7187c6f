/**
 * @module jobs/diagnostics
 * The `diagnostics_channel` events of long-form jobs: each segment a server
 * made and persisted, each wait on a storage that could not be reached, and
 * each job's end as its run saw it. Metrics and logs
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

/** A run's step on the job storage failed and waits to be tried again (`waiting`), or the wait is over. */
export interface JobStorageWait {
  instance: string;
  jobId: string;
  operation: 'segment' | 'result';
  /** The failed attempt's number; 0 when the wait ended. */
  attempt: number;
  waiting: boolean;
}

export const jobDiagnostics = {
  segment: channel('voicegate:job:segment'),
  storage: channel('voicegate:job:storage'),
  end: channel('voicegate:job:end'),
};

export function publishJob<T extends object>(target: ReturnType<typeof channel>, message: T): void {
  if (target.hasSubscribers) target.publish(message);
}
