/**
 * @module test/openapi
 * `GET /openapi.json`: a valid OpenAPI 3.1 document (checked with an OpenAPI
 * validator, every schema compiled as JSON Schema 2020-12), served without a
 * key; every route the server registered is in it (or is a 405 answer for
 * another method); every registry code is in the error envelope; real
 * responses, errors and stream events of the native and OpenAI dialects match the documented
 * schemas; it follows the configuration; `/docs` renders it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ERRORS } from '../src/errors/registry.js';
import { openApiPath, registeredRoutes } from '../src/openapi/routes.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

const ADMIN = 'admin-token-for-openapi-tests';
const admin = { authorization: `Bearer ${ADMIN}` };
const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 };
const BASE = 'https://voicegate.invalid/openapi.json';

type Json = Record<string, any>;

let server: TestServer;
let org: TestOrg;
let document: Json;
let ajv: Ajv2020;

before(async () => {
  server = await startServer({ config: { accounts: { enabled: true, adminToken: ADMIN, costHeaderAliasPrefix: 'x-hopper-' } } });
  org = await newOrg(server);
  const response = await fetch(server.url + '/openapi.json');
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  document = (await response.json()) as Json;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  // The document as one resource, so `#/components/schemas/…` references resolve within it.
  ajv.addSchema({ $id: BASE, components: document.components });
});
after(() => server.close());

/** Asserts `value` matches component schema `name`. */
function check(name: string, value: unknown): void {
  const validate = ajv.getSchema(`${BASE}#/components/schemas/${name}`);
  assert.ok(validate, `no schema ${name}`);
  assert.ok(validate(value), `${name}: ${JSON.stringify(validate.errors?.slice(0, 3))}\n${JSON.stringify(value).slice(0, 500)}`);
}

async function json(response: Response, status: number): Promise<unknown> {
  assert.equal(response.status, status, await response.clone().text());
  return response.json();
}

function events(text: string): Json[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)));
}

test('a valid OpenAPI 3.1 document whose every schema compiles, served without a key', { timeout: 30_000 }, async () => {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document));
  assert.ok(result.valid, String(JSON.stringify(result.errors)).slice(0, 2000));
  assert.equal(validator.version, '3.1');
  assert.doesNotThrow(() => validator.resolveRefs(), 'every $ref resolves');
  for (const name of Object.keys(document.components.schemas)) {
    assert.doesNotThrow(() => ajv.getSchema(`${BASE}#/components/schemas/${name}`), name);
  }
  assert.equal(document.info.version, server.app.services.version);
});

test('every route the server registered is documented, or answers another method with 405', { timeout: 30_000 }, async () => {
  const routes = registeredRoutes(server.app.http);
  assert.ok(routes.length > 20, `${routes.length} routes seen`);
  const gets = new Set(routes.filter((r) => r.method === 'GET').map((r) => r.url));
  let undocumented = 0;
  for (const { method, url } of routes) {
    if (method === 'HEAD' && gets.has(url)) continue;
    const path = openApiPath(url);
    if (document.paths[path]?.[method.toLowerCase()]) continue;
    undocumented++;
    const response = await fetch(server.url + path.replace(/\{\w+\}/g, 'x'), { method });
    assert.equal(response.status, 405, `${method} ${url} is neither documented nor a 405`);
    if (method === 'HEAD') continue;
    const body = (await response.json()) as Json;
    // The OpenAI and ElevenLabs routes answer in their own shapes.
    assert.equal(body.error?.code ?? body.detail?.status ?? body.err_code ?? body.error, 'method_not_allowed');
  }
  assert.ok(undocumented > 0, 'the 405 answers of the TTS routes were seen');
  for (const path of ['/tts/bytes', '/tts/sse', '/v1/audio/speech', '/tts/websocket', '/concurrency', '/metrics', '/openapi.json', '/usage', '/access-token', '/admin/orgs']) {
    assert.ok(document.paths[path], `${path} is documented`);
  }
  // And the other way round: every documented operation exists (no router 404).
  for (const [path, item] of Object.entries(document.paths as Json)) {
    if (path === '/tts/websocket' || path.endsWith('stream-input')) continue; // upgrades, not HTTP routes; tested below and in elevenlabs.test.ts
    for (const method of Object.keys(item)) {
      const response = await fetch(server.url + path.replace(/\{\w+\}/g, 'x'), { method: method.toUpperCase(), headers: { ...admin, 'content-type': 'application/json' }, body: method === 'get' || method === 'delete' ? undefined : '{}' });
      const body = response.headers.get('content-type')?.includes('json') ? ((await response.json()) as Json) : (await response.text(), {});
      assert.notEqual(body.error?.code ?? body.error, 'not_found', `${method} ${path} has a route`);
    }
  }
});

