/**
 * @module jobs/webhook-outbox
 * Job webhooks as an outbox of the webhook deliverer (src/webhooks/): the
 * job queue's own columns (`webhookState`, `webhookNextAt`, …) are the rows,
 * one message per job, announcing its end.
 */
import type { JobRecord, JobRepository } from '../store/store.js';
import type { WebhookOutbox } from '../webhooks/deliverer.js';
import type { JobSpec } from './plan.js';

export type WebhookJobs = Pick<JobRepository, 'claimWebhook' | 'webhookAttempted'>;

/** The outbox of `jobs`; `render` makes the JSON body announcing a job's end. */
export function jobWebhookOutbox(jobs: WebhookJobs, render: (job: JobRecord) => string): WebhookOutbox {
  return {
    async claim(now, leaseMs) {
      const job = await jobs.claimWebhook(now, leaseMs);
      return job && { id: job.id, url: job.webhookUrl, attempts: job.webhookAttempts, body: () => render(job), trace: (job.spec as JobSpec).trace ?? null };
    },
    attempted: (id, outcome) => jobs.webhookAttempted(id, outcome),
  };
}
