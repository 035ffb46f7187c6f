/**
 * @module metrics/metrics
 * The Prometheus metrics of one server, in a registry of its own (never
 * prom-client's global one, so several servers in one process keep apart).
 * Request metrics are fed from the synthesis diagnostics events of this
 * server's instance — no transport counts anything itself; engine, upstream
 * and activity gauges are read when scraped. Labels are bounded: endpoint,
 * model, engine, status, error code, organisation and configured upstream;
 * never a request id or a key.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { jobDiagnostics, type JobSegmentMade, type JobStorageWait } from '../jobs/diagnostics.js';
import { JOB_STATUSES, type JobStatus } from '../store/store.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { creditsFor } from '../accounts/pricing.js';
import type { Activity } from '../concurrency/activity.js';
import type { EngineInfo } from '../engines/engine.js';
import type { LimitsStatus } from '../limits/counters.js';
import type { FlushStats } from '../store/store.js';
import type { CacheStats } from '../cache/audio-cache.js';
import {
  diagnostics,
  type SynthesisAdmitted,
  type SynthesisChargeFailed,
  type SynthesisCharged,
  type SynthesisEnd,
  type SynthesisFirstAudio,
  type SynthesisAttempt,
} from '../synthesis/diagnostics.js';

/** The label value of an endpoint or model a request ended before it was known. */
export const UNKNOWN = 'unknown';

export interface MetricsSources {
  /** Only this server's diagnostics events are counted. */
  instanceId: string;
  version: string;
  /** Engine details read at scrape time (queue depth, busy workers, upstream health). */
  engines: { list(): { info(): EngineInfo }[]; breakers?(): { engineId: string; current: number }[] };
  /** Credit multipliers of the models, for credits charged. */
  models: { get(id: string): { creditMultiplier: number } | undefined };
  activity: Activity;
  /** The limit counters (accounts on), for whether they lost Redis. */
  limits?: { status?(): LimitsStatus } | null;
  /** The store, for its log flushes where it has them (SQLite). */
  store?: { flushStats?(): FlushStats };
  /** The audio cache, read at scrape time; null or absent: no cache metrics. */
  cache?: { stats(): CacheStats } | null;
  /** The job queue, read at scrape time; null or absent: no job metrics. */
  jobs?: { countByStatus(): Promise<Record<JobStatus, number>> } | null;
  /** The credit this server holds per organisation (a store with shares in memory: PostgreSQL), read at scrape time. */
  held?: (() => { orgId: string; credits: number }[]) | null;
  /** Whether the store answers as the accounts see it (accounts on), read at scrape time. */
  storeState?: (() => 'available' | 'degraded' | 'unavailable') | null;
  /** This gateway's charge journal (accounts on), read at scrape time. */
  journal?: { readonly entries: number; readonly replayed: number } | null;
  /** Node's process metrics (CPU, memory, event loop, GC) too; on by default. */
  processMetrics?: boolean;
  /** Whether the server is leaving (SIGTERM), and its HTTP connections, read at scrape time. */
  lifecycle?: {
    draining(): boolean;
    connections(): { open: number; busy: number; closing: number };
    /** The Wyoming listener's state; null when it is off. */
    wyoming?(): { listening: boolean; connections: number } | null;
  };
}

const TTFA_BUCKETS = [0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10];
const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600];
const RTF_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5];

/** A configured upstream as a label: scheme, host, port and path, never credentials or a query. */
export function upstreamLabel(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
  } catch {
    return UNKNOWN;
  }
}