test('the error envelope names every registry code, and each status response lists its codes', () => {
  assert.deepEqual([...document.components.schemas.ErrorCode.enum].sort(), Object.keys(ERRORS).sort());
  for (const [code, def] of Object.entries(ERRORS)) {
    const response = document.components.responses[`Error${def.status}`];
    assert.ok(response?.description.includes(`\`${code}\``), `${code} under Error${def.status}`);
  }
  assert.ok(document.components.headers.RequestCostUsd.description.includes('x-hopper-'));
  const bytes = document.paths['/tts/bytes'].post.responses['200'];
  for (const header of ['x-request-cost-usd', 'x-request-credits', 'x-credits-remaining-usd', 'x-credits-remaining', 'x-request-id']) assert.ok(bytes.headers[header], header);
});

test('real responses and errors match the documented schemas', { timeout: 60_000 }, async () => {
  check('TtsRequest', ttsBody());
  check('ModelList', await json(await fetch(server.url + '/models'), 200));
  check('Model', await json(await fetch(server.url + '/models/omnivoice'), 200));
  check('VoiceList', await json(await fetch(server.url + '/voices?limit=100', { headers: org.auth }), 200));
  check('Voice', await json(await fetch(server.url + '/voices/sarah', { headers: org.auth }), 200));
  check('ErrorBody', await json(await fetch(server.url + '/voices/ghost', { headers: org.auth }), 404));
  check('ErrorBody', await json(await fetch(server.url + '/voices'), 401));
  check('Concurrency', await json(await fetch(server.url + '/concurrency', { headers: org.auth }), 200));
  check('Ready', await json(await fetch(server.url + '/readyz'), 200));

  const dictBody = { name: 'Brands', items: [{ text: 'NASA', alias: 'nasa' }, { text: 'SQL', alias: 'sequel', case_sensitive: true }] };
  check('PronunciationDictCreate', dictBody);
  const dict = (await json(await server.post('/pronunciation-dicts/', dictBody, org.auth), 200)) as Json;
  check('PronunciationDict', dict);
  check('PronunciationDictList', await json(await fetch(server.url + '/pronunciation-dicts/', { headers: org.auth }), 200));

  const clip = await server.post('/tts/bytes', ttsBody(), org.auth);
  assert.equal(clip.status, 200);
  // Every header documented on a clip is sent with it, x-voicegate-model among them.
  const documented = Object.keys(document.paths['/tts/bytes'].post.responses['200'].headers);
  assert.ok(documented.includes('x-voicegate-model'), documented.join());
  for (const name of documented) assert.ok(clip.headers.has(name), name);
  await clip.arrayBuffer();
  check('Usage', await json(await fetch(server.url + '/usage', { headers: org.auth }), 200));
  check('OrganizationList', await json(await fetch(server.url + '/admin/orgs', { headers: admin }), 200));
  check('Organization', await json(await fetch(server.url + `/admin/orgs/${org.orgId}`, { headers: admin }), 200));
  check('IssuedApiKey', await json(await server.post(`/admin/orgs/${org.orgId}/keys`, { name: 'second' }, admin), 201));
  check('ApiKeyList', await json(await fetch(server.url + `/admin/orgs/${org.orgId}/keys`, { headers: admin }), 200));
  check('CreditsAdded', await json(await server.post(`/admin/orgs/${org.orgId}/credits`, { amount: 10, reason: 'test' }, admin), 201));
  check('LedgerPage', await json(await fetch(server.url + `/admin/orgs/${org.orgId}/usage`, { headers: admin }), 200));
  check('UsageSummary', await json(await fetch(server.url + '/usage/summary?group_by=day,model,key', { headers: org.auth }), 200));
  check('UsageSummary', await json(await fetch(server.url + '/admin/usage/summary?group_by=hour,endpoint,org', { headers: admin }), 200));
  const tokenBody = { grants: { tts: true }, expires_in: 60 };
  check('AccessTokenRequest', tokenBody);
  check('AccessToken', await json(await server.post('/access-token', tokenBody, org.auth), 200));

  const sse = await server.post('/tts/sse', ttsBody({ output_format: RAW, add_timestamps: true }), org.auth);
  const sseEvents = events(await sse.text());
  assert.deepEqual([...new Set(sseEvents.map((e) => e.type))].sort(), ['chunk', 'done', 'timestamps']);
  for (const event of sseEvents) check('StreamEvent', event);

  const openai = { model: 'tts-1', input: 'Hello there.', voice: 'alloy', response_format: 'pcm', stream_format: 'sse' };
  check('OpenAISpeechRequest', openai);
  const deltas = events(await (await server.post('/v1/audio/speech', openai, org.auth)).text());
  assert.deepEqual([...new Set(deltas.map((e) => e.type))], ['speech.audio.delta', 'speech.audio.done']);
  for (const event of deltas) check('OpenAIStreamEvent', event);
  check('OpenAIError', await json(await server.post('/v1/audio/speech', { ...openai, voice: 'ghost' }, org.auth), 404));

  const socket = await TestSocket.open(server.url, org.auth);
  try {
    const message = { ...ttsBody({ transcript: 'One clause. ', output_format: RAW }), context_id: 'c', continue: true, flush: true };
    check('WebSocketRequest', message);
    socket.send(message);
    socket.send({ context_id: 'c', transcript: '', continue: false });
    socket.send({ context_id: 'c2', transcript: 'x', model_id: 'gepard-1.0', voice: { mode: 'id', id: 'ghost' }, output_format: RAW });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'c');
    await socket.waitFor((e) => e.type === 'error' && e.context_id === 'c2');
    assert.ok(socket.events.some((e) => e.type === 'flush_done'));
    for (const event of socket.events) check('WebSocketEvent', event);
  } finally {
    socket.ws.close();
  }
});

