/**
 * @module test/tracing
 * OpenTelemetry traces from a real server to a test OTLP receiver (an HTTP
 * server decoding OTLP/HTTP JSON): the span tree, attributes and timings of
 * a `/tts/sse` request, a cache hit, a WebSocket turn and a long-form job
 * (its segments, its webhook carrying its trace, and its runs on two
 * gateways sharing PostgreSQL, the second resuming it); a trace crossing into
 * a second Voicegate used as the upstream engine; an incoming
 * `traceparent` honoured; log lines carrying the ids; and, with the
 * variables unset, nothing subscribed at all.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { diagnostics } from '../src/synthesis/diagnostics.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { eventually } from './helpers/redis.js';
import { enginesWithPeer } from './helpers/peer-engine.js';
import { startServer, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const T = { timeout: 120_000 };

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  start: number;
  end: number;
  attributes: Record<string, unknown>;
  status: number;
  links: { traceId: string; spanId: string }[];
  service: string;
}

function valueOf(value: Record<string, unknown>): unknown {
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return Number(value.doubleValue);
  if ('boolValue' in value) return value.boolValue;
  return value;
}

function attributesOf(list: { key: string; value: Record<string, unknown> }[] = []): Record<string, unknown> {
  return Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));
}

/** An OTLP/HTTP JSON trace receiver on an ephemeral port. */
export async function otlpReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      assert.equal(req.url, '/v1/traces');
      assert.match(String(req.headers['content-type']), /application\/json/);
      const message = JSON.parse(body) as { resourceSpans: any[] };
      for (const resource of message.resourceSpans) {
        const service = String(attributesOf(resource.resource?.attributes)['service.name']);
        for (const scope of resource.scopeSpans) {
          for (const span of scope.spans) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              start: Number(BigInt(span.startTimeUnixNano) / 1000n) / 1000,
              end: Number(BigInt(span.endTimeUnixNano) / 1000n) / 1000,
              attributes: attributesOf(span.attributes),
              status: span.status?.code ?? 0,
              links: (span.links ?? []).map((link: any) => ({ traceId: link.traceId, spanId: link.spanId })),
              service,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The OTLP variables of a server exporting to `url` (set while it is created). */
export function withTracing<T>(url: string, create: () => Promise<T>, service = 'voicegate-test'): Promise<T> {
  const names = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_BSP_SCHEDULE_DELAY', 'OTEL_SERVICE_NAME', 'OTEL_RESOURCE_ATTRIBUTES'] as const;
  const saved = names.map((name) => process.env[name]);
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_SERVICE_NAME: service,
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test',
  });
  return create().finally(() =>
    names.forEach((name, i) => {
      if (saved[i] === undefined) delete process.env[name];
      else process.env[name] = saved[i];
    }),
  );
}

const hex = (bytes: number) => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
export function traceparent(): { header: string; traceId: string; spanId: string } {
  const traceId = hex(16);
  const spanId = hex(8);
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

/** The spans of `traceId`, once `ready` holds of them. */
export async function traceOf(receiver: { spans: ReceivedSpan[] }, traceId: string, ready: (spans: ReceivedSpan[]) => boolean, withinMs = 20_000): Promise<ReceivedSpan[]> {
  let spans: ReceivedSpan[] = [];
  const ok = await eventually(() => ready((spans = receiver.spans.filter((span) => span.traceId === traceId))), withinMs, 20);
  assert.ok(ok, `trace ${traceId}: ${spans.map((s) => s.name).join(', ')}`);
  return spans;
}

const named = (spans: ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);
const one = (spans: ReceivedSpan[], name: string) => {
  const found = named(spans, name);
  assert.equal(found.length, 1, `one ${name} in ${spans.map((s) => s.name).join(', ')}`);
  return found[0];
};
const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) => spans.filter((span) => span.parentSpanId === parent.spanId);
/** Within its parent's time, to a millisecond of clock rounding. */
function within(child: ReceivedSpan, parent: ReceivedSpan): void {
  assert.ok(child.start >= parent.start - 1 && child.end <= parent.end + 1, `${child.name} [${child.start}, ${child.end}] within ${parent.name} [${parent.start}, ${parent.end}]`);
}

