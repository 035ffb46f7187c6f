/**
 * @module test/pronunciation-dicts
 * Pronunciation dictionaries end to end: the Cartesia SDK's
 * `pronunciationDicts` resource (create, auto-paged list, get, update,
 * delete), validation, a dictionary changing what /tts/bytes, the WebSocket
 * and /v1/audio/speech speak while billing stays on the transcript as sent,
 * the 20,000-character expansion cap, unknown ids on every TTS transport,
 * isolation between organisations, and the implicit local organisation
 * when accounts are off.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Cartesia from '@cartesia/cartesia-js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

let server: TestServer;
let orgA: TestOrg;
let orgB: TestOrg;
let clientA: Cartesia;
let clientB: Cartesia;

before(async () => {
  // A larger body cap than the default, so the 5,000-item limit itself can be reached.
  server = await startServer({ config: { accounts: { enabled: true }, server: { bodyLimitBytes: 262_144 } } });
  orgA = await newOrg(server, { credits: 1_000_000 });
  orgB = await newOrg(server, { credits: 1_000_000 });
  clientA = new Cartesia({ apiKey: orgA.key, baseURL: server.url, maxRetries: 0 });
  clientB = new Cartesia({ apiKey: orgB.key, baseURL: server.url, maxRetries: 0 });
});
after(() => server.close());

const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } as const;
const NASA = [{ text: 'NASA', alias: 'National Aeronautics and Space Administration' }];
const TRANSCRIPT = 'NASA launched it.';

function tts(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { model_id: 'gepard-1.0', transcript: TRANSCRIPT, voice: { mode: 'id', id: 'sarah' }, output_format: RAW, ...overrides };
}

/** The body of a JSON response, typed loosely for assertions. */
async function json(response: Response): Promise<any> {
  return response.json();
}