function numberOf(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

interface UpstreamInfo {
  healthy?: unknown;
  total?: unknown;
  /** Per-server detail, where the engine reports it. */
  servers?: { url?: unknown; healthy?: unknown }[];
}

export class Metrics {
  readonly registry = new Registry();
  private readonly stops: (() => void)[] = [];
  /** Milliseconds from start to admission of requests in flight, for the real-time factor at their end. */
  private readonly admitMs = new Map<string, number>();

  constructor(private readonly sources: MetricsSources) {
    const registers = [this.registry];
    if (sources.processMetrics !== false) collectDefaultMetrics({ register: this.registry });

    new Gauge({ name: 'voicegate_info', help: 'Always 1; the version of this server.', labelNames: ['version'], registers }).set({ version: sources.version }, 1);

    const ttfa = new Histogram({
      name: 'voicegate_time_to_first_audio_seconds',
      help: 'Seconds from the arrival of a request (or WebSocket turn) to its first audio handed to the socket.',
      labelNames: ['endpoint', 'model'],
      buckets: TTFA_BUCKETS,
      registers,
    });
    const requests = new Counter({
      name: 'voicegate_requests_total',
      help: 'Syntheses ended (HTTP requests and WebSocket turns), by HTTP status (499: the client left).',
      labelNames: ['endpoint', 'model', 'status'],
      registers,
    });
    const duration = new Histogram({
      name: 'voicegate_request_duration_seconds',
      help: 'Seconds from the arrival of a synthesis to its end, however it ended.',
      labelNames: ['endpoint', 'model'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    const audio = new Counter({
      name: 'voicegate_audio_seconds_total',
      help: 'Seconds of audio delivered to clients.',
      labelNames: ['model', 'engine'],
      registers,
    });
    const rtf = new Histogram({
      name: 'voicegate_real_time_factor',
      help: 'Successful HTTP syntheses: seconds from admission to the end per second of audio delivered (below 1: faster than real time).',
      labelNames: ['engine'],
      buckets: RTF_BUCKETS,
      registers,
    });
    const credits = new Counter({
      name: 'voicegate_credits_charged_total',
      help: 'Credits charged, by organisation and model.',
      labelNames: ['org', 'model'],
      registers,
    });
    const errors = new Counter({
      name: 'voicegate_errors_total',
      help: 'Syntheses that ended with an error, by registry code.',
      labelNames: ['endpoint', 'code'],
      registers,
    });
    const chargeFailures = new Counter({
      name: 'voicegate_charge_failures_total',
      help: 'Charges that could not be recorded (the request was ended unbilled).',
      labelNames: ['endpoint'],
      registers,
    });

    const fallbacks = new Counter({
      name: 'voicegate_fallbacks_total',
      help: 'Requests a model passed on to the next model of its fallback chain, by reason (offline, refused, rate_limited, timeout, connect_error, breaker_open).',
      labelNames: ['from', 'to', 'reason'],
      registers,
    });
    this.on<SynthesisAttempt>(diagnostics.attempt.name as string, (event) => {
      if (event.next !== undefined && event.reason) fallbacks.inc({ from: event.model, to: event.next, reason: event.reason });
    });
    new Gauge({
      name: 'voicegate_engine_breaker_state',
      help: "Each engine's circuit breaker (engines.<id>.breaker): 0 closed, 1 open, 2 half-open.",
      labelNames: ['engine'],
      registers,
      collect() {
        this.reset();
        for (const breaker of sources.engines.breakers?.() ?? []) this.set({ engine: breaker.engineId }, breaker.current);
      },
    });
    this.on<SynthesisAdmitted>(diagnostics.admitted.name as string, (event) => this.admitMs.set(event.requestId, event.admitMs));
    this.on<SynthesisFirstAudio>(diagnostics.firstAudio.name as string, (event) => {
      ttfa.observe({ endpoint: event.endpoint, model: event.model }, event.ttfaMs / 1000);
    });
    this.on<SynthesisCharged>(diagnostics.charged.name as string, (event) => {
      const multiplier = sources.models.get(event.model)?.creditMultiplier ?? 1;
      credits.inc({ org: event.orgId, model: event.model }, creditsFor(event.characters, multiplier));
    });
    this.on<SynthesisChargeFailed>(diagnostics.chargeFailed.name as string, (event) => {
      chargeFailures.inc({ endpoint: event.endpoint ?? UNKNOWN });
    });
    this.on<SynthesisEnd>(diagnostics.end.name as string, (event) => {
      const admitMs = this.admitMs.get(event.requestId);
      this.admitMs.delete(event.requestId);
      const endpoint = event.endpoint ?? UNKNOWN;
      const model = event.model ?? UNKNOWN;
      requests.inc({ endpoint, model, status: String(event.status) });
      duration.observe({ endpoint, model }, event.durationMs / 1000);
      if (event.errorCode) errors.inc({ endpoint, code: event.errorCode });
      if (event.audioSeconds > 0 && event.engine) {
        audio.inc({ model, engine: event.engine }, event.audioSeconds);
        // A WebSocket turn waits for its client's text, so its wall time says nothing about the engine.
        if (event.status === 200 && event.transport === 'http' && admitMs !== undefined) {
          rtf.observe({ engine: event.engine }, Math.max(0, event.durationMs - admitMs) / 1000 / event.audioSeconds);
        }
      }
    });

    const jobQueue = sources.jobs;
    if (jobQueue) {
      new Gauge({
        name: 'voicegate_jobs',
        help: 'Long-form jobs in the store by status, over every gateway sharing it (queued: the queue depth).',
        labelNames: ['status'],
        registers,
        async collect() {
          // A store that does not answer leaves the last figures (stale), never a failed scrape.
          const counts = await jobQueue.countByStatus().catch(() => null);
          if (counts) for (const status of JOB_STATUSES) this.set({ status }, counts[status] ?? 0);
        },
      });
      const segments = new Counter({ name: 'voicegate_job_segments_total', help: 'Job segments this server made and persisted (its rate: segments per second).', registers });
      const segmentSeconds = new Histogram({
        name: 'voicegate_job_segment_seconds',
        help: 'Seconds to make and persist one job segment.',
        buckets: DURATION_BUCKETS,
        registers,
      });
      this.on<JobSegmentMade>(jobDiagnostics.segment.name as string, (event) => {
        segments.inc();
        segmentSeconds.observe(event.ms / 1000);
      });
      const storageFailures = new Counter({
        name: 'voicegate_job_storage_failures_total',
        help: 'Steps of job runs on the job storage (a segment put, the result) that failed and wait to be tried again, by operation.',
        labelNames: ['operation'],
        registers,
      });
      const waiting = new Set<string>();
      new Gauge({
        name: 'voicegate_jobs_waiting_for_storage',
        help: 'Job runs on this server paused because the job storage (a bucket) cannot be reached.',
        registers,
        collect() {
          this.set(waiting.size);
        },
      });
      this.on<JobStorageWait>(jobDiagnostics.storage.name as string, (event) => {
        if (event.waiting) {
          storageFailures.inc({ operation: event.operation });
          waiting.add(event.jobId);
        } else waiting.delete(event.jobId);
      });
    }

    const activity = sources.activity;
    new Gauge({
      name: 'voicegate_active_streams',
      help: 'Syntheses admitted and not yet ended (HTTP requests and WebSocket turns), by endpoint.',
      labelNames: ['endpoint'],
      registers,
      collect() {
        this.reset();
        for (const [endpoint, count] of activity.synthesesByEndpoint()) this.set({ endpoint }, count);
      },
    });
    const lifecycle = sources.lifecycle;
    if (lifecycle) {
      new Gauge({
        name: 'voicegate_draining',
        help: '1 from SIGTERM on, while the server finishes what it serves (every answer then closes its connection).',
        registers,
        collect() {
          this.set(lifecycle.draining() ? 1 : 0);
        },
      });
      new Gauge({
        name: 'voicegate_http_connections',
        help: 'Open HTTP connections (WebSockets not included): busy (a request in flight), closing (closed by the server, its client still reading), idle.',
        labelNames: ['state'],
        registers,
        collect() {
          const { open, busy, closing } = lifecycle.connections();
          this.set({ state: 'busy' }, busy);
          this.set({ state: 'closing' }, closing);
          this.set({ state: 'idle' }, open - busy - closing);
        },
      });
      if (lifecycle.wyoming) {
        new Gauge({
          name: 'voicegate_wyoming_connections',
          help: 'Open Wyoming protocol connections (the listener of wyoming.port).',
          registers,
          collect() {
            this.set(lifecycle.wyoming?.()?.connections ?? 0);
          },
        });
        new Gauge({
          name: 'voicegate_wyoming_listening',
          help: '1 while the Wyoming listener accepts connections.',
          registers,
          collect() {
            this.set(lifecycle.wyoming?.()?.listening ? 1 : 0);
          },
        });
      }
    }
    new Gauge({
      name: 'voicegate_websocket_connections',
      help: 'Open WebSocket connections.',
      registers,
      collect() {
        this.set(activity.websocketTotal());
      },
    });
    this.engineGauges();
    this.storeGauges();
    this.journalGauges();
    this.limitsGauges();
    this.cacheMetrics();
  }

  /** Whether the limit counters lost Redis, read at scrape time; registered only for counters that report it. */
  private limitsGauges(): void {
    const limits = this.sources.limits;
    if (!limits?.status) return;
    const status = () => limits.status!();
    const registers = [this.registry];
    new Gauge({
      name: 'voicegate_limits_degraded',
      help: 'Whether the limit counters cannot reach Redis (1): the limits are enforced on this server alone, or limited requests refused (limits.whenSharedCountersFail).',
      registers,
      collect() {
        this.set(status().state === 'degraded' || status().state === 'unavailable' ? 1 : 0);
      },
    });
    new Counter({
      name: 'voicegate_limits_fallbacks_total',
      help: 'Times this server lost Redis and fell back to counting the limits locally.',
      registers,
      collect() {
        this.reset();
        this.inc(status().fallbacks ?? 0);
      },
    });
    new Gauge({
      name: 'voicegate_limits_gateways',
      help: 'The servers an organisation’s limits are divided among while Redis is away (those alive when it last answered, or limits.expectedGateways).',
      registers,
      collect() {
        this.set(status().gateways ?? 1);
      },
    });
  }

  /** The audio cache's counts, read at scrape time; registered only when the cache is on. */
  private cacheMetrics(): void {
    const cache = this.sources.cache;
    if (!cache) return;
    const registers = [this.registry];
    const counter = (name: string, help: string, read: (stats: CacheStats) => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read(cache.stats()));
        },
      });
    counter('voicegate_cache_hits_total', 'Responses served from a stored audio-cache entry.', (s) => s.hits);
    counter('voicegate_cache_misses_total', 'Cacheable responses whose audio was made (each leads a flight its followers share).', (s) => s.misses);
    counter('voicegate_cache_followers_total', 'Responses that followed an identical synthesis in flight instead of running the engine (single flight).', (s) => s.followers);
    counter('voicegate_cache_corrupt_total', 'Disk and shared-tier entries whose digest did not match: removed and treated as misses.', (s) => (s.disk?.corrupt ?? 0) + (s.shared?.corrupt ?? 0));
    new Counter({
      name: 'voicegate_cache_tier_hits_total',
      help: 'Audio-cache lookups answered by each tier (memory, disk, shared).',
      labelNames: ['tier'],
      registers,
      collect() {
        this.reset();
        const stats = cache.stats();
        this.inc({ tier: 'memory' }, stats.tierHits.memory);
        if (stats.disk) this.inc({ tier: 'disk' }, stats.tierHits.disk);
        if (stats.shared) this.inc({ tier: 'shared' }, stats.tierHits.shared);
      },
    });
    if (cache.stats().shared) {
      new Counter({
        name: 'voicegate_cache_shared_bytes_total',
        help: 'Bytes this server read from and wrote to the shared audio-cache tier (Redis).',
        labelNames: ['direction'],
        registers,
        collect() {
          this.reset();
          const shared = cache.stats().shared!;
          this.inc({ direction: 'read' }, shared.bytesRead);
          this.inc({ direction: 'written' }, shared.bytesWritten);
        },
      });
      counter('voicegate_cache_shared_writes_total', 'Entries this server wrote to the shared audio-cache tier (Redis).', (s) => s.shared?.writes ?? 0);
      counter(
        'voicegate_cache_shared_unavailable_total',
        'Shared-tier lookups, writes and purges skipped or failed because Redis did not answer (a lookup is then a miss).',
        (s) => s.shared?.unavailable ?? 0,
      );
    }
    new Counter({
      name: 'voicegate_cache_evictions_total',
      help: 'Audio-cache entries evicted to stay within a tier’s byte cap, by tier.',
      labelNames: ['tier'],
      registers,
      collect() {
        this.reset();
        const stats = cache.stats();
        this.inc({ tier: 'memory' }, stats.memory.evictions);
        if (stats.disk) this.inc({ tier: 'disk' }, stats.disk.evictions);
      },
    });
    for (const [name, help, read] of [
      ['voicegate_cache_bytes', 'Bytes of audio-cache entries kept, by tier.', (t: { bytes: number }) => t.bytes],
      ['voicegate_cache_entries', 'Audio-cache entries kept, by tier.', (t: { entries: number }) => t.entries],
    ] as const) {
      new Gauge({
        name,
        help,
        labelNames: ['tier'],
        registers,
        collect() {
          this.reset();
          const stats = cache.stats();
          this.set({ tier: 'memory' }, read(stats.memory));
          if (stats.disk) this.set({ tier: 'disk' }, read(stats.disk));
        },
      });
    }
  }

  /** The embedded store's WAL flushes, read at scrape time; registered only for a store that has them (not PostgreSQL). */
  private storeGauges(): void {
    const store = this.sources.store;
    if (!store?.flushStats) return;
    const stats = () => store.flushStats!();
    const registers = [this.registry];
    new Counter({
      name: 'voicegate_store_wal_flushes_total',
      help: "Flushes of the SQLite store's write-ahead log to disk (each makes every charge committed before it durable).",
      registers,
      collect() {
        this.reset();
        this.inc(stats().flushes);
      },
    });
    new Gauge({
      name: 'voicegate_store_wal_flush_on_event_loop',
      help: "Whether the SQLite store flushes its write-ahead log on the event loop (1: the disk is fast) or on the thread pool (0).",
      registers,
      collect() {
        this.set(stats().onEventLoop ? 1 : 0);
      },
    });
    new Gauge({
      name: 'voicegate_store_wal_flush_average_seconds',
      help: "Average time of the SQLite store's write-ahead log flushes timed on the event loop (0 before the first).",
      registers,
      collect() {
        this.set((stats().averageMs ?? 0) / 1000);
      },
    });
  }

  /** The charge journal: entries waiting for the store, and entries this process has written to it. */
  private journalGauges(): void {
    const registers = [this.registry];
    const storeState = this.sources.storeState;
    if (storeState) {
      new Gauge({
        name: 'voicegate_store_available',
        help: 'Accounts on: 1 while the store answers; 0 while it does not (requests are admitted from held credit for accounts.outageMaxSeconds, their charges journaled).',
        registers,
        collect() {
          this.set(storeState() === 'available' ? 1 : 0);
        },
      });
    }
    const held = this.sources.held;
    if (held) {
      new Gauge({
        name: 'voicegate_held_credits',
        help: "Credits this gateway holds for each organisation beyond its open requests (its share's spare): what it can admit on while the store is away.",
        labelNames: ['org'],
        registers,
        collect() {
          this.reset();
          for (const { orgId, credits } of held()) this.set({ org: orgId }, credits);
        },
      });
    }
    const journal = this.sources.journal;
    if (!journal) return;
    new Gauge({
      name: 'voicegate_charge_journal_entries',
      help: "Charges in this gateway's charge journal, due while the store was away and not yet written to it (0 once drained).",
      registers,
      collect() {
        this.set(journal.entries);
      },
    });
    new Counter({
      name: 'voicegate_charge_journal_replayed_total',
      help: "Journaled charges this gateway has written to the store once it answered.",
      registers,
      collect() {
        this.reset();
        this.inc(journal.replayed);
      },
    });
  }

  /** Gauges read from each engine's `info()` at scrape time; an engine reports what applies to it. */
  private engineGauges(): void {
    const registers = [this.registry];
    const infos = () => this.sources.engines.list().map((engine) => engine.info());
    const perEngine = (name: string, help: string, read: (info: EngineInfo) => number | null) =>
      new Gauge({
        name,
        help,
        labelNames: ['engine'],
        registers,
        collect() {
          this.reset();
          for (const info of infos()) {
            const value = read(info);
            if (value !== null) this.set({ engine: info.id }, value);
          }
        },
      });
    perEngine('voicegate_engine_ready', 'Whether the engine is warm and serving (1) or not (0).', (info) => (info.ready ? 1 : 0));
    perEngine('voicegate_engine_queue_depth', 'Jobs waiting for a worker of the engine.', (info) => numberOf(info.queued));
    perEngine('voicegate_engine_busy_workers', 'Workers of the engine running a job.', (info) => numberOf(info.busy));
    perEngine('voicegate_engine_workers', 'Workers of the engine ready to run jobs.', (info) => numberOf(info.workers));
    // An engine with idle unload (sherpa-onnx `idleUnloadSeconds`) says whether its workers hold the model now, and how often they loaded it.
    perEngine('voicegate_engine_loaded', 'Whether the engine holds its model in memory (1) or let go of it while idle (0).', (info) => (typeof info.loaded === 'boolean' ? (info.loaded ? 1 : 0) : null));
    new Counter({
      name: 'voicegate_engine_loads_total',
      help: 'Times the engine loaded its model: at start, and again on a request after it let go of it while idle.',
      labelNames: ['engine'],
      registers,
      collect() {
        this.reset();
        for (const info of infos()) {
          const value = numberOf(info.loads);
          if (value !== null) this.inc({ engine: info.id }, value);
        }
      },
    });
    // The engine keeps the count; a scrape reads it, as it reads the gauges.
    new Counter({
      name: 'voicegate_engine_first_sentences_split_total',
      help: 'First sentences spoken as a short head and the rest because every worker of the engine was busy.',
      labelNames: ['engine'],
      registers,
      collect() {
        this.reset();
        for (const info of infos()) {
          const value = numberOf(info.firstSentencesSplit);
          if (value !== null) this.inc({ engine: info.id }, value);
        }
      },
    });
    perEngine('voicegate_upstreams_healthy', 'Inference servers of a remote engine that pass their health probes.', (info) =>
      numberOf((info.upstreams as UpstreamInfo | undefined)?.healthy),
    );
    perEngine('voicegate_upstreams', 'Inference servers configured for a remote engine.', (info) => numberOf((info.upstreams as UpstreamInfo | undefined)?.total));
    new Gauge({
      name: 'voicegate_upstream_healthy',
      help: 'Whether an inference server of a remote engine passes its health probes (1) or is out of rotation (0).',
      labelNames: ['engine', 'upstream'],
      registers,
      collect() {
        this.reset();
        for (const info of infos()) {
          const servers = (info.upstreams as UpstreamInfo | undefined)?.servers;
          if (!Array.isArray(servers)) continue;
          for (const server of servers) {
            if (typeof server?.url !== 'string') continue;
            this.set({ engine: info.id, upstream: upstreamLabel(server.url) }, server.healthy === true ? 1 : 0);
          }
        }
      },
    });
  }

  private on<T extends { instance: string }>(name: string, handler: (event: T) => void): void {
    const listener = (message: unknown) => {
      const event = message as T;
      if (event.instance === this.sources.instanceId) handler(event);
    };
    subscribe(name, listener);
    this.stops.push(() => unsubscribe(name, listener));
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The scrape: every metric in the Prometheus text format. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** Stops counting events; the registry's values stay readable. */
  stop(): void {
    for (const stop of this.stops.splice(0)) stop();
    this.admitMs.clear();
  }
}