const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } as const;

describe('traces', () => {
  let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
  let hooks: Server;
  const hooked: IncomingHttpHeaders[] = [];
  let server: TestServer;
  /** A second Voicegate, the first's upstream engine (`peer`). */
  let remote: TestServer;
  let org: TestOrg;
  const logs: Record<string, unknown>[] = [];

  before(async () => {
    receiver = await otlpReceiver();
    hooks = createServer((req, res) => {
      hooked.push(req.headers);
      req.resume().on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
    const logDestination = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n')) if (line.trim()) logs.push(JSON.parse(line));
        done();
      },
    });
    remote = await withTracing(receiver.url, () => startServer(), 'voicegate-engine');
    server = await withTracing(receiver.url, () =>
      startServer({
        logDestination,
        config: {
          accounts: { enabled: true },
          cache: { enabled: true },
          ...enginesWithPeer(remote.url),
          jobs: { pollMs: 50, maxCharacters: 60_000, webhooks: { allowHttp: true, allowPrivateNetworks: true } },
        },
      }),
    );
    org = await newOrg(server, { credits: 1_000_000 });
  }, T);
  after(async () => {
    await server?.close();
    await remote?.close();
    await receiver?.close();
    hooks?.close();
  });

  test('a /tts/sse request: HTTP span under the caller’s traceparent, the session under it with resolve, admission, worker queue, engine, encode and charge; then a cache hit', T, async () => {
    const parent = traceparent();
    const body = { model_id: 'gepard-1.0', transcript: 'Traces follow the request through the gateway.', voice: { mode: 'id', id: 'sarah' }, output_format: RAW };
    const response = await server.post('/tts/sse', body, { ...org.auth, traceparent: parent.header });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-cache'), 'miss');
    await response.text();
    const spans = await traceOf(receiver, parent.traceId, (found) => found.some((s) => s.name === 'POST /tts/sse') && found.some((s) => s.name === 'synthesis tts.sse'));
    const http = one(spans, 'POST /tts/sse');
    assert.equal(http.parentSpanId, parent.spanId, 'the caller’s span is the parent');
    assert.equal(http.kind, 2, 'server');
    assert.equal(http.attributes['http.request.method'], 'POST');
    assert.equal(http.attributes['url.path'], '/tts/sse');
    assert.equal(http.attributes['http.route'], '/tts/sse');
    assert.equal(http.attributes['http.response.status_code'], 200);
    assert.equal(http.service, 'voicegate-test');
    const session = one(spans, 'synthesis tts.sse');
    assert.equal(session.parentSpanId, http.spanId);
    within(session, http);
    assert.deepEqual(
      {
        endpoint: session.attributes['voicegate.endpoint'],
        model: session.attributes['voicegate.model'],
        engine: session.attributes['voicegate.engine'],
        voice: session.attributes['voicegate.voice'],
        characters: session.attributes['voicegate.characters'],
        credits: session.attributes['voicegate.credits'],
        cache: session.attributes['voicegate.cache'],
        outcome: session.attributes['voicegate.outcome'],
        status: session.attributes['voicegate.status'],
      },
      { endpoint: 'tts.sse', model: 'gepard-1.0', engine: 'espeak', voice: 'sarah', characters: body.transcript.length, credits: body.transcript.length, cache: 'miss', outcome: 'ok', status: 200 },
    );
    const children = childrenOf(spans, session);
    for (const name of ['resolve', 'admission', 'worker queue', 'engine', 'charge']) assert.ok(children.some((s) => s.name === name), `${name} under the session: ${children.map((s) => s.name)}`);
    for (const child of children) within(child, session);
    const resolve = one(children, 'resolve');
    const admission = one(children, 'admission');
    assert.ok(resolve.end <= admission.start + 0.001, 'admission follows resolving');
    const engine = named(children, 'engine')[0];
    const engineChildren = childrenOf(spans, engine);
    const firstChunk = one(engineChildren, 'engine first chunk');
    const encode = one(engineChildren, 'encode');
    within(firstChunk, engine);
    within(encode, engine);
    assert.equal(firstChunk.start, engine.start);
    assert.equal(engine.attributes['voicegate.engine'], 'espeak');
    assert.ok(Number(engine.attributes['voicegate.audio_seconds']) > 0.5);
    const charge = one(children, 'charge');
    assert.ok(charge.start >= firstChunk.end - 1, 'charged after the first audio was made');
    assert.equal(charge.attributes['voicegate.credits'], body.transcript.length);
    // Log lines written inside the request name its trace: the request log names the session's span.
    const lines = logs.filter((line) => line.request_id === session.attributes['voicegate.request_id']);
    assert.ok(lines.length >= 2, JSON.stringify(lines));
    for (const line of lines) assert.equal(line.trace_id, parent.traceId, JSON.stringify(line));
    const ended = lines.find((line) => line.msg === 'synthesis ended');
    assert.equal(ended?.span_id, session.spanId, 'the request log names the session’s span');
    assert.ok(lines.some((line) => line.span_id === http.spanId), 'the HTTP layer’s lines name the HTTP span');

    // The same request again: a hit, with no engine or worker in its trace.
    const again = traceparent();
    const hit = await server.post('/tts/sse', body, { ...org.auth, traceparent: again.header });
    assert.equal(hit.headers.get('x-cache'), 'hit');
    await hit.text();
    const hitSpans = await traceOf(receiver, again.traceId, (found) => found.some((s) => s.name === 'synthesis tts.sse') && found.some((s) => s.name === 'POST /tts/sse'));
    const hitSession = one(hitSpans, 'synthesis tts.sse');
    assert.equal(hitSession.attributes['voicegate.cache'], 'hit');
    assert.deepEqual(named(hitSpans, 'engine'), []);
    assert.deepEqual(named(hitSpans, 'worker queue'), []);
    assert.ok(childrenOf(hitSpans, hitSession).some((s) => s.name === 'charge'));
  });

  test('a trace crosses into a second Voicegate used as the upstream engine, under one trace id', T, async () => {
    const parent = traceparent();
    const response = await server.post('/tts/bytes', { model_id: 'peer-model', transcript: 'From one gateway to the next.', voice: { mode: 'id', id: 'sarah' }, output_format: RAW }, { ...org.auth, traceparent: parent.header });
    assert.equal(response.status, 200, await response.clone().text());
    assert.ok((await response.arrayBuffer()).byteLength > 10_000);
    const spans = await traceOf(
      receiver,
      parent.traceId,
      (found) => found.some((s) => s.service === 'voicegate-engine' && s.name.startsWith('synthesis ')) && found.some((s) => s.service === 'voicegate-test' && s.name === 'synthesis tts.bytes'),
    );
    const front = one(spans.filter((s) => s.service === 'voicegate-test'), 'synthesis tts.bytes');
    assert.equal(front.attributes['voicegate.engine'], 'peer');
    const engine = named(childrenOf(spans, front), 'engine')[0];
    assert.ok(engine, 'the engine segment under the front session');
    const call = spans.find((s) => s.kind === 3 && s.parentSpanId === front.spanId);
    assert.ok(call, `a client span for the upstream call: ${spans.map((s) => `${s.service}:${s.name}:${s.kind}`).join(', ')}`);
    assert.equal(call.attributes['http.response.status_code'], 200);
    const served = spans.find((s) => s.service === 'voicegate-engine' && s.kind === 2);
    assert.ok(served, 'the second gateway’s HTTP span');
    assert.equal(served.parentSpanId, call.spanId, 'the remote request continues the call');
    const remoteSession = spans.find((s) => s.service === 'voicegate-engine' && s.name.startsWith('synthesis '))!;
    assert.equal(remoteSession.parentSpanId, served.spanId);
    assert.ok(childrenOf(spans, remoteSession).some((s) => s.name === 'engine'), 'the remote engine’s work in the same trace');
  });

  test('a WebSocket turn is a span under the upgrade’s traceparent, with its engine work under it', T, async () => {
    const parent = traceparent();
    const socket = await TestSocket.open(server.url, { ...org.auth, traceparent: parent.header });
    let spans: ReceivedSpan[];
    try {
      socket.ws.send(JSON.stringify({ model_id: 'gepard-1.0', transcript: 'A turn on a socket.', voice: { mode: 'id', id: 'sarah' }, output_format: RAW, context_id: 'turn-1' }));
      await socket.waitFor((event) => event.type === 'done');
      // The socket stays open until the turn has ended on the server: closing it earlier would end the turn as aborted.
      spans = await traceOf(receiver, parent.traceId, (found) => found.some((s) => s.name === 'websocket turn tts.websocket'));
    } finally {
      socket.ws.close();
    }
    const turn = one(spans, 'websocket turn tts.websocket');
    assert.equal(turn.parentSpanId, parent.spanId);
    assert.equal(turn.attributes['voicegate.transport'], 'websocket');
    assert.equal(turn.attributes['voicegate.outcome'], 'ok');
    const children = childrenOf(spans, turn);
    assert.ok(children.some((s) => s.name === 'engine'), children.map((s) => s.name).join());
    for (const child of children) within(child, turn);
  });

  test('a job: a run span in the submit’s trace with one span per segment; its webhook carries the trace', T, async () => {
    const parent = traceparent();
    const transcript = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} of a job that is long enough to be cut.`).join(' ');
    const hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hook`;
    const response = await server.post(
      '/tts/jobs',
      { model_id: 'tone-jobs', transcript, voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 8000 }, webhook_url: hookUrl },
      { ...org.auth, traceparent: parent.header },
    );
    assert.equal(response.status, 202, await response.clone().text());
    const submitted = (await response.json()) as { id: string; progress: { segments_total: number } };
    const total = submitted.progress.segments_total;
    assert.ok(total >= 2, `segments: ${total}`);
    const spans = await traceOf(receiver, parent.traceId, (found) => found.some((s) => s.name === 'job') && named(found, 'job segment tts.jobs').length >= total, 60_000);
    const http = one(spans, 'POST /tts/jobs');
    assert.equal(http.parentSpanId, parent.spanId);
    // The submit is a session like any request (its whole cost held): the runs continue it.
    const submit = one(spans, 'synthesis tts.jobs');
    assert.equal(submit.parentSpanId, http.spanId);
    const run = one(spans, 'job');
    assert.equal(run.parentSpanId, submit.spanId, 'the run continues the submit’s trace');
    assert.deepEqual(run.links, [{ traceId: parent.traceId, spanId: submit.spanId }]);
    assert.equal(run.attributes['voicegate.job.id'], submitted.id);
    assert.equal(run.attributes['voicegate.job.outcome'], 'succeeded');
    const segments = named(spans, 'job segment tts.jobs');
    assert.equal(segments.length, total);
    for (const segment of segments) {
      assert.equal(segment.parentSpanId, run.spanId);
      within(segment, run);
      assert.ok(childrenOf(spans, segment).some((s) => s.name === 'engine'));
    }
    assert.ok(await eventually(() => hooked.length >= 1, 30_000, 20), 'webhook delivered');
    const delivered = String(hooked[0].traceparent);
    assert.match(delivered, new RegExp(`^00-${parent.traceId}-[0-9a-f]{16}-01$`), 'the webhook continues the job’s trace');
    const webhook = (await traceOf(receiver, parent.traceId, (found) => found.some((s) => s.name === 'webhook POST'))).find((s) => s.name === 'webhook POST')!;
    assert.equal(delivered.split('-')[2], webhook.spanId);
    assert.equal(webhook.attributes['http.response.status_code'], 204);
  });
});