function call(method: string, path: string, org: TestOrg, body?: unknown): Promise<Response> {
  return fetch(server.url + path, {
    method,
    headers: { ...org.auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function expectError(response: Response | Promise<Response>, status: number, code: string, message?: RegExp): Promise<Record<string, any>> {
  const res = await response;
  const body = await json(res);
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.error_code, code);
  if (message) assert.match(body.message, message);
  return body;
}

function isNotFound(err: unknown): boolean {
  assert.ok(err instanceof Cartesia.NotFoundError, String(err));
  assert.equal((err.error as any).error_code, 'dict_not_found');
  return true;
}

describe('the Cartesia SDK resource', () => {
  test('create, get, update and delete', async () => {
    const created = await clientA.pronunciationDicts.create({ name: 'brands', items: [{ text: 'Cartesia', alias: 'kar-TEE-zha' }] });
    assert.match(created.id, /^pd_[0-9a-f]{16}$/);
    assert.equal(created.name, 'brands');
    assert.deepEqual(created.items, [{ text: 'Cartesia', alias: 'kar-TEE-zha' }]);
    assert.equal(created.owner_id, orgA.orgId);
    assert.equal(created.pinned, false);
    assert.ok(!Number.isNaN(Date.parse(created.created_at)));
    assert.deepEqual(Object.keys(created).sort(), ['created_at', 'id', 'items', 'name', 'owner_id', 'pinned']);

    assert.deepEqual(await clientA.pronunciationDicts.retrieve(created.id), created);

    const renamed = await clientA.pronunciationDicts.update(created.id, { name: 'renamed' });
    assert.equal(renamed.name, 'renamed');
    assert.deepEqual(renamed.items, created.items);
    const items = [{ text: 'SQL', alias: 'sequel', case_sensitive: true }, { text: 'GIF', alias: 'jif' }];
    const updated = await clientA.pronunciationDicts.update(created.id, { items });
    assert.equal(updated.name, 'renamed');
    assert.deepEqual(updated.items, items);
    assert.equal(updated.created_at, created.created_at);
    // pinned is not in the SDK's update type but the hosted shape has it.
    const pinned = await clientA.pronunciationDicts.update(created.id, { pinned: true } as any);
    assert.equal(pinned.pinned, true);
    assert.deepEqual((await clientA.pronunciationDicts.retrieve(created.id)).items, items);

    assert.equal(await clientA.pronunciationDicts.delete(created.id), null);
    await assert.rejects(clientA.pronunciationDicts.retrieve(created.id), isNotFound);
    await assert.rejects(clientA.pronunciationDicts.delete(created.id), isNotFound);
  });

  test('items default to an empty list', async () => {
    const dict = await clientA.pronunciationDicts.create({ name: 'empty' });
    assert.deepEqual(dict.items, []);
    await clientA.pronunciationDicts.delete(dict.id);
  });

  test('list is newest first and auto-pages to the end one item at a time', async () => {
    const org = await newOrg(server);
    const client = new Cartesia({ apiKey: org.key, baseURL: server.url, maxRetries: 0 });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push((await client.pronunciationDicts.create({ name: `dict ${i}`, items: [] })).id);
      await sleep(5); // distinct creation times, so "newest first" is well defined
    }
    const seen: string[] = [];
    for await (const dict of client.pronunciationDicts.list({ limit: 1 })) seen.push(dict.id);
    assert.deepEqual(seen, [...ids].reverse());

    const first = await client.pronunciationDicts.list({ limit: 3 });
    assert.deepEqual(first.data.map((d) => d.id), [ids[3], ids[2], ids[1]]);
    assert.equal((first as any).body.has_more, true);

    // Backwards from the oldest: the SDK pages with ending_before.
    const back: string[] = [];
    for await (const dict of client.pronunciationDicts.list({ limit: 2, ending_before: ids[0] })) back.push(dict.id);
    assert.deepEqual(back, [ids[2], ids[1], ids[3]]);
  });
});

describe('the wire', () => {
  test('the collection answers with and without the trailing slash; a page past the end is empty', async () => {
    const org = await newOrg(server);
    const created = await call('POST', '/pronunciation-dicts', org, { name: 'no slash', items: NASA });
    assert.equal(created.status, 200);
    const dict = await json(created);
    for (const path of ['/pronunciation-dicts/', '/pronunciation-dicts']) {
      const list = await call('GET', path, org);
      assert.equal(list.status, 200);
      assert.deepEqual(await json(list), { data: [dict], has_more: false });
    }
    const past = await call('GET', `/pronunciation-dicts/?limit=1&starting_after=${dict.id}`, org);
    assert.deepEqual(await json(past), { data: [], has_more: false });
    const deleted = await call('DELETE', `/pronunciation-dicts/${dict.id}`, org);
    assert.equal(deleted.status, 204);
    assert.equal(await deleted.text(), '');
  });

  test('bad paging parameters are 400 invalid_request', async () => {
    await expectError(call('GET', '/pronunciation-dicts/?starting_after=pd_0000000000000000', orgA), 400, 'invalid_request', /starting_after/);
    await expectError(call('GET', '/pronunciation-dicts/?ending_before=nope', orgA), 400, 'invalid_request', /ending_before/);
    await expectError(call('GET', '/pronunciation-dicts/?limit=0', orgA), 400, 'invalid_request', /limit/);
    await expectError(call('GET', '/pronunciation-dicts/?limit=101', orgA), 400, 'invalid_request', /limit/);
  });

  test('every route needs an API key', async () => {
    const none = { orgId: '', key: '', keyId: '', auth: {} };
    await expectError(call('GET', '/pronunciation-dicts/', none), 401, 'missing_api_key');
    await expectError(call('POST', '/pronunciation-dicts/', none, { name: 'x' }), 401, 'missing_api_key');
    await expectError(call('GET', '/pronunciation-dicts/pd_0000000000000000', none), 401, 'missing_api_key');
  });

  test('validation: name, items and each item', async () => {
    const post = (body: unknown) => call('POST', '/pronunciation-dicts/', orgA, body);
    await expectError(post({ items: [] }), 400, 'invalid_request', /^name must be/);
    await expectError(post({ name: '   ' }), 400, 'invalid_request', /^name must be/);
    await expectError(post({ name: 'x'.repeat(201) }), 400, 'invalid_request', /^name must be/);
    assert.equal((await post({ name: '😀'.repeat(200) })).status, 200, '200 code points is allowed');
    await expectError(post({ name: 'd', items: {} }), 400, 'invalid_request', /^items must be an array/);
    await expectError(post({ name: 'd', items: [{ text: 'a', alias: 'b' }, 'c'] }), 400, 'invalid_request', /^items\[1\] must be an object/);
    await expectError(post({ name: 'd', items: [{ text: '', alias: 'b' }] }), 400, 'invalid_request', /^items\[0\]\.text/);
    await expectError(post({ name: 'd', items: [{ text: ' ', alias: 'b' }] }), 400, 'invalid_request', /^items\[0\]\.text/);
    await expectError(post({ name: 'd', items: [{ text: 'x'.repeat(501), alias: 'b' }] }), 400, 'invalid_request', /^items\[0\]\.text/);
    await expectError(post({ name: 'd', items: [{ text: 'a' }] }), 400, 'invalid_request', /^items\[0\]\.alias/);
    await expectError(post({ name: 'd', items: [{ text: 'a', alias: 'x'.repeat(2001) }] }), 400, 'invalid_request', /^items\[0\]\.alias/);
    await expectError(post({ name: 'd', items: [{ text: 'a', alias: 'b', case_sensitive: 'yes' }] }), 400, 'invalid_request', /case_sensitive must be a boolean/);
    await expectError(post({ name: 'd', pinned: 'yes' }), 400, 'invalid_request', /pinned must be a boolean/);
    const many = Array.from({ length: 5001 }, () => ({ text: 'a', alias: '' }));
    await expectError(post({ name: 'd', items: many }), 400, 'invalid_request', /5001 entries; the maximum is 5000/);
    await expectError(post('[1, 2]'), 400, 'invalid_json');
    await expectError(post('{"name": '), 400, 'invalid_json');

    const ok = await json(await post({ name: 'edge', items: [{ text: 'x'.repeat(500), alias: 'y'.repeat(2000), extra: 1 }, { text: 'a', alias: '', case_sensitive: null }] }));
    assert.deepEqual(ok.items, [{ text: 'x'.repeat(500), alias: 'y'.repeat(2000) }, { text: 'a', alias: '' }], 'only documented fields are kept');
    await expectError(call('PATCH', `/pronunciation-dicts/${ok.id}`, orgA, { items: [{ text: 'a', alias: 1 }] }), 400, 'invalid_request', /items\[0\]\.alias/);
    await expectError(call('PATCH', `/pronunciation-dicts/${ok.id}`, orgA, { name: '' }), 400, 'invalid_request', /^name must be/);
  });
});

describe('speech with a dictionary', () => {
  let dictId: string;
  before(async () => {
    dictId = (await clientA.pronunciationDicts.create({ name: 'space', items: NASA })).id;
  });

  test('/tts/bytes speaks the alias: the clip is measurably longer; billing is on the transcript as sent', async () => {
    const plain = await server.post('/tts/bytes', tts(), orgA.auth);
    assert.equal(plain.status, 200);
    const plainSeconds = (await plain.arrayBuffer()).byteLength / 2 / 22050;
    const start = await balanceOf(server, orgA.orgId);
    const expanded = await server.post('/tts/bytes', tts({ pronunciation_dict_id: dictId }), orgA.auth);
    assert.equal(expanded.status, 200);
    const expandedSeconds = (await expanded.arrayBuffer()).byteLength / 2 / 22050;
    assert.ok(expandedSeconds > plainSeconds + 1, `${expandedSeconds} s with the dictionary vs ${plainSeconds} s without`);
    assert.equal(expanded.headers.get('x-request-credits'), String(TRANSCRIPT.length));
    assert.equal((await balanceOf(server, orgA.orgId)).balance, start.balance - TRANSCRIPT.length);
  });

  test('null or empty pronunciation_dict_id means none; a non-string is 400', async () => {
    for (const id of [null, '']) {
      const response = await server.post('/tts/bytes', tts({ pronunciation_dict_id: id }), orgA.auth);
      assert.equal(response.status, 200);
      await response.arrayBuffer();
    }
    await expectError(server.post('/tts/bytes', tts({ pronunciation_dict_id: 42 }), orgA.auth), 400, 'invalid_request', /pronunciation_dict_id/);
  });

  test('an expansion over 20,000 characters is 400 transcript_too_long and is not billed', async () => {
    const dict = await clientA.pronunciationDicts.create({ name: 'huge', items: [{ text: 'x', alias: 'y'.repeat(2000) }] });
    const start = await balanceOf(server, orgA.orgId);
    const transcript = Array(11).fill('x').join(' '); // 11 × 2,000 + 10 spaces
    await expectError(
      server.post('/tts/bytes', tts({ transcript, pronunciation_dict_id: dict.id }), orgA.auth),
      400,
      'transcript_too_long',
      /22010 characters .*maximum is 20000/,
    );
    assert.deepEqual(await balanceOf(server, orgA.orgId), start);
  });

  test('the WebSocket applies the context dictionary to every segment', async () => {
    const socket = await TestSocket.open(server.url, orgA.auth);
    socket.send({ ...tts({ context_id: 'plain' }) });
    socket.send({ ...tts({ context_id: 'dict', pronunciation_dict_id: dictId, transcript: 'NASA launched it. ', continue: true }) });
    socket.send({ ...tts({ context_id: 'dict', pronunciation_dict_id: dictId, transcript: 'NASA landed.', continue: false }) });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'plain', 20_000);
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'dict', 20_000);
    const plainSeconds = socket.audio('plain').length / 2 / 22050;
    const dictSeconds = socket.audio('dict').length / 2 / 22050;
    assert.ok(dictSeconds > plainSeconds * 2 + 1, `${dictSeconds} s with the dictionary (two sentences) vs ${plainSeconds} s (one)`);
    socket.close();
  });

  test('the WebSocket fails a context whose segment expands past 20,000 characters', async () => {
    const dict = await clientA.pronunciationDicts.create({ name: 'huge ws', items: [{ text: 'x', alias: 'y'.repeat(2000) }] });
    const socket = await TestSocket.open(server.url, orgA.auth);
    socket.send(tts({ context_id: 'big', pronunciation_dict_id: dict.id, transcript: 'x ', continue: true }));
    socket.send(tts({ context_id: 'big', pronunciation_dict_id: dict.id, transcript: Array(11).fill('x').join(' '), continue: false }));
    const error = await socket.waitFor((e) => e.type === 'error' && e.context_id === 'big', 20_000);
    assert.equal(error.error_code, 'transcript_too_long');
    assert.equal(error.status_code, 400);
    socket.close();
  });

  test('/v1/audio/speech passes pronunciation_dict_id through', async () => {
    const body = { model: 'omnivoice', input: TRANSCRIPT, voice: 'sarah', response_format: 'pcm' };
    const plain = await call('POST', '/v1/audio/speech', orgA, body);
    const expanded = await call('POST', '/v1/audio/speech', orgA, { ...body, pronunciation_dict_id: dictId });
    assert.equal(expanded.status, 200);
    const plainSeconds = (await plain.arrayBuffer()).byteLength / 48000;
    const expandedSeconds = (await expanded.arrayBuffer()).byteLength / 48000;
    assert.ok(expandedSeconds > plainSeconds + 1, `${expandedSeconds} vs ${plainSeconds}`);
    assert.equal(expanded.headers.get('x-request-credits'), String(TRANSCRIPT.length));
  });
});

