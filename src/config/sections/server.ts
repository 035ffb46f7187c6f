/**
 * @module config/sections/server
 * The server itself: where it listens, body cap, shutdown (grace, drain delay), WebSocket caps, TLS, warm-up.
 */
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { defineSection } from '../section.js';

const WEBSOCKET_DEFAULTS = { maxMessageBytes: 65536, idleTimeoutMs: 300_000, contextTimeoutMs: 600_000, maxContexts: 64, maxBufferDelayMs: 3000 };

const websocketSchema = z
  .object({
    /** Messages over this size get a `payload_too_large` event (the socket stays open). */
    maxMessageBytes: z.number().int().min(1024).default(WEBSOCKET_DEFAULTS.maxMessageBytes),
    /** A connection with no message and no open context for this long is closed (code 4000). */
    idleTimeoutMs: z.number().int().min(1000).default(WEBSOCKET_DEFAULTS.idleTimeoutMs),
    /** A context open longer than this ends with `context_expired`. */
    contextTimeoutMs: z.number().int().min(1000).default(WEBSOCKET_DEFAULTS.contextTimeoutMs),
    maxContexts: z.number().int().min(1).default(WEBSOCKET_DEFAULTS.maxContexts),
    /** Default for `max_buffer_delay_ms`: how long an unfinished clause waits for more text. */
    maxBufferDelayMs: z.number().int().min(0).max(5000).default(WEBSOCKET_DEFAULTS.maxBufferDelayMs),
  })
  .strict();

/** HTTPS (and so WSS) on the server's port: PEM files, or a development CA kept under `<dataDir>/tls/`. */
const tlsSchema = z
  .union([
    z.object({ cert: z.string().min(1), key: z.string().min(1) }).strict(),
    z.object({ selfSigned: z.literal(true) }).strict(),
  ])
  .nullable()
  .default(null);

/** proxy-addr's (and so Fastify's) names for ranges of addresses, allowed among the trusted proxies. */
const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function isProxyEntry(entry: string): boolean {
  if (PROXY_NAMES.includes(entry)) return true;
  return entry.includes('/') ? ipaddr.isValidCIDR(entry) : ipaddr.isValid(entry);
}

/**
 * `VOICEGATE_TRUST_PROXY`'s text as a value: `true`/`on` (every hop), `false`/`off`, a number of
 * hops, or a comma-separated list of trusted proxies (addresses, CIDR blocks, `loopback`, …).
 */
function readTrustProxy(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim().toLowerCase();
  if (['true', 'on', 'yes'].includes(text)) return true;
  if (['false', 'off', 'no', ''].includes(text)) return false;
  if (/^\d+$/.test(text)) return Number(text);
  return text.split(',').map((entry) => entry.trim()).filter(Boolean);
}

/**
 * Whether the client's address comes from `X-Forwarded-For` (as Fastify's `trustProxy`): `false`
 * (the socket's address), `true` (the left-most entry), a number of proxy hops in front of the
 * server, or the trusted proxies' addresses and blocks.
 */
const trustProxySchema = z.preprocess(
  readTrustProxy,
  z.union([
    z.boolean(),
    z.number().int().min(1),
    z.array(z.string().refine(isProxyEntry, { message: 'an IP address, a CIDR block, loopback, linklocal or uniquelocal' })).min(1),
  ]),
);

export type TrustProxy = boolean | number | readonly string[];

const serverSchema = z
  .object({
    host: z.string().default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8080),
    /** Request bodies above this many bytes get 413 before parsing. */
    bodyLimitBytes: z.number().int().min(1024).default(65536),
    /** How long shutdown waits for requests in flight before closing connections. */
    shutdownGraceMs: z.number().int().min(0).default(10000),
    /**
     * After SIGTERM, how long the server keeps accepting while `/readyz` answers 503, so a load
     * balancer stops routing to it before its listener closes.
     */
    drainDelayMs: z.number().int().min(0).max(600_000).default(0),
    websocket: websocketSchema.default(WEBSOCKET_DEFAULTS),
    tls: tlsSchema,
    /**
     * Before listening, run a few requests of every HTTP synthesis endpoint through the routes
     * in-process (unbilled, unlogged, uncounted), so the first callers meet optimised code.
     */
    warmUp: z.boolean().default(true),
    trustProxy: trustProxySchema.default(false),
  })
  .strict()
  .default({ host: '127.0.0.1', port: 8080, bodyLimitBytes: 65536, shutdownGraceMs: 10000, drainDelayMs: 0, websocket: WEBSOCKET_DEFAULTS, tls: null, warmUp: true, trustProxy: false });

export const serverSection = defineSection('server', serverSchema, {
  PORT: ['port', 'number'],
  HOST: ['host', 'string'],
  VOICEGATE_PORT: ['port', 'number'],
  VOICEGATE_HOST: ['host', 'string'],
  VOICEGATE_BODY_LIMIT_BYTES: ['bodyLimitBytes', 'number'],
  VOICEGATE_SHUTDOWN_GRACE_MS: ['shutdownGraceMs', 'number'],
  VOICEGATE_DRAIN_DELAY_MS: ['drainDelayMs', 'number'],
  VOICEGATE_WARM_UP: ['warmUp', 'boolean'],
  VOICEGATE_TRUST_PROXY: ['trustProxy', 'string'],
});

export type TlsConfig = z.output<typeof tlsSchema>;
