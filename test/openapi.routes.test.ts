/**
 * @module test/openapi.routes
 * The document generated from the routes holds what the routes do: it validates as OpenAPI 3.1;
 * every operation documents its error responses; for every operation with a JSON body, a body
 * generated (deterministically, by openapi-sampler) from the operation's own schema is not
 * refused as invalid, and the same body with a wrong type in a required field is refused with a
 * status the operation documents; the error tables of docs/errors.md and the document agree; and
 * answers of real clients (the OpenAI SDK, listings, errors) validate against the response
 * schemas the document gives their operation, status and media type.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import OpenAI from 'openai';
import { sample } from 'openapi-sampler';
import { ERRORS } from '../src/errors/registry.js';
import { openApiPath, registeredRoutes } from '../src/openapi/routes.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, type TestServer } from './helpers/server.js';

const ADMIN = 'admin-token-for-openapi-route-tests';
const BASE = 'https://voicegate.invalid/openapi.json';

type Json = Record<string, any>;

let server: TestServer;
let org: TestOrg;
/** The organisation the admin operations act on (its key's policy changes; `org`'s must not). */
let other: TestOrg;
let document: Json;
let ajv: Ajv2020;

before(async () => {
  server = await startServer({ config: { accounts: { enabled: true, adminToken: ADMIN }, jobs: { enabled: true } } });
  org = await newOrg(server);
  other = await newOrg(server);
  document = (await (await fetch(server.url + '/openapi.json')).json()) as Json;
  ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ $id: BASE, components: document.components });
});
after(() => server.close());

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

function operations(): { path: string; method: string; op: Json }[] {
  return Object.entries(document.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ path, method, op: op as Json })),
  );
}

/** The response object of `status` (a `$ref` to the document's responses followed). */
function responseOf(op: Json, status: number): Json | undefined {
  const response = op.responses[String(status)];
  if (!response?.$ref) return response;
  return document.components.responses[String(response.$ref).split('/').pop()!];
}

/** The operation's credentials: the admin token for admin operations, else the organisation's key. */
function credentials(op: Json): Record<string, string> {
  const schemes = (op.security as Json[]).flatMap((s) => Object.keys(s));
  if (schemes.includes('adminToken')) return { authorization: `Bearer ${ADMIN}` };
  return org.auth;
}

/** Validates `body` against the schema the document gives `op`'s answer of `status` in `type`. */
function checkAnswer(label: string, op: Json, status: number, type: string, body: unknown): void {
  const response = responseOf(op, status);
  assert.ok(response, `${label}: status ${status} is documented (${Object.keys(op.responses).join(', ')})`);
  const media = response.content?.[type] ?? response.content?.[type.split(';')[0].trim()];
  assert.ok(media, `${label}: ${type} is documented for ${status} (${Object.keys(response.content ?? {}).join(', ')})`);
  // References resolved against the document, which ajv holds as one resource.
  const validate = ajv.compile(JSON.parse(JSON.stringify(media.schema).replaceAll('"#/components/', `"${BASE}#/components/`)) as Json);
  assert.ok(validate(body), `${label}: ${JSON.stringify(validate.errors?.slice(0, 3))}\n${JSON.stringify(body).slice(0, 400)}`);
}

/** Fills a path's parameters: what exists where a route looks it up before reading the body. */
function urlOf(path: string): string {
  const id = path.startsWith('/admin/orgs/') ? other.orgId : path.startsWith('/admin/keys/') ? other.keyId : path.startsWith('/admin/voices/') ? 'sarah' : 'x';
  return server.url + path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'voice_id' ? 'sarah' : name === 'id' ? id : 'x'));
}

test('the generated document is valid OpenAPI 3.1', { timeout: 30_000 }, async () => {
  const validator = new Validator();
  const result = await validator.validate(document);
  assert.ok(result.valid, String(JSON.stringify(result.errors)).slice(0, 2000));
  assert.equal(validator.version, '3.1');
});

test('every route is documented, every documented path has a route, every operation documents its errors', { timeout: 30_000 }, () => {
  const routes = registeredRoutes(server.app.http);
  const byPath = new Map<string, Set<string>>();
  for (const { method, url } of routes) {
    const path = openApiPath(url);
    byPath.set(path, new Set([...(byPath.get(path) ?? []), method.toLowerCase()]));
  }
  for (const { path, method, op } of operations()) {
    // A WebSocket is documented as the GET that upgrades; its router is not Fastify's.
    const upgrade = op.responses['101'] !== undefined;
    if (!upgrade) assert.ok(byPath.get(path)?.has(method), `${method.toUpperCase()} ${path} is documented and has a route`);
    const errors = Object.keys(op.responses).filter((status) => /^[45]\d\d$/.test(status));
    assert.ok(errors.length > 0, `${method.toUpperCase()} ${path} documents its error responses`);
  }
  for (const [path, methods] of byPath) {
    for (const method of methods) {
      if (method === 'head') continue;
      const documented = document.paths[path]?.[method];
      // What is not documented is the 405 answer of a documented path's other methods.
      assert.ok(documented || Object.keys(document.paths[path] ?? {}).length > 0, `${method.toUpperCase()} ${path} is documented`);
    }
  }
});

