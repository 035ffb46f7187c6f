/**
 * @module request-log/synthesis-log
 * Request logs for every synthesis, read from the session's diagnostics
 * events rather than written by each transport: one line when a request
 * ends (endpoint, model, duration, characters charged, audio, status, error
 * code), an error line with the cause for server-side failures, and one for
 * every charge that could not be recorded.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { SynthesisChargeFailed, SynthesisEnd } from '../synthesis/diagnostics.js';
import { diagnostics } from '../synthesis/diagnostics.js';
import type { Logger } from '../log/logger.js';

/** Starts logging this server's synthesis events; returns the function that stops it. */
export function logSynthesis(logger: Logger, instance: string): () => void {
  const onEnd = (message: unknown) => {
    const end = message as SynthesisEnd;
    if (end.instance !== instance) return;
    const fields = {
      request_id: end.requestId,
      client_request_id: end.clientRequestId ?? undefined,
      transport: end.transport,
      endpoint: end.endpoint,
      org_id: end.orgId,
      model: end.model,
      duration_ms: Math.round(end.durationMs * 10) / 10,
      characters_charged: end.charactersCharged,
      audio_seconds: Math.round(end.audioSeconds * 1000) / 1000,
      status: end.status,
      error_code: end.errorCode ?? undefined,
      aborted: end.aborted || undefined,
    };
    if (end.error !== undefined) logger.error({ ...fields, err: end.error }, 'synthesis failed');
    else logger.info(fields, 'synthesis ended');
  };
  const onChargeFailed = (message: unknown) => {
    const failed = message as SynthesisChargeFailed;
    if (failed.instance !== instance) return;
    logger.error(
      { request_id: failed.requestId, endpoint: failed.endpoint, org_id: failed.orgId, batch: failed.index, characters: failed.characters, err: failed.error },
      'could not record a charge',
    );
  };
  subscribe(diagnostics.end.name as string, onEnd);
  subscribe(diagnostics.chargeFailed.name as string, onChargeFailed);
  return () => {
    unsubscribe(diagnostics.end.name as string, onEnd);
    unsubscribe(diagnostics.chargeFailed.name as string, onChargeFailed);
  };
}
