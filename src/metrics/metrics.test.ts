/**
 * @module metrics/metrics.test
 * Metrics from diagnostics events of one server only, in a registry of its
 * own; credits use the model's multiplier; engine gauges are read at scrape
 * time and upstream labels never carry credentials.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { register as globalRegistry } from 'prom-client';
import { Activity } from '../concurrency/activity.js';
import type { EngineInfo } from '../engines/engine.js';
import type { LimitsStatus } from '../limits/counters.js';
import type { FlushStats } from '../store/store.js';
import { diagnostics } from '../synthesis/diagnostics.js';
import { Metrics, upstreamLabel } from './metrics.js';

function setup(instanceId: string, engines: EngineInfo[] = [], store?: { flushStats?(): FlushStats }, limits?: { status(): LimitsStatus }) {
  const activity = new Activity(instanceId);
  const metrics = new Metrics({
    instanceId,
    version: '9.9.9',
    engines: { list: () => engines.map((info) => ({ info: () => info })) },
    models: { get: (id) => (id === 'double' ? { creditMultiplier: 2 } : id === 'half' ? { creditMultiplier: 0.5 } : undefined) },
    activity,
    ...(store ? { store } : {}),
    ...(limits ? { limits } : {}),
    processMetrics: false,
  });
  return {
    metrics,
    /** A counter's or gauge's value for the first series with these labels. */
    async value(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
      const metric = await metrics.registry.getSingleMetric(name)!.get();
      const found = metric.values.find((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want));
      return found?.value;
    },
    stop() {
      metrics.stop();
      activity.stop();
    },
  };
}

function run(instance: string, requestId: string, options: { model?: string; endpoint?: string; status?: number; errorCode?: string | null; characters?: number; transport?: 'http' | 'websocket' } = {}) {
  const { model = 'double', endpoint = 'tts.bytes', status = 200, errorCode = null, characters = 11, transport = 'http' } = options;
  diagnostics.admitted.publish({ instance, requestId, endpoint, orgId: 'org_1', keyId: 'key_secret', model, engine: 'espeak', characters, admitMs: 100 });
  diagnostics.firstAudio.publish({ instance, requestId, endpoint, model, ttfaMs: 250, cache: null });
  if (status === 200) diagnostics.charged.publish({ instance, requestId, endpoint, orgId: 'org_1', model, index: 0, characters });
  diagnostics.end.publish({
    instance,
    requestId,
    clientRequestId: null,
    transport,
    endpoint,
    orgId: 'org_1',
    model,
    engine: 'espeak',
    durationMs: 1100,
    charactersCharged: status === 200 ? characters : 0,
    audioSeconds: 2,
    errorCode,
    status,
    aborted: false,
  });
}

test('request metrics come from this server’s events only, with bounded labels', async () => {
  const a = setup('server-a');
  const b = setup('server-b');
  try {
    run('server-a', 'req_1');
    run('server-a', 'req_2', { model: 'half', characters: 3 });
    run('server-a', 'req_3', { status: 503, errorCode: 'engine_unavailable' });
    run('server-b', 'req_4');
    assert.equal(await a.value('voicegate_requests_total', { endpoint: 'tts.bytes', model: 'double', status: '200' }), 1);
    assert.equal(await a.value('voicegate_requests_total', { status: '503' }), 1);
    assert.equal(await b.value('voicegate_requests_total', { status: '503' }), undefined);
    assert.equal(await a.value('voicegate_errors_total', { endpoint: 'tts.bytes', code: 'engine_unavailable' }), 1);
    // 11 characters × 2, and ⌈3 × 0.5⌉ — the ledger's own rounding.
    assert.equal(await a.value('voicegate_credits_charged_total', { org: 'org_1', model: 'double' }), 22);
    assert.equal(await a.value('voicegate_credits_charged_total', { org: 'org_1', model: 'half' }), 2);
    assert.equal(await b.value('voicegate_credits_charged_total', { org: 'org_1', model: 'double' }), 22);
    assert.equal(await a.value('voicegate_audio_seconds_total', { model: 'double', engine: 'espeak' }), 4);

    const text = await a.metrics.render();
    assert.match(text, /voicegate_time_to_first_audio_seconds_bucket\{le="0\.3",endpoint="tts\.bytes",model="double"\} 2/);
    assert.match(text, /voicegate_time_to_first_audio_seconds_count\{endpoint="tts\.bytes",model="half"\} 1/);
    // (1100 − 100) ms for 2 s of audio, successful HTTP requests only.
    assert.match(text, /voicegate_real_time_factor_sum\{engine="espeak"\} 1\n/);
    assert.match(text, /voicegate_real_time_factor_count\{engine="espeak"\} 2\n/);
    assert.match(text, /voicegate_info\{version="9\.9\.9"\} 1/);
    assert.doesNotMatch(text, /req_|key_secret/, 'no request ids or keys in labels');
    assert.equal(globalRegistry.getSingleMetric('voicegate_requests_total'), undefined, 'not the global registry');
  } finally {
    a.stop();
    b.stop();
  }
});