/** The JSON body schema of an operation, with its `$ref` followed. */
function bodySchema(op: Json): Json | null {
  const schema = op.requestBody?.content?.['application/json']?.schema;
  if (!schema) return null;
  return schema.$ref ? document.components.schemas[String(schema.$ref).split('/').pop()!] : schema;
}

/** A body for `op` generated from its own schema, the same every run; a key it names is one of the organisation's (a reference, which no schema can say). */
function sampleBody(op: Json): Json {
  const body = sample(op.requestBody.content['application/json'].schema, { skipReadOnly: true, skipNonRequired: false, quiet: true }, document) as Json;
  return 'key_id' in body ? { ...body, key_id: other.keyId } : body;
}

/** A value of another type than `schema` takes. */
function wrongType(schema: Json): unknown {
  const resolved = schema.$ref ? document.components.schemas[String(schema.$ref).split('/').pop()!] : schema;
  const types = [resolved.type, ...(resolved.anyOf ?? resolved.oneOf ?? []).map((s: Json) => s.type)].flat();
  if (types.includes('boolean') || types.includes('string')) return types.includes('number') || types.includes('integer') ? [] : 12345;
  return 'not-a-' + String(types[0] ?? 'value');
}

// Deepgram names a refused body PAYLOAD_ERROR, a refused field Bad Request.
const INVALID_CODES = new Set(['PAYLOAD_ERROR', 'Bad Request', 'invalid_request', 'invalid_json', 'missing_transcript', 'missing_voice', 'missing_voice_id', 'empty_dialogue_turn', 'invalid_output_format', 'invalid_generation_config', 'unknown_voice_mode']);

/** The registry code of an error answer in any dialect's shape. */
function codeOf(body: Json): string | undefined {
  if (Array.isArray(body.detail)) return 'invalid_request';
  return body.error_code ?? body.error?.code ?? body.detail?.status ?? body.err_code;
}

test('a body generated from an operation’s own schema is not refused as invalid; a wrong type in a required field is, with a documented status', { timeout: 120_000 }, async () => {
  let checked = 0;
  const problems: string[] = [];
  const expect = (ok: boolean, problem: string) => void (ok || problems.push(problem));
  for (const { path, method, op } of operations()) {
    const schema = bodySchema(op);
    if (!schema) continue;
    const label = `${method.toUpperCase()} ${path}`;
    const headers = { ...credentials(op), 'content-type': 'application/json' };
    const body = sampleBody(op);
    const answer = await fetch(urlOf(path), { method: method.toUpperCase(), headers, body: JSON.stringify(body) });
    const text = await answer.text();
    if (answer.status === 400 || answer.status === 422) {
      const code = codeOf(JSON.parse(text) as Json);
      expect(!INVALID_CODES.has(String(code)), `${label}: the sampled body ${JSON.stringify(body).slice(0, 300)} was refused: ${text.slice(0, 300)}`);
    }
    expect(answer.status < 500, `${label}: ${answer.status} ${text.slice(0, 200)}`);
    const required: string[] = schema.required ?? [];
    if (required.length > 0) {
      const field = required[0];
      const broken = { ...body, [field]: wrongType(schema.properties[field]) };
      const refused = await fetch(urlOf(path), { method: method.toUpperCase(), headers, body: JSON.stringify(broken) });
      const refusal = (await refused.json()) as Json;
      expect(refused.status >= 400 && refused.status < 500 && op.responses[String(refused.status)] !== undefined, `${label}: ${field} of the wrong type answered ${refused.status}, documented: ${Object.keys(op.responses).join(' ')}`);
      expect(INVALID_CODES.has(String(codeOf(refusal))), `${label}: ${field} of the wrong type: ${JSON.stringify(refusal).slice(0, 300)}`);
    }
    checked++;
  }
  assert.deepEqual(problems, []);
  assert.ok(checked >= 10, `${checked} operations with a JSON body`);
});

