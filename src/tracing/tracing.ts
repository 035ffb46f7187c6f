/**
 * @module tracing/tracing
 * OpenTelemetry traces of one server, when the standard `OTEL_*` variables
 * turn them on (`provider.ts`); built from its events (`spans.ts`). Off, it
 * subscribes to nothing, so no event is even published for it, and the SDK
 * is not even loaded.
 */
import type { Server } from 'node:http';
import type { Logger } from '../log/logger.js';

export interface TracingOptions {
  instanceId: string;
  version: string;
  server: Server;
  models: { get(id: string): { creditMultiplier: number } | undefined };
  logger: Logger;
  env?: Record<string, string | undefined>;
}

type Env = Record<string, string | undefined>;

/**
 * Whether the variables turn tracing on: an OTLP endpoint, or `OTEL_TRACES_EXPORTER` naming `otlp`
 * or `console`; never with `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`.
 */
export function tracingWanted(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const named = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim().toLowerCase()).filter(Boolean);
  if (named.includes('none')) return false;
  return named.includes('console') || named.includes('otlp') || !!(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

export interface Tracing {
  /** Resolves once spans are followed (at once when tracing is off). */
  ready: Promise<void>;
  /** Exports what is left and stops. */
  stop(): Promise<void>;
}

/**
 * Starts tracing if the environment asks for it. The SDK is loaded only then, so a server with
 * tracing off neither loads nor pays for it at start.
 */
export function startTracing(options: TracingOptions): Tracing {
  const env = options.env ?? process.env;
  if (!tracingWanted(env)) return { ready: Promise.resolve(), stop: async () => {} };
  const started = (async () => {
    const [{ tracerFromEnv }, { followSpans }] = await Promise.all([import('./provider.js'), import('./spans.js')]);
    const handle = tracerFromEnv(env, options);
    const stop = followSpans({ instanceId: options.instanceId, tracer: handle.tracer, server: options.server, models: options.models });
    options.logger.info({ exporter: env.OTEL_TRACES_EXPORTER ?? 'otlp', endpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT }, 'tracing on');
    return async () => {
      stop();
      await handle.shutdown().catch((err: unknown) => options.logger.warn({ err }, 'could not export the last spans'));
    };
  })();
  return {
    ready: started.then(() => {}),
    stop: async () => (await started)(),
  };
}
