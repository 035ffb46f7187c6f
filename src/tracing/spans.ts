/**
 * @module tracing/spans
 * Spans built from the events the server already publishes, never from calls
 * in the code they describe:
 * - `http.server.request.start` (Node's own channel) opens an HTTP server
 *   span, continuing an incoming `traceparent`; the response's close ends it;
 * - each synthesis session (`voicegate:synthesis:*`) is a span under it (a
 *   WebSocket turn under the upgrade's `traceparent`, a job's segment under
 *   its run), with children drawn from the times its events carry: resolve,
 *   admission, the wait for a worker, each engine segment (its first chunk,
 *   its encoding) and each charge;
 * - a job's run (`voicegate:job:run`) is a span in the trace of its submit,
 *   kept with the job, so a resume on another server joins that trace too;
 * - outgoing calls (`undici:request:create`: the upstream engines' fetches)
 *   and webhook attempts (`voicegate:webhook:attempt`) are client spans whose
 *   context their `traceparent` header carries on.
 *
 * A span is entered as the current context (`log/trace-context.ts`) when its
 * event is published, so what the request then does — log lines, upstream
 * calls — runs inside it; the session's end enters its parent again. Several
 * servers may share a process: each follows its own instance's events and
 * its own HTTP server, and acts on a current span only if it made it.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type TextMapGetter, type TextMapSetter, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_SERVER_ADDRESS,
  ATTR_URL_FULL,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import { creditsFor } from '../accounts/pricing.js';
import { workerQueueChannel, type WorkerQueueWait } from '../engines/worker-pool/stream.js';
import { jobDiagnostics, type JobRunEnded, type JobRunStarted, type JobSubmitted } from '../jobs/diagnostics.js';
import { activeTraceContext, enterTraceContext } from '../log/trace-context.js';
import {
  diagnostics,
  type SynthesisAdmitted,
  type SynthesisAttempt,
  type SynthesisChargeFailed,
  type SynthesisCharged,
  type SynthesisEnd,
  type SynthesisEngineSegment,
  type SynthesisFirstAudio,
  type SynthesisStart,
  type WebSocketConnection,
  type WebSocketConnectionOpened,
} from '../synthesis/diagnostics.js';
import { webhookDiagnostics, type WebhookAttempt } from '../webhooks/diagnostics.js';

const propagator = new W3CTraceContextPropagator();
const headerGetter: TextMapGetter<Record<string, string | string[] | undefined>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};
const recordSetter: TextMapSetter<Record<string, string>> = { set: (carrier, key, value) => (carrier[key] = value) };

/** A `performance.now()` value as epoch milliseconds, which the SDK takes as they are (it would convert a `performance.now()` value with an offset of whole milliseconds, different for each span). */
const epoch = (perf: number): number => performance.timeOrigin + perf;
/** Now on the one clock every span is drawn on: the SDK's default (`Date.now()`) drifts from `performance.now()`, so a child could start before its parent. */
const clock = (): number => epoch(performance.now());

/** The context an incoming set of headers continues (the root context when they carry none). */
function extracted(headers: Record<string, string | string[] | undefined> | null): Context {
  return headers ? propagator.extract(ROOT_CONTEXT, headers, headerGetter) : ROOT_CONTEXT;
}

function injected(context: Context): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagator.inject(context, carrier, recordSetter);
  return carrier;
}

/** What `undici:request:*` events carry of a request (Node's fetch). */
interface UndiciRequest {
  method: string;
  origin: string;
  path: string;
  addHeader(name: string, value: string): unknown;
}

interface SessionTrace {
  span: Span;
  context: Context;
  /** Entered again at the end. */
  parent: Context;
  /** `performance.now()` at the start event: the session's own times count from it. */
  startedAt: number;
  transport: SynthesisStart['transport'];
  model: string | null;
  credits: number;
  cache: 'hit' | 'miss' | null;
}

export interface SpanSources {
  instanceId: string;
  tracer: Tracer;
  /** The HTTP server whose requests get server spans. */
  server: Server;
  /** Credit multipliers of the models, for a session's credits. */
  models: { get(id: string): { creditMultiplier: number } | undefined };
}

