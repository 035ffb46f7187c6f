/**
 * @module log/trace-context
 * The trace context the current code runs in, kept in one
 * `AsyncLocalStorage` for the process: tracing (`src/tracing/`) enters a
 * request's span here as the request's events arrive, and every log line
 * written inside it carries `trace_id` and `span_id`. While nothing is
 * traced the storage is never entered, so Node installs no async hooks and a
 * log line pays one empty lookup.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ROOT_CONTEXT, trace, type Context } from '@opentelemetry/api';

const storage = new AsyncLocalStorage<Context>();

/** The context of the code running now (the root context outside any traced work). */
export function activeTraceContext(): Context {
  return storage.getStore() ?? ROOT_CONTEXT;
}

/** Makes `context` the current one for the rest of this synchronous run and everything it goes on to start. */
export function enterTraceContext(context: Context): void {
  storage.enterWith(context);
}

/** The ids of the span a log line is written in, for pino's `mixin` (which merges into what it is given: a new object each time). */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  const context = storage.getStore();
  const span = context && trace.getSpanContext(context);
  return span ? { trace_id: span.traceId, span_id: span.spanId } : {};
}