test('the document follows the configuration; /docs renders it', { timeout: 30_000 }, async () => {
  const local = await startServer({ config: { metrics: { port: 0 } } });
  try {
    const doc = (await json(await fetch(local.url + '/openapi.json'), 200)) as Json;
    for (const path of ['/usage', '/access-token', '/admin/orgs', '/metrics']) assert.equal(doc.paths[path], undefined, path);
    assert.deepEqual(doc.paths['/tts/bytes'].post.security, []);
    assert.deepEqual(Object.keys(doc.paths['/tts/bytes'].post.responses['200'].headers), ['x-request-id', 'x-voicegate-model'], 'no cost headers without accounts');
    assert.ok((await new Validator().validate(doc)).valid);
  } finally {
    await local.close();
  }
  assert.deepEqual(document.paths['/tts/bytes'].post.security, [{ bearerKey: [] }, { headerKey: [] }]);
  assert.deepEqual(document.paths['/metrics'].get.security, [{ adminToken: [] }]);
  const page = await fetch(server.url + '/docs');
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  const html = await page.text();
  for (const needle of ['<code>/tts/bytes</code>', '<code>/v1/audio/speech</code>', 'id="schema-ErrorBody"', 'insufficient_credits']) assert.ok(html.includes(needle), needle);
  assert.ok(!/<script/i.test(html), 'no scripts');
});
