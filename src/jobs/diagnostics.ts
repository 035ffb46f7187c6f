/**
 * @module jobs/diagnostics
 * The `diagnostics_channel` events of long-form jobs: each segment a server
 * made and persisted, each wait on a storage that could not be reached, and
 * each job's end as its run saw it. Metrics and logs read these; the runner
 * counts nothing itself. A job's trace crosses servers in its spec: at
 * submit, whoever follows traces writes the submit's trace context into the
 * message's `trace` (W3C headers), which the job keeps; each run hands it
 * back in its `run` event.
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

/** `voicegate:job:submit`: a job is about to be stored; a subscriber may write its trace context into `trace`. */
export interface JobSubmitted {
  instance: string;
  jobId: string;
  /** Filled by subscribers (`traceparent`, `tracestate`); kept with the job when not empty. */
  trace: Record<string, string>;
}

/** `voicegate:job:run`: a server claimed the job and starts (or resumes) it. */
export interface JobRunStarted {
  instance: string;
  jobId: string;
  orgId: string;
  /** Runs started, this one included (above 1: a resume, on this server or another). */
  attempt: number;
  segmentsDone: number;
  segmentsTotal: number;
  /** The trace context kept at submit, if any. */
  trace: Record<string, string> | null;
}

/** `voicegate:job:run-end`: the run is over: the job ended, or it was stopped (lease handed back or lost). */
export interface JobRunEnded {
  instance: string;
  jobId: string;
  outcome: 'succeeded' | 'failed' | 'stopped';
  errorCode: string | null;
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
  submit: channel('voicegate:job:submit'),
  run: channel('voicegate:job:run'),
  runEnd: channel('voicegate:job:run-end'),
};

export function publishJob<T extends object>(target: ReturnType<typeof channel>, message: T): void {
  if (target.hasSubscribers) target.publish(message);
}
