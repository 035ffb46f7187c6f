/**
 * @module tracing/tracing
 * OpenTelemetry traces of one server, when the standard `OTEL_*` variables
 * turn them on (`provider.ts`); built from its events (`spans.ts`). Off, it
 * subscribes to nothing, so no event is even published for it.
 */
import type { Server } from 'node:http';
import type { Logger } from '../log/logger.js';
import { tracerFromEnv } from './provider.js';
import { followSpans } from './spans.js';

export interface TracingOptions {
  instanceId: string;
  version: string;
  server: Server;
  models: { get(id: string): { creditMultiplier: number } | undefined };
  logger: Logger;
  env?: Record<string, string | undefined>;
}

/** Starts tracing if the environment asks for it; the returned function exports what is left and stops. */
export function startTracing(options: TracingOptions): () => Promise<void> {
  const handle = tracerFromEnv(options.env ?? process.env, options);
  if (!handle) return async () => {};
  const stop = followSpans({ instanceId: options.instanceId, tracer: handle.tracer, server: options.server, models: options.models });
  options.logger.info({ exporter: process.env.OTEL_TRACES_EXPORTER ?? 'otlp', endpoint: process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? process.env.OTEL_EXPORTER_OTLP_ENDPOINT }, 'tracing on');
  return async () => {
    stop();
    await handle.shutdown().catch((err: unknown) => options.logger.warn({ err }, 'could not export the last spans'));
  };
}