describe('unknown dictionaries on every TTS transport', () => {
  const missing = 'pd_ffffffffffffffff';

  test('/tts/bytes and /tts/sse are 404 dict_not_found', async () => {
    await expectError(server.post('/tts/bytes', tts({ pronunciation_dict_id: missing }), orgA.auth), 404, 'dict_not_found', /pronunciation dictionary pd_ffffffffffffffff does not exist/);
    await expectError(server.post('/tts/sse', tts({ pronunciation_dict_id: missing }), orgA.auth), 404, 'dict_not_found');
    await assert.rejects(
      clientA.tts.generate({ ...(tts() as any), pronunciation_dict_id: missing }),
      (err: unknown) => err instanceof Cartesia.NotFoundError && (err.error as any).error_code === 'dict_not_found',
    );
  });

  test('the WebSocket answers an error event for the context', async () => {
    const socket = await TestSocket.open(server.url, orgA.auth);
    socket.send(tts({ context_id: 'nodict', pronunciation_dict_id: missing }));
    const error = await socket.waitFor((e) => e.type === 'error' && e.context_id === 'nodict');
    assert.equal(error.error_code, 'dict_not_found');
    assert.equal(error.status_code, 404);
    assert.equal(socket.of('nodict', 'chunk').length, 0);
    socket.close();
  });

  test('/v1/audio/speech is 404 in the OpenAI shape', async () => {
    const response = await call('POST', '/v1/audio/speech', orgA, { model: 'omnivoice', input: 'Hi', voice: 'sarah', pronunciation_dict_id: missing });
    assert.equal(response.status, 404);
    const body = await json(response);
    assert.equal(body.error.code, 'dict_not_found');
    assert.equal(body.error.param, 'pronunciation_dict_id');
  });
});

