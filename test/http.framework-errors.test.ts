/**
 * @module test/http.framework-errors
 * Refusals made below the routes still speak the registry: the router (a
 * malformed URL, an over-long id), the body parsers (an empty body where
 * none is needed, an unreadable type), Node's HTTP parser, shutdown, and the
 * WebSocket frame caps. Every HTTP error carries the envelope, an
 * `x-request-id` equal to its body's `request_id`, and `x-should-retry`,
 * which the real Cartesia and OpenAI SDKs obey.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import Cartesia from '@cartesia/cartesia-js';
import OpenAI from 'openai';
import { isRetryable, type ErrorCode } from '../src/errors/registry.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

const ADMIN_TOKEN = 'admin-token-0123456789abcdef';
const MALFORMED = '%C0%AE%C0%AE%2F';

/** Log lines, parsed, so a test can count what the server itself saw. */
class LogLines extends Writable {
  readonly lines: Record<string, any>[] = [];
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    for (const line of String(chunk).split('\n')) if (line.trim()) this.lines.push(JSON.parse(line));
    callback();
  }
  incoming(path: string): number {
    return this.lines.filter((l) => l.msg === 'incoming request' && l.req?.url === path).length;
  }
}

let server: TestServer;
let org: TestOrg;
let logs: LogLines;

before(async () => {
  logs = new LogLines();
  server = await startServer({ config: { accounts: { enabled: true, adminToken: ADMIN_TOKEN } }, logDestination: logs });
  org = await newOrg(server);
});
after(() => server.close());

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

interface Envelope {
  error: string;
  error_code: string;
  title: string;
  message: string;
  detail: string;
  status_code: number;
  request_id: string;
  doc_url: string;
}

/** The documented envelope, with the header id equal to the body id and the registry's retry header. */
function checkEnvelope(status: number, headers: Headers | Record<string, string | string[] | undefined>, text: string, code: ErrorCode, where: string): Envelope {
  const header = (name: string) => (headers instanceof Headers ? headers.get(name) : (headers[name] as string | undefined)) ?? null;
  assert.match(header('content-type') ?? '', /^application\/json/, `${where}: JSON`);
  const body = JSON.parse(text) as Envelope;
  assert.equal(body.error_code, code, `${where}: ${text}`);
  assert.equal(status, body.status_code, `${where}: status`);
  assert.deepEqual(Object.keys(body).sort(), ['detail', 'doc_url', 'error', 'error_code', 'message', 'request_id', 'status_code', 'title']);
  assert.equal(body.error, code);
  assert.equal(body.detail, body.message);
  assert.ok(body.message.length > 10, `${where}: a message`);
  assert.match(body.request_id, /^req_[0-9a-f]{24}$/);
  assert.equal(header('x-request-id'), body.request_id, `${where}: x-request-id is the body's request_id`);
  assert.equal(header('x-should-retry'), String(isRetryable(code)), `${where}: x-should-retry`);
  return body;
}

async function expectError(response: Response, status: number, code: ErrorCode, where: string): Promise<Envelope> {
  assert.equal(response.status, status, where);
  return checkEnvelope(response.status, response.headers, await response.text(), code, where);
}

/** One raw HTTP/1.1 exchange on a fresh connection: what was written comes back unparsed by any client. */
function rawRequest(request: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      try {
        resolve(parseResponses(Buffer.concat(chunks).toString('utf8'))[0]);
      } catch (err) {
        reject(err);
      }
    });
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
    socket.write(request);
  });
}