test('a multipart upload is documented by the parts its route declares, and read by its handler, not validated as a body', { timeout: 30_000 }, async () => {
  const content = document.paths['/voices/clone'].post.requestBody.content;
  assert.deepEqual(Object.keys(content), ['multipart/form-data']);
  const parts = document.components.schemas[String(content['multipart/form-data'].schema.$ref).split('/').pop()!];
  assert.deepEqual(parts.properties.clip, { type: 'string', format: 'binary', description: 'A WAV or MP3 file of 1–120 s.' });
  assert.deepEqual([...parts.required].sort(), ['clip', 'language', 'name']);
  // No clip: the handler's own refusal, after the key is checked (no schema stands before it).
  const form = new FormData();
  form.set('name', 'No clip');
  assert.equal((await fetch(`${server.url}/voices/clone`, { method: 'POST', body: form })).status, 401);
  const refused = await fetch(`${server.url}/voices/clone`, { method: 'POST', headers: org.auth, body: form });
  const body = (await refused.json()) as Json;
  assert.equal(refused.status, 400, JSON.stringify(body));
  assert.doesNotMatch(String(body.message), /Invalid input|body must be/);
});

test('the error tables of docs/errors.md and the document agree', () => {
  const text = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const rows = [...text.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map(([, code, status]) => [code, Number(status)] as const);
  assert.deepEqual(rows.map(([code]) => code).sort(), Object.keys(ERRORS).sort(), 'docs/errors.md lists every registry code once');
  assert.deepEqual([...document.components.schemas.ErrorCode.enum].sort(), rows.map(([code]) => code).sort(), 'the document names the codes docs/errors.md lists');
  for (const [code, status] of rows) {
    for (const prefix of ['Error', 'OpenAIError', 'ElevenLabsError', 'DeepgramError']) {
      const response = document.components.responses[`${prefix}${status}`];
      assert.ok(response?.description.includes(`\`${code}\``), `${code} is listed under ${prefix}${status}, as docs/errors.md gives its status`);
    }
  }
});

test('answers of real clients validate against the document: the OpenAI SDK, listings and errors', { timeout: 60_000 }, async () => {
  const seen: { method: string; path: string; status: number; type: string; body: unknown }[] = [];
  // Every answer the SDK reads passes through here, and is checked below.
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const type = response.headers.get('content-type') ?? '';
    const body = type.includes('json') ? await response.clone().json() : null;
    seen.push({ method: (init?.method ?? 'GET').toLowerCase(), path: url.pathname, status: response.status, type, body });
    return response;
  };
  const client = new OpenAI({ apiKey: org.key, baseURL: `${server.url}/v1`, maxRetries: 0, fetch: recording });
  await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hello there.', response_format: 'wav' });
  await assert.rejects(client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: '' }));
  await assert.rejects(client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hi', instructions: 5 as never }));
  await assert.rejects(client.audio.speech.create({ model: 'tts-1', voice: 'nobody', input: 'Hi' }));
  await assert.rejects(new OpenAI({ apiKey: 'wrong', baseURL: `${server.url}/v1`, maxRetries: 0, fetch: recording }).audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hi' }));
  // Listings and errors of the other dialects, as their clients ask.
  const xi = { 'xi-api-key': org.key };
  for (const [path, headers] of [
    ['/models', org.auth],
    ['/voices', org.auth],
    ['/v1/voices', xi],
    ['/v2/voices', xi],
    ['/v1/models', xi],
    ['/v1/user/subscription', xi],
    ['/admin/orgs', { authorization: `Bearer ${ADMIN}` }],
  ] as const) {
    await recording(server.url + path, { headers });
  }
  for (const body of [{ text: 'Hi', seed: -1 }, { text: 'Hi', voice_settings: { stability: 2 } }, { text: 5 }, { text: 'Hi', language_code: 'not a language' }]) {
    await recording(`${server.url}/v1/text-to-speech/sarah`, { method: 'POST', headers: { ...xi, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }
  await recording(`${server.url}/v1/text-to-speech/sarah`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"Hi"}' });
  assert.ok(seen.length >= 15, `${seen.length} answers`);
  for (const answer of seen) {
    const path = Object.keys(document.paths).find((p) => new RegExp(`^${p.replace(/\{\w+\}/g, '[^/]+')}$`).test(answer.path));
    assert.ok(path, `${answer.path} is documented`);
    const op = document.paths[path][answer.method];
    if (answer.body === null) {
      assert.ok(responseOf(op, answer.status)?.content?.[answer.type.split(';')[0]], `${answer.method} ${answer.path} ${answer.status} ${answer.type} is documented`);
      continue;
    }
    checkAnswer(`${answer.method.toUpperCase()} ${answer.path} ${answer.status}`, op, answer.status, answer.type, answer.body);
  }
  const statuses = new Set(seen.map((a) => a.status));
  for (const status of [200, 400, 401, 404, 422]) assert.ok(statuses.has(status), `an answer of ${status} was checked`);
});