test('requests ended before their model was known count as unknown; WebSocket turns give no real-time factor', async () => {
  const a = setup('server-c');
  try {
    diagnostics.end.publish({ instance: 'server-c', requestId: 'r', transport: 'http', endpoint: null, model: null, engine: null, durationMs: 5, charactersCharged: 0, audioSeconds: 0, errorCode: 'invalid_json', status: 400, aborted: false });
    run('server-c', 'ws_1', { transport: 'websocket' });
    assert.equal(await a.value('voicegate_requests_total', { endpoint: 'unknown', model: 'unknown', status: '400' }), 1);
    assert.equal(await a.value('voicegate_errors_total', { endpoint: 'unknown', code: 'invalid_json' }), 1);
    assert.doesNotMatch(await a.metrics.render(), /voicegate_real_time_factor_count\{/);
  } finally {
    a.stop();
  }
});

test('engine gauges are read at scrape time', async () => {
  const pool = { id: 'espeak', type: 'espeak', sampleRate: 22050, ready: true, workers: 4, busy: 3, queued: 7, firstSentencesSplit: 5 };
  const remote = {
    id: 'gpu',
    type: 'openai-upstream',
    sampleRate: 24000,
    ready: true,
    upstreams: { healthy: 1, total: 2, servers: [{ url: 'http://user:pw@gpu-1:8880/base/?token=x', healthy: true }, { url: 'http://gpu-2:8880', healthy: false }] },
  };
  const a = setup('server-d', [pool, remote]);
  try {
    assert.equal(await a.value('voicegate_engine_queue_depth', { engine: 'espeak' }), 7);
    assert.equal(await a.value('voicegate_engine_busy_workers', { engine: 'espeak' }), 3);
    assert.equal(await a.value('voicegate_engine_workers', { engine: 'espeak' }), 4);
    assert.equal(await a.value('voicegate_engine_first_sentences_split_total', { engine: 'espeak' }), 5);
    assert.equal(await a.value('voicegate_engine_first_sentences_split_total', { engine: 'gpu' }), undefined, 'only an engine that splits counts');
    assert.equal(await a.value('voicegate_engine_queue_depth', { engine: 'gpu' }), undefined, 'a remote engine has no queue');
    pool.queued = 0;
    assert.equal(await a.value('voicegate_engine_queue_depth', { engine: 'espeak' }), 0);
    assert.equal(await a.value('voicegate_upstreams_healthy', { engine: 'gpu' }), 1);
    assert.equal(await a.value('voicegate_upstreams', { engine: 'gpu' }), 2);
    assert.equal(await a.value('voicegate_upstream_healthy', { engine: 'gpu', upstream: 'http://gpu-1:8880/base' }), 1);
    assert.equal(await a.value('voicegate_upstream_healthy', { engine: 'gpu', upstream: 'http://gpu-2:8880' }), 0);
    assert.doesNotMatch(await a.metrics.render(), /pw|token/);
    assert.equal(upstreamLabel('not a url'), 'unknown');
  } finally {
    a.stop();
  }
});

test("the store's WAL flushes are read at scrape time, and absent for a store without them", async () => {
  const stats: FlushStats = { flushes: 12, onEventLoop: true, averageMs: 0.25 };
  const a = setup('server-wal', [], { flushStats: () => stats });
  const b = setup('server-pg', [], {});
  try {
    assert.equal(await a.value('voicegate_store_wal_flushes_total'), 12);
    assert.equal(await a.value('voicegate_store_wal_flush_on_event_loop'), 1);
    assert.equal(await a.value('voicegate_store_wal_flush_average_seconds'), 0.00025);
    Object.assign(stats, { flushes: 20, onEventLoop: false, averageMs: 3 });
    assert.equal(await a.value('voicegate_store_wal_flushes_total'), 20);
    assert.equal(await a.value('voicegate_store_wal_flush_on_event_loop'), 0);
    assert.equal(await a.value('voicegate_store_wal_flush_average_seconds'), 0.003);
    assert.doesNotMatch(await b.metrics.render(), /voicegate_store_wal/);
  } finally {
    a.stop();
    b.stop();
  }
});

test('whether the limit counters lost Redis is read at scrape time', async () => {
  let status: LimitsStatus = { state: 'shared', fallbacks: 0, gateways: 3 };
  const a = setup('server-limits', [], undefined, { status: () => status });
  const b = setup('server-no-limits');
  try {
    assert.equal(await a.value('voicegate_limits_degraded'), 0);
    assert.equal(await a.value('voicegate_limits_fallbacks_total'), 0);
    status = { state: 'degraded', fallbacks: 1, gateways: 3 };
    assert.equal(await a.value('voicegate_limits_degraded'), 1);
    assert.equal(await a.value('voicegate_limits_fallbacks_total'), 1);
    assert.equal(await a.value('voicegate_limits_gateways'), 3);
    assert.doesNotMatch(await b.metrics.render(), /voicegate_limits_/, 'accounts off: no limit counters');
  } finally {
    a.stop();
    b.stop();
  }
});

test('active streams and WebSocket connections follow the activity', async () => {
  const a = setup('server-e');
  try {
    diagnostics.admitted.publish({ instance: 'server-e', requestId: 'x', endpoint: 'tts.sse', orgId: 'o', keyId: null, model: 'm', engine: 'e', characters: 1, admitMs: 1 });
    diagnostics.websocketOpen.publish({ instance: 'server-e', connectionId: 'c', orgId: 'o' });
    assert.equal(await a.value('voicegate_active_streams', { endpoint: 'tts.sse' }), 1);
    assert.equal(await a.value('voicegate_websocket_connections'), 1);
    diagnostics.end.publish({ instance: 'server-e', requestId: 'x', transport: 'http', endpoint: 'tts.sse', model: 'm', engine: 'e', durationMs: 1, charactersCharged: 0, audioSeconds: 0, errorCode: null, status: 499, aborted: true });
    diagnostics.websocketClose.publish({ instance: 'server-e', connectionId: 'c', orgId: 'o' });
    assert.equal(await a.value('voicegate_active_streams', { endpoint: 'tts.sse' }), undefined);
    assert.equal(await a.value('voicegate_websocket_connections'), 0);
  } finally {
    a.stop();
  }
});

test('a store that does not answer leaves the jobs gauge at its last figures, and the scrape answers; the journal is read at scrape time', async () => {
  const activity = new Activity('scrape-outage');
  let down = false;
  const journal = { entries: 0, replayed: 0 };
  const metrics = new Metrics({
    instanceId: 'scrape-outage',
    version: '9.9.9',
    engines: { list: () => [] },
    models: { get: () => undefined },
    activity,
    jobs: { countByStatus: async () => (down ? Promise.reject(new Error('store unavailable')) : ({ queued: 4 } as never)) },
    journal,
    processMetrics: false,
  });
  try {
    assert.match(await metrics.registry.metrics(), /^voicegate_jobs\{status="queued"\} 4$/m);
    down = true;
    journal.entries = 3;
    const text = await metrics.registry.metrics();
    assert.match(text, /^voicegate_jobs\{status="queued"\} 4$/m, 'stale, not a failed scrape');
    assert.match(text, /^voicegate_charge_journal_entries 3$/m);
    journal.entries = 0;
    journal.replayed = 3;
    assert.match(await metrics.registry.metrics(), /^voicegate_charge_journal_replayed_total 3$/m);
  } finally {
    metrics.stop();
    activity.stop();
  }
});