/** Splits a byte stream of HTTP/1.1 responses (each with Content-Length) into status, headers and body. */
function parseResponses(text: string): { status: number; headers: Record<string, string>; body: string }[] {
  const out = [];
  let rest = text;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    assert.ok(end > 0, `a response head in ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length']);
    assert.ok(Number.isInteger(length), 'Content-Length');
    const bodyBytes = Buffer.from(rest.slice(end + 4), 'utf8');
    out.push({ status: Number(statusLine.split(' ')[1]), headers, body: bodyBytes.subarray(0, length).toString('utf8') });
    rest = bodyBytes.subarray(length).toString('utf8');
  }
  return out;
}

describe('router errors', () => {
  // Each route with a path parameter, its methods, the headers it needs to reach its handler,
  // and the 404 its handler gives for an id that does not exist.
  const routes: { path: (id: string) => string; methods: string[]; headers: () => Record<string, string>; missing: ErrorCode }[] = [
    { path: (id) => `/voices/${id}`, methods: ['GET', 'PATCH', 'DELETE'], headers: () => org.auth, missing: 'voice_not_found' },
    { path: (id) => `/pronunciation-dicts/${id}`, methods: ['GET', 'PATCH', 'DELETE'], headers: () => org.auth, missing: 'dict_not_found' },
    { path: (id) => `/models/${id}`, methods: ['GET'], headers: () => ({}), missing: 'model_not_found' },
    { path: (id) => `/admin/orgs/${id}`, methods: ['GET', 'PATCH'], headers: () => admin, missing: 'org_not_found' },
    { path: (id) => `/admin/orgs/${id}/keys`, methods: ['GET', 'POST'], headers: () => admin, missing: 'org_not_found' },
    { path: (id) => `/admin/orgs/${id}/usage`, methods: ['GET'], headers: () => admin, missing: 'org_not_found' },
    { path: (id) => `/admin/keys/${id}`, methods: ['DELETE'], headers: () => admin, missing: 'key_not_found' },
  ];

  test('an id of 101 or 256 characters reaches its route and gets that route’s 404', { timeout: 30_000 }, async () => {
    for (const length of [101, 256]) {
      const id = 'x'.repeat(length);
      for (const route of routes) {
        for (const method of route.methods) {
          const headers: Record<string, string> = { ...route.headers() };
          const withBody = method === 'PATCH' || method === 'POST';
          if (withBody) headers['content-type'] = 'application/json';
          const body = withBody ? (route.missing === 'org_not_found' && method === 'PATCH' ? '{"limits":{}}' : '{"name":"n"}') : undefined;
          const response = await fetch(server.url + route.path(id), { method, headers, body });
          await expectError(response, 404, route.missing, `${method} ${route.path(`<${length}>`)}`);
        }
      }
    }
  });

  test('an id over 256 characters is 414 url_too_long on every route and method', { timeout: 30_000 }, async () => {
    const id = 'x'.repeat(257);
    for (const route of routes) {
      for (const method of route.methods) {
        // No credentials: the router answers before any hook runs.
        const response = await fetch(server.url + route.path(id), { method });
        const body = await expectError(response, 414, 'url_too_long', `${method} ${route.path('<257>')}`);
        assert.match(body.message, /256 characters/);
      }
    }
    const head = await fetch(server.url + `/voices/${id}`, { method: 'HEAD' });
    assert.equal(head.status, 414);
    assert.match(head.headers.get('x-request-id') ?? '', /^req_/);
    assert.equal(head.headers.get('x-should-retry'), 'false');
  });

  test('a path that is not valid percent-encoded UTF-8 is 400 invalid_request on every route and method', { timeout: 30_000 }, async () => {
    for (const route of routes) {
      for (const method of route.methods) {
        const response = await fetch(server.url + route.path(MALFORMED), { method });
        const body = await expectError(response, 400, 'invalid_request', `${method} ${route.path(MALFORMED)}`);
        assert.match(body.message, /percent-encoded/);
      }
    }
    // Outside any parameter too, and on a TTS route.
    await expectError(await fetch(server.url + '/voi%C0ces'), 400, 'invalid_request', 'GET /voi%C0ces');
    await expectError(await fetch(server.url + '/tts/bytes%FF', { method: 'POST', body: '{}' }), 400, 'invalid_request', 'POST /tts/bytes%FF');
  });

  test('router errors carry the server’s own request id, whatever id the client sends', { timeout: 10_000 }, async () => {
    const tooLong = await fetch(server.url + `/voices/${'x'.repeat(300)}`, { headers: { 'x-request-id': 'trace-414' } });
    assert.match((await expectError(tooLong, 414, 'url_too_long', 'with an id')).request_id, /^req_[0-9a-f]{24}$/);
    const malformed = await fetch(server.url + `/models/${MALFORMED}`, { headers: { 'x-request-id': 'trace-400' } });
    assert.match((await expectError(malformed, 400, 'invalid_request', 'with an id')).request_id, /^req_[0-9a-f]{24}$/);
  });

  test('raw requests fetch would normalise or refuse to send get the envelope too', { timeout: 20_000 }, async () => {
    // fetch would resolve the dot segment and drop `/voices`.
    const dotted = await rawRequest(`GET /voices/%2e%2e/${MALFORMED} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    checkEnvelope(dotted.status, dotted.headers, dotted.body, 'invalid_request', 'dot segment');
    assert.equal(dotted.status, 400);
    const long = await rawRequest(`DELETE /admin/keys/${'k'.repeat(1000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    assert.equal(long.status, 414);
    checkEnvelope(long.status, long.headers, long.body, 'url_too_long', 'raw long id');
    // Not HTTP at all, and headers over Node's limit: Node's parser refuses before Fastify sees a request.
    const garbage = await rawRequest('GET /voices/a b c HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.equal(garbage.status, 400);
    assert.match(checkEnvelope(garbage.status, garbage.headers, garbage.body, 'invalid_request', 'bad request line').message, /HTTP\/1\.1/);
    const huge = await rawRequest(`GET /models HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.equal(huge.status, 431);
    checkEnvelope(huge.status, huge.headers, huge.body, 'headers_too_large', 'huge headers');
  });
});