describe('a job resumed on another gateway', () => {
  test('both runs are spans of the submit’s trace, linked to it: the first stopped, the second resumed where it left off', T, async () => {
    const receiver = await otlpReceiver();
    const schema = freshSchemaName();
    const dir = mkdtempSync(join(tmpdir(), 'voicegate-trace-jobs-'));
    const config = {
      accounts: { enabled: true },
      store: { databaseUrl: TEST_DATABASE_URL, schema, poolSize: 4 },
      engines: { tone: { type: 'tone', sampleRate: 8000, secondsPerChar: 0.01, chunkSeconds: 0.5 } } as never,
      models: { 'tone-jobs': { extends: 'omnivoice', engine: 'tone' } },
      jobs: { dir, segmentCharacters: 100, pollMs: 50, leaseMs: 1500, heartbeatMs: 300 },
    };
    const first = await withTracing(receiver.url, () => startServer({ config }), 'gateway-a');
    let second: TestServer | null = null;
    let firstClosed = false;
    try {
      const org = await newOrg(first, { credits: 1_000_000 });
      const parent = traceparent();
      const transcript = Array.from({ length: 400 }, (_, i) => `The river and the stone rest, number ${i}.`).join(' ');
      const response = await first.post(
        '/tts/jobs',
        { model_id: 'tone-jobs', transcript, voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 8000 } },
        { ...org.auth, traceparent: parent.header },
      );
      assert.equal(response.status, 202, await response.clone().text());
      const { id } = (await response.json()) as { id: string };
      const jobs = first.app.services.store.jobs;
      assert.ok(await eventually(async () => ((await jobs.get(id))?.segmentsDone ?? 0) >= 5, 60_000, 10), 'the first gateway made progress');
      // A gateway leaving hands its lease back; the next one takes the job up.
      await first.close();
      firstClosed = true;
      const stoppedAt = undefined as number | undefined;
      second = await withTracing(receiver.url, () => startServer({ config }), 'gateway-b');
      assert.ok(await eventually(async () => (await second!.app.services.store.jobs.get(id))?.status === 'succeeded', 90_000, 50), 'the second gateway finished it');
      const spans = await traceOf(receiver, parent.traceId, (found) => named(found, 'job').length === 2 && named(found, 'job').every((run) => run.attributes['voicegate.job.outcome']));
      const submit = one(spans, 'synthesis tts.jobs');
      const [a, b] = named(spans, 'job').sort((x, y) => x.start - y.start);
      assert.equal(a.service, 'gateway-a');
      assert.equal(b.service, 'gateway-b');
      for (const run of [a, b]) {
        assert.equal(run.parentSpanId, submit.spanId);
        assert.deepEqual(run.links, [{ traceId: parent.traceId, spanId: submit.spanId }]);
      }
      assert.equal(a.attributes['voicegate.job.outcome'], 'stopped');
      assert.equal(a.attributes['voicegate.job.resumed'], false);
      assert.equal(b.attributes['voicegate.job.outcome'], 'succeeded');
      assert.equal(b.attributes['voicegate.job.resumed'], true);
      assert.equal(b.attributes['voicegate.job.attempt'], 2);
      const resumedFrom = Number(b.attributes['voicegate.job.segments_done']);
      assert.ok(resumedFrom > 0, `resumed at segment ${resumedFrom}`);
      if (stoppedAt !== undefined) assert.equal(resumedFrom, stoppedAt);
      // Each segment is made once, under the run that made it.
      const segments = named(spans, 'job segment tts.jobs');
      assert.equal(segments.filter((s) => s.parentSpanId === b.spanId).length, Number(b.attributes['voicegate.job.segments']) - resumedFrom);
      assert.ok(segments.filter((s) => s.parentSpanId === a.spanId).length >= resumedFrom);
    } finally {
      await second?.close();
      if (!firstClosed) await first.close();
      await receiver.close();
      await dropSchema(schema);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('tracing off', () => {
  test('with no OTEL variables, nothing subscribes to the engine events and no span is made', T, async () => {
    const server = await startServer();
    try {
      const response = await server.post('/tts/bytes', { model_id: 'gepard-1.0', transcript: 'Untraced.', voice: { mode: 'id', id: 'sarah' }, output_format: RAW }, { traceparent: traceparent().header });
      assert.equal(response.status, 200);
      assert.equal(diagnostics.engine.hasSubscribers, false);
    } finally {
      await server.close();
    }
  });
});