describe('isolation between organisations', () => {
  let dict: { id: string };
  before(async () => {
    dict = await clientA.pronunciationDicts.create({ name: 'private', items: NASA });
  });

  test('another organisation cannot get, update or delete it, and does not list it', async () => {
    await assert.rejects(clientB.pronunciationDicts.retrieve(dict.id), isNotFound);
    await assert.rejects(clientB.pronunciationDicts.update(dict.id, { name: 'stolen' }), isNotFound);
    await assert.rejects(clientB.pronunciationDicts.delete(dict.id), isNotFound);
    const listed: string[] = [];
    for await (const d of clientB.pronunciationDicts.list({ limit: 100 })) listed.push(d.id);
    assert.ok(!listed.includes(dict.id));
    await expectError(call('GET', `/pronunciation-dicts/?starting_after=${dict.id}`, orgB), 400, 'invalid_request');
    const stillThere = await clientA.pronunciationDicts.retrieve(dict.id);
    assert.equal(stillThere.name, 'private');
  });

  test('another organisation cannot speak with it, on any transport', async () => {
    await expectError(server.post('/tts/bytes', tts({ pronunciation_dict_id: dict.id }), orgB.auth), 404, 'dict_not_found');
    await expectError(server.post('/tts/sse', tts({ pronunciation_dict_id: dict.id }), orgB.auth), 404, 'dict_not_found');
    const openai = await call('POST', '/v1/audio/speech', orgB, { model: 'omnivoice', input: 'Hi', voice: 'sarah', pronunciation_dict_id: dict.id });
    assert.equal(openai.status, 404);
    assert.equal((await json(openai)).error.code, 'dict_not_found');
    const socket = await TestSocket.open(server.url, orgB.auth);
    socket.send(tts({ context_id: 'theirs', pronunciation_dict_id: dict.id }));
    assert.equal((await socket.waitFor((e) => e.type === 'error' && e.context_id === 'theirs')).error_code, 'dict_not_found');
    socket.close();
  });
});

describe('accounts off', () => {
  let local: TestServer;
  before(async () => {
    local = await startServer();
  });
  after(() => local.close());

  test('dictionaries belong to the implicit local organisation and work without a key', async () => {
    const created = await local.post('/pronunciation-dicts/', { name: 'local', items: NASA });
    assert.equal(created.status, 200);
    const dict = await json(created);
    assert.equal(dict.owner_id, 'org_local');
    const listed = await json(await fetch(`${local.url}/pronunciation-dicts/`));
    assert.deepEqual(listed.data.map((d: { id: string }) => d.id), [dict.id]);
    const plain = await local.post('/tts/bytes', tts());
    const expanded = await local.post('/tts/bytes', tts({ pronunciation_dict_id: dict.id }));
    assert.equal(expanded.status, 200);
    const plainBytes = (await plain.arrayBuffer()).byteLength;
    const expandedBytes = (await expanded.arrayBuffer()).byteLength;
    assert.ok(expandedBytes > plainBytes + 22050 * 2, `${expandedBytes} vs ${plainBytes}`);
  });
});
