/**
 * @module webhooks/diagnostics
 * The `diagnostics_channel` events of webhook deliveries: each attempt as it
 * starts (`voicegate:webhook:attempt`) and once its outcome is known
 * (`:attempted`, the same message object with its result). A subscriber may
 * add headers to the attempt's `headers` before it is sent: tracing adds the
 * W3C trace context, so a receiver continues the trace of what the webhook
 * announces (a job's, kept in `trace`). Nothing is published while no one
 * listens.
 */
import { channel } from 'node:diagnostics_channel';
import type { DeliveryResult } from './deliver.js';

export interface WebhookAttempt {
  /** The server (app instance) that published it. */
  instance: string;
  /** What is announced (`job`, `alert`) and the outbox row's id. */
  kind: string;
  id: string;
  /** The receiver's URL without its query. */
  url: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** The trace context of what the message announces, where it has one. */
  trace: Record<string, string> | null;
  /** Headers the attempt is sent with besides its own; subscribers of `attempt` may add to them. */
  headers: Record<string, string>;
  /** Set before `attempted` is published. */
  result?: DeliveryResult;
}

export const webhookDiagnostics = {
  attempt: channel('voicegate:webhook:attempt'),
  attempted: channel('voicegate:webhook:attempted'),
};