/** Subscribes; returns what unsubscribes. */
export function followSpans(sources: SpanSources): () => void {
  const { tracer, instanceId } = sources;
  /** Spans this server made: only they are continued by events that name no server (the current context's). */
  const own = new WeakSet<Span>();
  const sessions = new Map<string, SessionTrace>();
  const connections = new Map<string, Context>();
  const jobs = new Map<string, { span: Span; context: Context }>();
  const requests = new WeakMap<UndiciRequest, Span>();
  const webhooks = new WeakMap<WebhookAttempt, Span>();
  const stops: (() => void)[] = [];

  const start = (name: string, parent: Context, options: { kind?: SpanKind; startTime?: number; attributes?: Attributes; links?: { context: ReturnType<Span['spanContext']> }[] } = {}): Span => {
    const span = tracer.startSpan(name, { startTime: clock(), ...options }, parent);
    own.add(span);
    return span;
  };
  /** A child drawn afterwards from times an event carried (`performance.now()` values). */
  const drawn = (name: string, parent: Context, from: number, to: number, attributes?: Attributes): Span => {
    const span = tracer.startSpan(name, { startTime: epoch(from), attributes }, parent);
    span.end(epoch(Math.max(from, to)));
    return span;
  };
  /** The current context, when its span is this server's. */
  const ownActive = (): Context | null => {
    const context = activeTraceContext();
    const span = trace.getSpan(context);
    return span && own.has(span) ? context : null;
  };
  const on = <T>(name: string, handler: (event: T) => void) => {
    const listener = (message: unknown) => handler(message as T);
    subscribe(name, listener);
    stops.push(() => unsubscribe(name, listener));
  };
  const mine = <T extends { instance: string }>(name: string, handler: (event: T) => void) =>
    on<T>(name, (event) => {
      if (event.instance === instanceId) handler(event);
    });

  // HTTP server spans: the request's own headers carry the caller's trace.
  const serverSpans = new WeakMap<IncomingMessage, Span>();
  on<{ request: IncomingMessage; response: ServerResponse; server: Server }>('http.server.request.start', ({ request, response, server }) => {
    if (server !== sources.server) return;
    const span = start(request.method ?? 'HTTP', extracted(request.headers), {
      kind: SpanKind.SERVER,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: request.method ?? '_OTHER',
        [ATTR_URL_PATH]: (request.url ?? '/').split('?')[0],
        [ATTR_URL_SCHEME]: 'encrypted' in request.socket ? 'https' : 'http',
        [ATTR_NETWORK_PROTOCOL_VERSION]: request.httpVersion,
        ...(request.headers['user-agent'] ? { [ATTR_USER_AGENT_ORIGINAL]: request.headers['user-agent'] } : {}),
      },
    });
    enterTraceContext(trace.setSpan(ROOT_CONTEXT, span));
    serverSpans.set(request, span);
    // `close` comes after the last byte was handed on, or when the client left first.
    response.once('close', () => {
      const status = response.statusCode;
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      if (!response.writableFinished) span.setAttribute(ATTR_ERROR_TYPE, 'client_closed');
      span.end(clock());
    });
  });

  // Fastify names the route a request matched (its own channel): the span is named `{method} {route}`, as the conventions ask.
  on<{ request: { raw: IncomingMessage }; route: { url: string } }>('tracing:fastify.request.handler:start', ({ request, route }) => {
    const span = serverSpans.get(request.raw);
    if (!span) return;
    span.setAttribute(ATTR_HTTP_ROUTE, route.url);
    span.updateName(`${request.raw.method ?? 'HTTP'} ${route.url}`);
  });

  mine<WebSocketConnectionOpened>(diagnostics.websocketOpen.name as string, (event) => {
    connections.set(event.connectionId, extracted(event.traceparent ? { traceparent: event.traceparent, tracestate: event.tracestate } : null));
  });
  mine<WebSocketConnection>(diagnostics.websocketClose.name as string, (event) => void connections.delete(event.connectionId));

  mine<SynthesisStart>(diagnostics.start.name as string, (event) => {
    const job = event.transport === 'job' ? jobs.get(event.requestId.slice(0, event.requestId.lastIndexOf('/'))) : undefined;
    const parent =
      event.transport === 'websocket' && event.connectionId
        ? (connections.get(event.connectionId) ?? ROOT_CONTEXT)
        : job
          ? job.context
          : (ownActive() ?? ROOT_CONTEXT);
    const startedAt = performance.now();
    const span = start(nameOf(event.transport), parent, {
      startTime: epoch(startedAt),
      attributes: { 'voicegate.request_id': event.requestId, 'voicegate.transport': event.transport, ...(event.clientRequestId ? { 'voicegate.client_request_id': event.clientRequestId } : {}) },
    });
    const context = trace.setSpan(parent, span);
    sessions.set(event.requestId, { span, context, parent, startedAt, transport: event.transport, model: null, credits: 0, cache: null });
    enterTraceContext(context);
  });

  mine<SynthesisAdmitted>(diagnostics.admitted.name as string, (event) => {
    const session = sessions.get(event.requestId);
    if (!session) return;
    session.model = event.model;
    session.span.updateName(`${nameOf(session.transport)} ${event.endpoint}`);
    session.span.setAttributes({
      'voicegate.endpoint': event.endpoint,
      'voicegate.model': event.model,
      'voicegate.engine': event.engine,
      'voicegate.voice': event.voice,
      'voicegate.characters': event.characters,
      ...(event.orgId ? { 'voicegate.org_id': event.orgId } : {}),
      ...(event.background ? { 'voicegate.background': true } : {}),
    });
    const t0 = session.startedAt;
    drawn('resolve', session.context, t0 + event.resolveStartMs, t0 + event.resolvedMs);
    if (!event.background) drawn('admission', session.context, t0 + event.resolvedMs, t0 + event.admitMs, { 'voicegate.admission.wait_ms': event.admitMs - event.resolvedMs });
  });

  mine<SynthesisFirstAudio>(diagnostics.firstAudio.name as string, (event) => {
    const session = sessions.get(event.requestId);
    if (!session) return;
    session.cache = event.cache;
    session.span.setAttribute('voicegate.time_to_first_audio_ms', event.ttfaMs);
    session.span.addEvent('first audio', epoch(session.startedAt + event.ttfaMs));
  });

  // Each model a fallback chain tried (synthesis/fallback): one event on the request's span per attempt.
  mine<SynthesisAttempt>(diagnostics.attempt.name as string, (event) => {
    const session = sessions.get(event.requestId);
    if (!session) return;
    session.span.addEvent('model attempt', {
      'voicegate.model': event.model,
      'voicegate.engine': event.engine,
      'voicegate.attempt.outcome': event.outcome,
      ...(event.reason ? { 'voicegate.attempt.reason': event.reason } : {}),
      ...(event.next !== undefined ? { 'voicegate.attempt.next': event.next } : {}),
    });
  });

  const multiplier = (model: string) => sources.models.get(model)?.creditMultiplier ?? 1;
  mine<SynthesisCharged>(diagnostics.charged.name as string, (event) => {
    const session = sessions.get(event.requestId);
    if (!session) return;
    const credits = creditsFor(event.characters, multiplier(event.model));
    session.credits += credits;
    const now = performance.now();
    drawn('charge', session.context, now - event.ms, now, { 'voicegate.charge.index': event.index, 'voicegate.characters': event.characters, 'voicegate.credits': credits });
  });
  mine<SynthesisChargeFailed>(diagnostics.chargeFailed.name as string, (event) => {
    const session = sessions.get(event.requestId);
    if (!session) return;
    const now = performance.now();
    const span = tracer.startSpan('charge', { startTime: epoch(now - event.ms), attributes: { 'voicegate.charge.index': event.index, 'voicegate.characters': event.characters } }, session.context);
    if (event.error instanceof Error) span.recordException(event.error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'the charge could not be recorded' });
    span.end(epoch(now));
  });

  // The pipeline names the request only; a request of another server is simply not among these sessions.
  on<SynthesisEngineSegment>(diagnostics.engine.name as string, (event) => {
    const session = sessions.get(event.requestId);
    if (!session) return;
    const span = tracer.startSpan(
      'engine',
      { startTime: epoch(event.startedAt), attributes: { 'voicegate.engine': event.engine, 'voicegate.segment.index': event.index, 'voicegate.characters': event.characters, 'voicegate.audio_seconds': event.seconds } },
      session.context,
    );
    const context = trace.setSpan(session.context, span);
    if (event.firstChunkAt !== null) {
      drawn('engine first chunk', context, event.startedAt, event.firstChunkAt);
      // The chunks' encoding is interleaved with the engine's work: drawn as its total, ending with the segment.
      drawn('encode', context, event.endedAt - event.encodeMs, event.endedAt, { 'voicegate.encode.ms': event.encodeMs });
    }
    if (event.error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: event.error instanceof Error ? event.error.message : String(event.error) });
    }
    span.end(epoch(event.endedAt));
  });

  // Published in the consumer's context: the session the current span is.
  on<WorkerQueueWait>(workerQueueChannel.name as string, (event) => {
    const context = ownActive();
    if (!context) return;
    drawn('worker queue', context, event.queuedAt, event.startedAt, { 'voicegate.engine': event.pool, 'voicegate.worker.continuation': event.continuation, 'voicegate.background': event.background });
  });

  mine<SynthesisEnd>(diagnostics.end.name as string, (event) => {
    const session = sessions.get(event.requestId);
    if (!session) return;
    sessions.delete(event.requestId);
    const { span } = session;
    span.setAttributes({
      'voicegate.status': event.status,
      'voicegate.outcome': event.aborted ? 'aborted' : event.errorCode ? 'error' : 'ok',
      'voicegate.characters_charged': event.charactersCharged,
      'voicegate.credits': session.credits,
      'voicegate.audio_seconds': event.audioSeconds,
      'voicegate.cache': session.cache ?? 'none',
    });
    if (event.errorCode) span.setAttribute(ATTR_ERROR_TYPE, event.errorCode);
    if (event.status >= 500) {
      if (event.error instanceof Error) span.recordException(event.error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: event.errorCode ?? undefined });
    }
    span.end(epoch(session.startedAt + event.durationMs));
    enterTraceContext(session.parent);
  });

  mine<JobSubmitted>(jobDiagnostics.submit.name as string, (event) => {
    const context = ownActive();
    if (context) Object.assign(event.trace, injected(context));
  });
  mine<JobRunStarted>(jobDiagnostics.run.name as string, (event) => {
    const parent = extracted(event.trace);
    const submitted = trace.getSpanContext(parent);
    const span = start('job', parent, {
      kind: SpanKind.CONSUMER,
      attributes: {
        'voicegate.job.id': event.jobId,
        'voicegate.job.attempt': event.attempt,
        'voicegate.job.resumed': event.segmentsDone > 0 || event.attempt > 1,
        'voicegate.job.segments_done': event.segmentsDone,
        'voicegate.job.segments': event.segmentsTotal,
        'voicegate.org_id': event.orgId,
      },
      // A run on another server, or after a restart, is one more run of the job the submit began.
      links: submitted ? [{ context: submitted }] : [],
    });
    const context = trace.setSpan(parent, span);
    jobs.set(event.jobId, { span, context });
    enterTraceContext(context);
  });
  mine<JobRunEnded>(jobDiagnostics.runEnd.name as string, (event) => {
    const job = jobs.get(event.jobId);
    if (!job) return;
    jobs.delete(event.jobId);
    job.span.setAttribute('voicegate.job.outcome', event.outcome);
    if (event.errorCode) job.span.setAttribute(ATTR_ERROR_TYPE, event.errorCode);
    if (event.outcome === 'failed') job.span.setStatus({ code: SpanStatusCode.ERROR, message: event.errorCode ?? undefined });
    job.span.end(clock());
    enterTraceContext(ROOT_CONTEXT);
  });

  mine<WebhookAttempt>(webhookDiagnostics.attempt.name as string, (event) => {
    const parent = extracted(event.trace);
    const span = start('webhook POST', parent, {
      kind: SpanKind.CLIENT,
      attributes: { [ATTR_HTTP_REQUEST_METHOD]: 'POST', [ATTR_URL_FULL]: event.url, 'voicegate.webhook.kind': event.kind, 'voicegate.webhook.id': event.id, 'voicegate.webhook.attempt': event.attempt },
    });
    Object.assign(event.headers, injected(trace.setSpan(parent, span)));
    webhooks.set(event, span);
  });
  mine<WebhookAttempt>(webhookDiagnostics.attempted.name as string, (event) => {
    const span = webhooks.get(event);
    if (!span) return;
    const result = event.result;
    if (result?.status) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.status);
    if (!result?.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: result?.error });
    span.end(clock());
  });

  // Node's fetch: the upstream engines' calls, inside the session whose audio they make.
  on<{ request: UndiciRequest }>('undici:request:create', ({ request }) => {
    const context = ownActive();
    if (!context) return;
    const span = tracer.startSpan(
      request.method,
      { kind: SpanKind.CLIENT, startTime: clock(), attributes: { [ATTR_HTTP_REQUEST_METHOD]: request.method, [ATTR_SERVER_ADDRESS]: request.origin, [ATTR_URL_PATH]: request.path.split('?')[0] } },
      context,
    );
    for (const [name, value] of Object.entries(injected(trace.setSpan(context, span)))) request.addHeader(name, value);
    requests.set(request, span);
  });
  on<{ request: UndiciRequest; response: { statusCode: number } }>('undici:request:headers', ({ request, response }) => {
    const span = requests.get(request);
    if (!span) return;
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, response.statusCode);
    if (response.statusCode >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
  });
  on<{ request: UndiciRequest }>('undici:request:trailers', ({ request }) => {
    requests.get(request)?.end(clock());
    requests.delete(request);
  });
  on<{ request: UndiciRequest; error: unknown }>('undici:request:error', ({ request, error }) => {
    const span = requests.get(request);
    if (!span) return;
    requests.delete(request);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    span.end(clock());
  });

  return () => {
    for (const stop of stops.splice(0)) stop();
    for (const session of sessions.values()) session.span.end(clock());
    for (const job of jobs.values()) job.span.end(clock());
    sessions.clear();
    jobs.clear();
    connections.clear();
  };
}

/** A session span's name (the endpoint follows once known). */
function nameOf(transport: SynthesisStart['transport']): string {
  return transport === 'job' ? 'job segment' : transport === 'websocket' ? 'websocket turn' : 'synthesis';
}