describe('bodies', () => {
  const json = { 'content-type': 'application/json' };

  test('DELETE and GET with Content-Type: application/json and no body are answered, not invalid_json', { timeout: 20_000 }, async () => {
    // Admin: revoke a real key, then an unknown one.
    const issued = await server.app.services.accounts!.admin.issueKey(org.orgId, 'to revoke');
    const revoked = await fetch(`${server.url}/admin/keys/${issued.record.id}`, { method: 'DELETE', headers: { ...admin, ...json } });
    assert.equal(revoked.status, 200, await revoked.clone().text());
    assert.equal(((await revoked.json()) as { status: string }).status, 'revoked');
    await expectError(await fetch(`${server.url}/admin/keys/key_unknown`, { method: 'DELETE', headers: { ...admin, ...json } }), 404, 'key_not_found', 'DELETE unknown key');
    const orgs = await fetch(`${server.url}/admin/orgs`, { headers: { ...admin, ...json } });
    assert.equal(orgs.status, 200);
    await orgs.arrayBuffer();
    // Voices and dictionaries.
    const voices = await fetch(`${server.url}/voices`, { headers: { ...org.auth, ...json } });
    assert.equal(voices.status, 200);
    await voices.arrayBuffer();
    await expectError(await fetch(`${server.url}/voices/ghost`, { method: 'DELETE', headers: { ...org.auth, ...json } }), 404, 'voice_not_found', 'DELETE voice');
    await expectError(await fetch(`${server.url}/voices/sarah`, { method: 'DELETE', headers: { ...org.auth, ...json } }), 403, 'voice_not_editable', 'DELETE built-in');
    const created = await fetch(`${server.url}/pronunciation-dicts`, { method: 'POST', headers: { ...org.auth, ...json }, body: JSON.stringify({ name: 'd' }) });
    const dict = (await created.json()) as { id: string };
    const got = await fetch(`${server.url}/pronunciation-dicts/${dict.id}`, { headers: { ...org.auth, ...json } });
    assert.equal(got.status, 200);
    await got.arrayBuffer();
    const deleted = await fetch(`${server.url}/pronunciation-dicts/${dict.id}`, { method: 'DELETE', headers: { ...org.auth, ...json } });
    assert.equal(deleted.status, 204);
    await expectError(await fetch(`${server.url}/pronunciation-dicts/${dict.id}`, { method: 'DELETE', headers: { ...org.auth, ...json } }), 404, 'dict_not_found', 'DELETE dict again');
    // An empty body of another type counts as none too.
    const form = await fetch(`${server.url}/admin/keys/key_unknown`, { method: 'DELETE', headers: { ...admin, 'content-type': 'application/x-www-form-urlencoded' } });
    await expectError(form, 404, 'key_not_found', 'DELETE with an empty form body');
  });

  test('routes that need a body still answer their own error when it is empty', { timeout: 20_000 }, async () => {
    const dict = await expectError(await fetch(`${server.url}/pronunciation-dicts`, { method: 'POST', headers: { ...org.auth, ...json } }), 400, 'invalid_request', 'POST dict');
    assert.match(dict.message, /name/);
    const limits = await expectError(await fetch(`${server.url}/admin/orgs/${org.orgId}`, { method: 'PATCH', headers: { ...admin, ...json } }), 400, 'invalid_request', 'PATCH org');
    assert.match(limits.message, /limits/);
    const tts = await expectError(await fetch(`${server.url}/tts/bytes`, { method: 'POST', headers: { ...org.auth, ...json } }), 400, 'invalid_json', 'POST /tts/bytes');
    assert.match(tts.message, /empty/);
    const clone = await expectError(await fetch(`${server.url}/voices/clone`, { method: 'POST', headers: { ...org.auth, ...json } }), 400, 'invalid_request', 'POST /voices/clone');
    assert.match(clone.message, /multipart/);
  });

  test('bad JSON is invalid_json; a body of another type is 415 unsupported_media_type naming what to send', { timeout: 20_000 }, async () => {
    await expectError(await fetch(`${server.url}/pronunciation-dicts`, { method: 'POST', headers: { ...org.auth, ...json }, body: '{"name":' }), 400, 'invalid_json', 'truncated JSON');
    await expectError(
      await fetch(`${server.url}/pronunciation-dicts`, { method: 'POST', headers: { ...org.auth, ...json }, body: '{"__proto__":{"x":1},"name":"p"}' }),
      400,
      'invalid_json',
      'prototype poisoning',
    );
    const xml = await expectError(
      await fetch(`${server.url}/pronunciation-dicts`, { method: 'POST', headers: { ...org.auth, 'content-type': 'application/xml' }, body: '<dict/>' }),
      415,
      'unsupported_media_type',
      'XML',
    );
    assert.match(xml.message, /application\/xml.*application\/json/);
    const garbage = await expectError(
      await fetch(`${server.url}/admin/orgs`, { method: 'POST', headers: { ...admin, 'content-type': 'not a type' }, body: '{"name":"x"}' }),
      415,
      'unsupported_media_type',
      'a Content-Type that is no media type',
    );
    assert.match(garbage.message, /not a type/);
    const octets = await expectError(
      await fetch(`${server.url}/voices/clone`, { method: 'POST', headers: { ...org.auth, 'content-type': 'application/octet-stream' }, body: 'RIFF' }),
      415,
      'unsupported_media_type',
      'octets to clone',
    );
    assert.match(octets.message, /multipart\/form-data/);
    const tts = await expectError(await fetch(`${server.url}/tts/bytes`, { method: 'POST', headers: { ...org.auth, 'content-type': 'not a type' }, body: '{}' }), 415, 'unsupported_media_type', 'TTS');
    assert.match(tts.message, /application\/json/);
  });
});

