/**
 * @module log/logger
 * Structured JSON logs through pino. Credentials never reach a log line:
 * authorization headers, API-key headers and key-bearing query strings are
 * redacted or stripped before serialization. A line written inside a traced
 * request carries its `trace_id` and `span_id`.
 */
import { pino, type Logger as PinoLogger, type DestinationStream } from 'pino';
import { traceLogFields } from './trace-context.js';

export type Logger = PinoLogger;

const REDACT = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  'apiKey',
  'api_key',
  'key',
];

/** Drops the query string, which may carry `api_key` or `access_token`. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : `${url.slice(0, q)}?[redacted]`;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT, censor: '[redacted]' },
      base: { service: 'voicegate' },
      timestamp: pino.stdTimeFunctions.isoTime,
      // A line written inside a traced request names its trace and span (`trace-context.ts`).
      mixin: traceLogFields,
      serializers: {
        err: pino.stdSerializers.err,
        req: (req: { method?: string; url?: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url ?? ''), remoteAddress: req.ip }),
        res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
      },
    },
    destination,
  );
}
