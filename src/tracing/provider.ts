/**
 * @module tracing/provider
 * The OpenTelemetry SDK as the standard variables configure it, loaded only
 * once `tracingWanted` (`tracing.ts`) says they turn tracing on: an OTLP
 * endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) or `OTEL_TRACES_EXPORTER` naming
 * `otlp` or `console`, and not `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none`. The SDK itself reads the rest: the
 * protocol's exporter its endpoint, headers and timeout, the batch processor
 * `OTEL_BSP_*`, the sampler `OTEL_TRACES_SAMPLER` and `_ARG` (default:
 * parent-based, always on), the resource `OTEL_SERVICE_NAME` and
 * `OTEL_RESOURCE_ATTRIBUTES` over Voicegate's own (`voicegate`, its version,
 * the server's instance id).
 */
import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Logger } from '../log/logger.js';

export interface TracerHandle {
  tracer: Tracer;
  /** Exports what is left and stops. */
  shutdown(): Promise<void>;
  /** Exports the spans ended so far. */
  flush(): Promise<void>;
}

type Env = Record<string, string | undefined>;

/** The exporter the variables ask for (`tracingWanted` has said they turn tracing on). */
function exporterOf(env: Env, logger: Logger): SpanExporter {
  const named = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim().toLowerCase());
  if (named.includes('console')) return new ConsoleSpanExporter();
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim();
  if (protocol === 'http/json') return new JsonExporter();
  if (protocol !== 'http/protobuf') logger.warn({ protocol }, 'OTLP protocol not supported for traces; exporting with http/protobuf');
  return new ProtoExporter();
}

/** The tracer of one server, once `tracingWanted` (`tracing.ts`) has said the variables turn tracing on. */
export function tracerFromEnv(env: Env, options: { version: string; instanceId: string; logger: Logger }): TracerHandle {
  const exporter = exporterOf(env, options.logger);
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: 'voicegate',
    [ATTR_SERVICE_VERSION]: options.version,
    'service.instance.id': options.instanceId,
  }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  return {
    tracer: provider.getTracer('voicegate', options.version),
    shutdown: () => provider.shutdown(),
    flush: () => provider.forceFlush(),
  };
}
