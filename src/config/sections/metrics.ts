/**
 * @module config/sections/metrics
 * `GET /metrics`: on or off, public or behind the admin token, on the main port or one of its own.
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

const METRICS_DEFAULTS = { enabled: true, public: false, port: null, host: null };

/**
 * `GET /metrics` (Prometheus text). On the main port it needs the admin token unless `public`;
 * with `port` set it is served only there, without authentication, on `host` (default: `server.host`).
 */
const metricsSchema = z
  .object({
    enabled: z.boolean().default(METRICS_DEFAULTS.enabled),
    /** Serve `/metrics` on the main port without the admin token. */
    public: z.boolean().default(METRICS_DEFAULTS.public),
    /** A port of its own for `/metrics` (plain HTTP, no authentication); null: the main port. */
    port: z.number().int().min(0).max(65535).nullable().default(METRICS_DEFAULTS.port),
    /** Interface the metrics port listens on; null: `server.host`. */
    host: z.string().min(1).nullable().default(METRICS_DEFAULTS.host),
  })
  .strict();

export const metricsSection = defineSection('metrics', metricsSchema.default(METRICS_DEFAULTS), {
  VOICEGATE_METRICS: ['enabled', 'boolean'],
  VOICEGATE_METRICS_PUBLIC: ['public', 'boolean'],
  VOICEGATE_METRICS_PORT: ['port', 'number'],
  VOICEGATE_METRICS_HOST: ['host', 'string'],
});

export type MetricsConfig = z.output<typeof metricsSchema>;