describe('WebSocket message caps', () => {
  test('over maxMessageBytes is a payload_too_large event on an open socket; over the 1 MiB hard cap closes with 1009', { timeout: 30_000 }, async () => {
    const socket = await TestSocket.open(server.url, org.auth);
    const padded = (bytes: number) => {
      const head = '{"context_id":"big","transcript":"';
      return head + 'x'.repeat(bytes - head.length - 2) + '"}';
    };
    socket.send(padded(65_537));
    const first = await socket.waitFor((e) => e.type === 'error' && e.error_code === 'payload_too_large');
    assert.match(first.message, /65536/);
    // Exactly at the hard cap: still read, still an event, still open.
    socket.send(padded(1_048_576));
    await socket.waitFor((e) => e.type === 'error' && e.error_code === 'payload_too_large' && e !== first);
    assert.equal(socket.events.filter((e) => e.error_code === 'payload_too_large').length, 2);
    socket.send({ context_id: 'never-opened', cancel: true });
    await socket.waitFor((e) => e.error_code === 'context_not_found');
    const before = socket.events.length;
    socket.send(padded(1_048_577));
    assert.equal(await socket.waitForClose(), 1009);
    assert.equal(socket.events.length, before, 'no event before the close');
  });
});

describe('x-should-retry', () => {
  let voiceId: string;

  before(async () => {
    const clip = await server.post('/tts/bytes', ttsBody({ transcript: 'This is my voice, recorded for cloning. It says a few clear sentences.', output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 44100 } }), org.auth);
    assert.equal(clip.status, 200);
    const form = new FormData();
    form.set('clip', new Blob([await clip.arrayBuffer()]), 'me.wav');
    form.set('name', 'Cloned');
    form.set('language', 'en');
    const cloned = await fetch(server.url + '/voices/clone', { method: 'POST', headers: org.auth, body: form });
    assert.equal(cloned.status, 200, await cloned.clone().text());
    voiceId = ((await cloned.json()) as { id: string }).id;
  });

  test('409 voice_profile_missing says x-should-retry: false, and each SDK sends it once with retries on', { timeout: 30_000 }, async () => {
    await expectError(await server.post('/tts/bytes', ttsBody({ voice: { mode: 'id', id: voiceId } }), org.auth), 409, 'voice_profile_missing', 'fetch');

    const cartesia = new Cartesia({ apiKey: org.key, baseURL: server.url, maxRetries: 2 });
    const beforeCartesia = logs.incoming('/tts/bytes');
    await assert.rejects(
      cartesia.tts.generate({ model_id: 'gepard-1.0', transcript: 'Hi', voice: { mode: 'id', id: voiceId }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 8000 } }),
      (err: unknown) => err instanceof Cartesia.ConflictError,
    );
    assert.equal(logs.incoming('/tts/bytes') - beforeCartesia, 1, 'the Cartesia SDK did not retry');

    const openai = new OpenAI({ apiKey: org.key, baseURL: `${server.url}/v1`, maxRetries: 2 });
    const beforeOpenAI = logs.incoming('/v1/audio/speech');
    await assert.rejects(openai.audio.speech.create({ model: 'tts-1', input: 'Hi', voice: voiceId as 'alloy' }), (err: unknown) => err instanceof OpenAI.ConflictError && (err as { code?: string }).code === 'voice_profile_missing');
    assert.equal(logs.incoming('/v1/audio/speech') - beforeOpenAI, 1, 'the OpenAI SDK did not retry');
  });

  test('429 rate_limited says x-should-retry: true with Retry-After', { timeout: 20_000 }, async () => {
    const limited = await newOrg(server, { rateLimit: { requests: 1, per_seconds: 600 } });
    const first = await server.post('/tts/bytes', ttsBody({ transcript: 'One.' }), limited.auth);
    assert.equal(first.status, 200);
    await first.arrayBuffer();
    const second = await server.post('/tts/bytes', ttsBody({ transcript: 'Two.' }), limited.auth);
    await expectError(second, 429, 'rate_limited', 'rate limited');
    assert.equal(second.headers.get('x-should-retry'), 'true');
    assert.match(second.headers.get('retry-after') ?? '', /^\d+$/);
  });
});

