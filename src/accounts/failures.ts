/**
 * @module accounts/failures
 * Failed requests, recorded beside the ledger from the session's diagnostics
 * events: a request this server admitted (`:admitted`) that ended with an
 * error code (`:end`) and had no charge (`:charged`) becomes one
 * `request_failures` row, which the usage rollup counts as a failed request.
 * Only this server's instance is heard, so the warm-up (an instance of its
 * own) is never recorded; a long-form job's segments (background work) are
 * not requests of their own. The write is off the request's path: fire and
 * forget, a failure logged, idempotent by request id; `stop()` waits for the
 * writes still in flight, so the store closes after them.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Logger } from '../log/logger.js';
import type { UsageRepository } from '../store/store.js';
import { diagnostics, type SynthesisAdmitted, type SynthesisCharged, type SynthesisEnd } from '../synthesis/diagnostics.js';

interface Admitted {
  orgId: string;
  keyId: string | null;
  model: string;
  endpoint: string;
  charged: boolean;
}

/** Starts recording this server's failed requests; returns the function that stops, once the writes in flight are done. */
export function recordFailures(usage: UsageRepository, logger: Logger, instance: string): () => Promise<void> {
  const open = new Map<string, Admitted>();
  const writes = new Set<Promise<void>>();
  const onAdmitted = (message: unknown) => {
    const m = message as SynthesisAdmitted;
    if (m.instance !== instance || m.background || !m.orgId) return;
    open.set(m.requestId, { orgId: m.orgId, keyId: m.keyId, model: m.model, endpoint: m.endpoint, charged: false });
  };
  const onCharged = (message: unknown) => {
    const m = message as SynthesisCharged;
    if (m.instance !== instance) return;
    const admitted = open.get(m.requestId);
    if (admitted) admitted.charged = true;
  };
  const onEnd = (message: unknown) => {
    const m = message as SynthesisEnd;
    if (m.instance !== instance) return;
    const admitted = open.get(m.requestId);
    if (!admitted) return;
    open.delete(m.requestId);
    if (admitted.charged || m.errorCode === null) return;
    const write = usage
      .recordFailure({ orgId: admitted.orgId, keyId: admitted.keyId, requestId: m.requestId, model: admitted.model, endpoint: admitted.endpoint, code: m.errorCode })
      .then(
        () => undefined,
        (err: unknown) => logger.warn({ err, request_id: m.requestId, org_id: admitted.orgId }, 'could not record a failed request'),
      )
      .finally(() => writes.delete(write));
    writes.add(write);
  };
  subscribe(diagnostics.admitted.name as string, onAdmitted);
  subscribe(diagnostics.charged.name as string, onCharged);
  subscribe(diagnostics.end.name as string, onEnd);
  return async () => {
    unsubscribe(diagnostics.admitted.name as string, onAdmitted);
    unsubscribe(diagnostics.charged.name as string, onCharged);
    unsubscribe(diagnostics.end.name as string, onEnd);
    open.clear();
    await Promise.all(writes);
  };
}