test('a request that arrives while the server shuts down is 503 not_ready with Retry-After, x-should-retry: true and Connection: close', { timeout: 30_000 }, async () => {
  const lines = new LogLines();
  const closing = await startServer({ logDestination: lines });
  const { hostname, port } = new URL(closing.url);
  const socket = net.connect(Number(port), hostname);
  const received: Buffer[] = [];
  socket.on('data', (chunk) => received.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
  const body = JSON.stringify({ name: 'in flight' });
  // The first request is routed, then waits for the rest of its body while shutdown begins.
  socket.write(`POST /pronunciation-dicts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
  const deadline = Date.now() + 10_000;
  while (lines.incoming('/pronunciation-dicts') === 0) {
    assert.ok(Date.now() < deadline, 'the first request reached the server');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const closed = closing.close();
  socket.write(`${body.slice(5)}GET /models HTTP/1.1\r\nHost: x\r\n\r\n`);
  await ended;
  await closed;
  const [inFlight, late] = parseResponses(Buffer.concat(received).toString('utf8'));
  assert.equal(inFlight.status, 200, 'the request in flight finishes');
  assert.equal(late.status, 503);
  checkEnvelope(late.status, late.headers, late.body, 'not_ready', 'during shutdown');
  assert.equal(late.headers['retry-after'], '1');
  assert.equal(late.headers['x-should-retry'], 'true');
  assert.equal(late.headers.connection, 'close');
});
