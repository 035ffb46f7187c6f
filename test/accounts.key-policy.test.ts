/**
 * @module test/accounts.key-policy
 * What an API key may do beyond its organisation's balance and limits, on
 * real servers: each scope refused (403 `insufficient_scope`, naming it) and
 * allowed on every route it guards, WebSockets included, and access tokens
 * never exceeding their key; the model allowlist at admission (aliases
 * included); expiry, refused on two servers on one PostgreSQL the moment it
 * passes; allowed networks from the socket's address, and from
 * `X-Forwarded-For` only behind a trusted proxy; the admin API's validation
 * and listing (budget spent and reset), and the CLI.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { periodReset } from '../src/accounts/budget-period.js';
import { SCOPES, type Scope } from '../src/accounts/scopes.js';
import { clientAddress } from '../src/http/client-address.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';
import { eventually } from './helpers/redis.js';
import { startServer, tempDataDir, ttsBody, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

const ADMIN = 'key-policy-admin-token-0123456789';
const adminAuth = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const RAW = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 };
const WS_BASE = { model_id: 'gepard-1.0', voice: { mode: 'id', id: 'sarah' }, output_format: RAW };

const dataDir = tempDataDir();
let server: TestServer;
let orgId: string;

before(async () => {
  server = await startServer({ config: { dataDir, accounts: { enabled: true, adminToken: ADMIN } } });
  orgId = await newOrgOn(server);
});
after(() => server?.close());

async function newOrgOn(on: TestServer): Promise<string> {
  const created = await fetch(on.url + '/admin/orgs', { method: 'POST', headers: adminAuth, body: JSON.stringify({ name: 'policy org', credits: 10_000_000 }) });
  assert.equal(created.status, 201);
  return ((await created.json()) as { id: string }).id;
}

interface Key {
  id: string;
  key: string;
  /** As the Cartesia and OpenAI dialects send it. */
  auth: Record<string, string>;
  view: Record<string, any>;
}

/** A key made through the admin API with `policy`. */
async function makeKey(policy: Record<string, unknown> = {}, on = server, org = orgId): Promise<Key> {
  const response = await fetch(`${on.url}/admin/orgs/${org}/keys`, { method: 'POST', headers: adminAuth, body: JSON.stringify({ name: 'k', ...policy }) });
  const body = (await response.json()) as Record<string, any>;
  assert.equal(response.status, 201, JSON.stringify(body));
  return { id: body.id, key: body.key, auth: { authorization: `Bearer ${body.key}` }, view: body };
}

async function patchKey(id: string, patch: Record<string, unknown>, on = server): Promise<Response> {
  return fetch(`${on.url}/admin/keys/${id}`, { method: 'PATCH', headers: adminAuth, body: JSON.stringify(patch) });
}

interface Call {
  method: string;
  path: string;
  body?: unknown;
  /** ElevenLabs' header instead of `Authorization`. */
  eleven?: boolean;
  /** Statuses a key holding the scope gets (anything but the refusal: the route itself answered). */
  allowed: number[];
}

const tts = (path: string, body: unknown, allowed = [200], eleven = false): Call => ({ method: 'POST', path, body, allowed, eleven });

/** Every HTTP route each scope guards. */
const ROUTES: Record<Scope, Call[]> = {
  tts: [
    tts('/tts/bytes', ttsBody({ transcript: 'Scope.' })),
    tts('/tts/sse', ttsBody({ transcript: 'Scope.', output_format: RAW })),
    tts('/v1/audio/speech', { model: 'gepard-1.0', input: 'Scope.', voice: 'sarah', response_format: 'pcm' }),
    ...['', '/stream', '/with-timestamps', '/stream/with-timestamps'].map((tail) => tts(`/v1/text-to-speech/${RACHEL}${tail}`, { text: 'Scope.' }, [200], true)),
    tts('/tts/jobs', ttsBody({ transcript: 'A job.' }), [202]),
    { method: 'DELETE', path: '/tts/jobs/job_none', allowed: [404] },
    tts('/access-token', { grants: { tts: true }, expires_in: 60 }),
  ],
  'voices:read': [
    { method: 'GET', path: '/voices', allowed: [200] },
    { method: 'GET', path: '/voices/sarah', allowed: [200] },
    { method: 'GET', path: '/v1/voices', eleven: true, allowed: [200] },
    { method: 'GET', path: '/v2/voices', eleven: true, allowed: [200] },
    { method: 'GET', path: `/v1/voices/${RACHEL}`, eleven: true, allowed: [200] },
  ],
  'voices:write': [
    { method: 'PATCH', path: '/voices/voice_none', body: { name: 'x' }, allowed: [404] },
    { method: 'DELETE', path: '/voices/voice_none', allowed: [404] },
    { method: 'POST', path: '/voices/clone', body: {}, allowed: [400] },
  ],
  'dictionaries:read': [
    { method: 'GET', path: '/pronunciation-dicts', allowed: [200] },
    { method: 'GET', path: '/pronunciation-dicts/pd_none', allowed: [404] },
  ],
  'dictionaries:write': [
    { method: 'POST', path: '/pronunciation-dicts', body: { name: 'scoped' }, allowed: [200] },
    { method: 'PATCH', path: '/pronunciation-dicts/pd_none', body: { name: 'x' }, allowed: [404] },
    { method: 'DELETE', path: '/pronunciation-dicts/pd_none', allowed: [404] },
  ],
  'jobs:read': ['', '/job_none', '/job_none/audio', '/job_none/timestamps', '/job_none/events'].map((tail) => ({ method: 'GET', path: `/tts/jobs${tail}`, allowed: [tail ? 404 : 200] })),
  'usage:read': [
    { method: 'GET', path: '/usage', allowed: [200] },
    { method: 'GET', path: '/usage/summary?group_by=model', allowed: [200] },
    { method: 'GET', path: '/v1/user/subscription', eleven: true, allowed: [200] },
  ],
};

async function call(route: Call, key: Key, on = server): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = route.eleven ? { 'xi-api-key': key.key } : { ...key.auth };
  if (route.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(on.url + route.path, { method: route.method, headers, ...(route.body !== undefined ? { body: JSON.stringify(route.body) } : {}) });
  return { status: response.status, text: await response.text() };
}

function refusedFor(scope: string, got: { status: number; text: string }, what: string, eleven = false): void {
  assert.equal(got.status, 403, `${what}: ${got.text}`);
  // ElevenLabs' clients know this refusal as `missing_permissions`.
  assert.match(got.text, eleven ? /"status":"missing_permissions"/ : /insufficient_scope|Insufficient scope/, what);
  assert.ok(got.text.includes(`the ${scope} scope`), `${what} names ${scope}: ${got.text}`);
}

describe('scopes', () => {
  for (const scope of SCOPES) {
    test(`${scope}: refused without it, allowed with it alone, on every route it guards`, { timeout: 60_000 }, async () => {
      const only = await makeKey({ scopes: [scope] });
      const without = await makeKey({ scopes: SCOPES.filter((s) => s !== scope) });
      for (const route of ROUTES[scope]) {
        const what = `${route.method} ${route.path}`;
        refusedFor(scope, await call(route, without), what, route.eleven);
        const got = await call(route, only);
        assert.ok(route.allowed.includes(got.status), `${what} with ${scope}: ${got.status} ${got.text.slice(0, 300)}`);
      }
    });
  }

  test('a key without any scope still lists models and reads its concurrency', { timeout: 20_000 }, async () => {
    const none = await makeKey({ scopes: [] });
    assert.equal(none.view.scopes.length, 0);
    for (const route of [
      { method: 'GET', path: '/models', allowed: [200] },
      { method: 'GET', path: '/concurrency', allowed: [200] },
      { method: 'GET', path: '/v1/models', eleven: true, allowed: [200] },
    ]) {
      const got = await call(route, none);
      assert.equal(got.status, 200, `${route.path}: ${got.text}`);
    }
  });

  test('a key made before scopes (scopes null) keeps every scope', { timeout: 20_000 }, async () => {
    const all = await makeKey();
    assert.equal(all.view.scopes, null);
    for (const scope of SCOPES) assert.ok(ROUTES[scope][0].allowed.includes((await call(ROUTES[scope][0], all)).status), scope);
  });

  test('the native WebSocket: an upgrade without tts is refused; a scope taken away refuses the next context', { timeout: 30_000 }, async () => {
    const reader = await makeKey({ scopes: ['voices:read'] });
    await assert.rejects(TestSocket.open(server.url, reader.auth), (err: any) => err.status === 403 && /the tts scope/.test(err.body));
    const speaker = await makeKey({ scopes: ['tts'] });
    const socket = await TestSocket.open(server.url, speaker.auth);
    try {
      socket.send({ ...WS_BASE, context_id: 'one', transcript: 'Allowed.', continue: false });
      await socket.waitFor((e) => e.context_id === 'one' && e.type === 'done');
      assert.equal((await patchKey(speaker.id, { scopes: ['voices:read'] })).status, 200);
      socket.send({ ...WS_BASE, context_id: 'two', transcript: 'Refused.', continue: false });
      const error = await socket.waitFor((e) => e.context_id === 'two' && e.type === 'error');
      assert.equal(error.error_code, 'insufficient_scope');
    } finally {
      socket.ws.close();
    }
  });

  test('ElevenLabs stream-input: refused without tts, with the key in the header or in the first message', { timeout: 30_000 }, async () => {
    const reader = await makeKey({ scopes: ['voices:read'] });
    const path = `/v1/text-to-speech/${RACHEL}/stream-input`;
    await assert.rejects(TestSocket.open(server.url, { 'xi-api-key': reader.key }, '?output_format=pcm_16000', path), (err: any) => err.status === 403 && /tts scope/.test(err.body));
    const socket = await TestSocket.open(server.url, {}, '?output_format=pcm_16000', path);
    socket.send({ text: ' ', xi_api_key: reader.key });
    const refused = await socket.waitFor((e) => typeof e.error === 'string');
    assert.equal(refused.error, 'missing_permissions');
    assert.equal(await socket.waitForClose(), 1008);
    const speaker = await makeKey({ scopes: ['tts'] });
    const ok = await TestSocket.open(server.url, {}, '?output_format=pcm_16000', path);
    ok.send({ text: ' ', xi_api_key: speaker.key });
    ok.send({ text: 'Allowed here. ' });
    ok.send({ text: '' });
    await ok.waitFor((e) => e.isFinal === true);
    await ok.waitForClose();
    const multi = await TestSocket.open(server.url, { 'xi-api-key': speaker.key }, '?output_format=pcm_16000', `/v1/text-to-speech/${RACHEL}/multi-stream-input`);
    multi.ws.close();
    await assert.rejects(
      TestSocket.open(server.url, { 'xi-api-key': reader.key }, '?output_format=pcm_16000', `/v1/text-to-speech/${RACHEL}/multi-stream-input`),
      (err: any) => err.status === 403,
    );
  });

  test('access tokens never exceed their key: a token needs the key’s tts, and reads voices only with voices:read', { timeout: 30_000 }, async () => {
    const reader = await makeKey({ scopes: ['voices:read'] });
    refusedFor('tts', await call(tts('/access-token', { grants: { tts: true } }), reader), 'a token from a key without tts');
    const speaker = await makeKey({ scopes: ['tts'] });
    const made = await call(tts('/access-token', { grants: { tts: true } }), speaker);
    assert.equal(made.status, 200, made.text);
    const token = (JSON.parse(made.text) as { token: string }).token;
    const bearer = { id: speaker.id, key: token, auth: { authorization: `Bearer ${token}` }, view: {} };
    assert.equal((await call(ROUTES.tts[0], bearer)).status, 200, 'the token speaks');
    refusedFor('voices:read', await call({ method: 'GET', path: '/voices', allowed: [] }, bearer), 'the token lists voices');
    refusedFor('jobs:read', await call({ method: 'GET', path: '/tts/jobs', allowed: [] }, bearer), 'the token lists jobs');
    const both = await makeKey({ scopes: ['tts', 'voices:read', 'usage:read'] });
    const bothToken = (JSON.parse((await call(tts('/access-token', { grants: { tts: true } }), both)).text) as { token: string }).token;
    const bothBearer = { ...bearer, key: bothToken, auth: { authorization: `Bearer ${bothToken}` } };
    assert.equal((await call({ method: 'GET', path: '/voices', allowed: [] }, bothBearer)).status, 200, 'a token reads voices when its key may');
    // usage:read is the key's, never a token's (tokens are refused on /usage whatever the key holds).
    assert.equal((await call({ method: 'GET', path: '/usage', allowed: [] }, bothBearer)).status, 403);
  });
});

describe('models', () => {
  test('a synthesis with a model the key does not list is refused at admission, on every dialect and for jobs', { timeout: 30_000 }, async () => {
    const key = await makeKey({ models: ['gepard-1.0'] });
    assert.equal((await call(ROUTES.tts[0], key)).status, 200);
    for (const route of [
      tts('/tts/bytes', ttsBody({ model_id: 'voicegate-1.0', transcript: 'No.' })),
      tts('/v1/audio/speech', { model: 'voicegate-1.0', input: 'No.', voice: 'sarah', response_format: 'pcm' }),
      tts(`/v1/text-to-speech/${RACHEL}`, { text: 'No.', model_id: 'eleven_multilingual_v2' }, [], true),
      tts('/tts/jobs', ttsBody({ model_id: 'voicegate-1.0', transcript: 'No.' })),
    ]) {
      const got = await call(route, key);
      assert.equal(got.status, 403, `${route.path}: ${got.text}`);
      assert.match(got.text, /model_not_allowed|Model not allowed/, route.path);
    }
  });

  test('an alias counts as the model it stands for, and as itself', { timeout: 30_000 }, async () => {
    const byId = await makeKey({ models: ['voicegate-1.0'] });
    const byAlias = await makeKey({ models: ['eleven_multilingual_v2'] });
    const eleven = tts(`/v1/text-to-speech/${RACHEL}`, { text: 'Alias.', model_id: 'eleven_multilingual_v2' }, [200], true);
    assert.equal((await call(eleven, byId)).status, 200, 'the resolved id');
    assert.equal((await call(eleven, byAlias)).status, 200, 'the alias the client named');
    const other = tts(`/v1/text-to-speech/${RACHEL}`, { text: 'Alias.', model_id: 'eleven_turbo_v2_5' }, [], true);
    assert.equal((await call(other, byAlias)).status, 403, 'another alias of the same model is not the one listed');
  });

  test('a WebSocket context with another model is refused in-band; the socket stays open', { timeout: 30_000 }, async () => {
    const key = await makeKey({ models: ['gepard-1.0'] });
    const socket = await TestSocket.open(server.url, key.auth);
    try {
      socket.send({ ...WS_BASE, model_id: 'voicegate-1.0', context_id: 'no', transcript: 'Refused.', continue: false });
      assert.equal((await socket.waitFor((e) => e.context_id === 'no' && e.type === 'error')).error_code, 'model_not_allowed');
      socket.send({ ...WS_BASE, context_id: 'yes', transcript: 'Allowed.', continue: false });
      await socket.waitFor((e) => e.context_id === 'yes' && e.type === 'done');
    } finally {
      socket.ws.close();
    }
  });
});

describe('networks', () => {
  let proxied: TestServer;
  let proxiedOrg: string;
  before(async () => {
    proxied = await startServer({ config: { accounts: { enabled: true, adminToken: ADMIN }, server: { trustProxy: ['loopback'] } } as any });
    proxiedOrg = await newOrgOn(proxied);
  });
  after(() => proxied?.close());

  const usage = async (on: TestServer, key: Key, forwarded?: string) =>
    (await fetch(on.url + '/usage', { headers: { ...key.auth, ...(forwarded ? { 'x-forwarded-for': forwarded } : {}) } })).status;

  test('the socket’s address decides; X-Forwarded-For is ignored without a trusted proxy', { timeout: 30_000 }, async () => {
    const loopback = await makeKey({ allowed_networks: ['127.0.0.0/8', '2001:db8::/32'] });
    const elsewhere = await makeKey({ allowed_networks: ['10.0.0.0/8'] });
    const v6Only = await makeKey({ allowed_networks: ['::1/128'] });
    assert.equal(await usage(server, loopback), 200);
    assert.equal(await usage(server, v6Only), 403, 'an IPv4 client is not in an IPv6 block');
    const refused = await fetch(server.url + '/usage', { headers: elsewhere.auth });
    assert.equal(refused.status, 403);
    assert.match(await refused.text(), /network_not_allowed.*127\.0\.0\.1|127\.0\.0\.1.*network_not_allowed/s);
    assert.equal(await usage(server, elsewhere, '10.1.2.3'), 403, 'a client cannot claim an address');
    // Synthesis and WebSockets too.
    assert.equal((await call(ROUTES.tts[0], elsewhere)).status, 403);
    await assert.rejects(TestSocket.open(server.url, elsewhere.auth), (err: any) => err.status === 403 && /network_not_allowed/.test(err.body));
    await assert.rejects(TestSocket.open(server.url, { ...elsewhere.auth, 'x-forwarded-for': '10.1.2.3' }), (err: any) => err.status === 403);
    (await TestSocket.open(server.url, loopback.auth)).ws.close();
  });

  test('behind a trusted proxy, the address X-Forwarded-For gives decides, for HTTP and WebSocket upgrades alike', { timeout: 30_000 }, async () => {
    const key = await makeKey({ allowed_networks: ['10.0.0.0/8'] }, proxied, proxiedOrg);
    assert.equal(await usage(proxied, key, '10.1.2.3'), 200);
    assert.equal(await usage(proxied, key, '192.168.1.1'), 403);
    assert.equal(await usage(proxied, key), 403, 'no header: the proxy’s own address');
    // The proxy (loopback) is trusted; the hop before it (192.168.1.1) is not, so it is the client.
    assert.equal(await usage(proxied, key, '10.9.9.9, 192.168.1.1'), 403);
    assert.equal(await usage(proxied, key, '192.168.1.1, 10.9.9.9'), 200);
    (await TestSocket.open(proxied.url, { ...key.auth, 'x-forwarded-for': '10.1.2.3' })).ws.close();
    await assert.rejects(TestSocket.open(proxied.url, { ...key.auth, 'x-forwarded-for': '192.168.1.1' }), (err: any) => err.status === 403 && /network_not_allowed/.test(err.body));
  });

  test('a network taken away refuses the open WebSocket’s next context', { timeout: 30_000 }, async () => {
    const key = await makeKey({ allowed_networks: ['127.0.0.1/32'] });
    const socket = await TestSocket.open(server.url, key.auth);
    try {
      assert.equal((await patchKey(key.id, { allowed_networks: ['10.0.0.0/8'] })).status, 200);
      socket.send({ ...WS_BASE, context_id: 'gone', transcript: 'Refused.', continue: false });
      assert.equal((await socket.waitFor((e) => e.context_id === 'gone' && e.type === 'error')).error_code, 'network_not_allowed');
    } finally {
      socket.ws.close();
    }
  });

  test('the proxy rule: every hop, a number of hops, or trusted blocks (as proxy-addr)', () => {
    const headers = { 'x-forwarded-for': '203.0.113.7, 10.0.0.5, 10.0.0.6' };
    assert.equal(clientAddress('127.0.0.1', headers, false), '127.0.0.1');
    assert.equal(clientAddress('127.0.0.1', headers, true), '203.0.113.7');
    assert.equal(clientAddress('127.0.0.1', headers, 1), '10.0.0.6');
    assert.equal(clientAddress('127.0.0.1', headers, 2), '10.0.0.5');
    assert.equal(clientAddress('127.0.0.1', headers, 9), '203.0.113.7');
    assert.equal(clientAddress('127.0.0.1', headers, ['loopback', '10.0.0.0/8']), '203.0.113.7');
    assert.equal(clientAddress('::ffff:127.0.0.1', headers, ['127.0.0.1']), '10.0.0.6');
    assert.equal(clientAddress('192.0.2.1', headers, ['loopback']), '192.0.2.1', 'an untrusted socket is the client');
  });
});

describe('admin API', () => {
  test('a key’s policy is checked: unknown scope, bad CIDR, expiry not ISO 8601 or past, budget, unknown field', { timeout: 20_000 }, async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ scopes: ['tts', 'voices:admin'] }, /unknown scope voices:admin/],
      [{ scopes: 'tts' }, /scopes must be a list/],
      [{ allowed_networks: ['10.0.0.0/33'] }, /10\.0\.0\.0\/33 is not/],
      [{ allowed_networks: ['example.com'] }, /example\.com is not/],
      [{ allowed_networks: [] }, /at least one/],
      [{ models: [] }, /at least one/],
      [{ expires_at: 'tomorrow' }, /ISO 8601/],
      [{ expires_at: '2030-01-01T00:00:00' }, /ISO 8601/],
      [{ expires_at: '2001-01-01T00:00:00Z' }, /in the future/],
      [{ budget: { credits: 0, period: 'day' } }, /positive integer/],
      [{ budget: { credits: 1.5, period: 'day' } }, /positive integer/],
      [{ budget: { credits: 100, period: 'week' } }, /period must be one of day, month, total/],
      [{ budget: 100 }, /budget must be/],
      [{ budget: { credits: 100, period: 'day', extra: 1 } }, /budget\.extra/],
      [{ colour: 'red' }, /unknown field colour/],
    ];
    const target = await makeKey();
    for (const [input, reason] of cases) {
      for (const response of [
        await fetch(`${server.url}/admin/orgs/${orgId}/keys`, { method: 'POST', headers: adminAuth, body: JSON.stringify(input) }),
        await patchKey(target.id, input),
      ]) {
        const body = (await response.json()) as { error_code: string; message: string };
        assert.equal(response.status, 400, JSON.stringify(input));
        assert.equal(body.error_code, 'invalid_request');
        assert.match(body.message, reason, JSON.stringify(input));
      }
    }
    const unknown = await patchKey('key_nonexistent', { scopes: ['tts'] });
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { error_code: string }).error_code, 'key_not_found');
  });

  test('create, change and clear a policy; the listing shows it, the budget’s spend and reset, and the last use', { timeout: 30_000 }, async () => {
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const key = await makeKey({
      budget: { credits: 50_000, period: 'month' },
      scopes: ['voices:read', 'tts', 'tts'],
      models: ['gepard-1.0'],
      expires_at: expires,
      allowed_networks: ['127.0.0.1', '2001:DB8::/32'],
    });
    assert.deepEqual(key.view.scopes, ['tts', 'voices:read'], 'in the registry’s order, once each');
    assert.deepEqual(key.view.allowed_networks, ['127.0.0.1/32', '2001:db8::/32'], 'normalised');
    assert.equal(key.view.expires_at, expires);
    assert.equal(key.view.last_used_at, null);
    assert.deepEqual(key.view.budget, { credits: 50_000, period: 'month', spent: 0, resets_at: periodReset('month', Date.now())!.toISOString() });
    const spoken = await fetch(server.url + '/tts/bytes', { method: 'POST', headers: { ...key.auth, 'content-type': 'application/json' }, body: JSON.stringify(ttsBody()) });
    assert.equal(spoken.status, 200);
    await spoken.arrayBuffer();
    const cost = Number(spoken.headers.get('x-request-credits'));
    assert.ok(cost > 0);
    const listed = async () => {
      const response = await fetch(`${server.url}/admin/orgs/${orgId}/keys`, { headers: adminAuth });
      return ((await response.json()) as { data: Record<string, any>[] }).data.find((k) => k.id === key.id)!;
    };
    const shown = await listed();
    assert.equal(shown.budget.spent, cost, 'the charge counts against the month');
    assert.ok(await eventually(async () => (await listed()).last_used_at !== null, 5000), 'the use is recorded off the hot path');

    const changed = await patchKey(key.id, { budget: { credits: 7, period: 'total' }, scopes: null, name: 'renamed' });
    const view = (await changed.json()) as Record<string, any>;
    assert.equal(changed.status, 200);
    assert.deepEqual(view.budget, { credits: 7, period: 'total', spent: cost, resets_at: null });
    assert.equal(view.scopes, null);
    assert.equal(view.name, 'renamed');
    assert.deepEqual(view.models, ['gepard-1.0'], 'fields not sent stay');
    const cleared = (await (await patchKey(key.id, { budget: null, models: null, expires_at: null, allowed_networks: null })).json()) as Record<string, any>;
    assert.deepEqual([cleared.budget, cleared.models, cleared.expires_at, cleared.allowed_networks], [null, null, null, null]);
    assert.equal(cleared.status, 'active');
  });
});

describe('expiry on two servers', () => {
  const schema = freshSchemaName();
  let a: TestServer;
  let b: TestServer;
  let pgOrg: string;
  before(async () => {
    const config = { store: { databaseUrl: TEST_DATABASE_URL, schema }, accounts: { enabled: true, adminToken: ADMIN } } as any;
    a = await startServer({ config });
    b = await startServer({ config });
    pgOrg = await newOrgOn(a);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await dropSchema(schema);
  });

  test('a key is refused on every server the moment it expires, and so are its tokens and its open WebSocket', { timeout: 30_000 }, async () => {
    const expiresAt = Date.now() + 2000;
    const key = await makeKey({ expires_at: new Date(expiresAt).toISOString() }, a, pgOrg);
    const usageOn = async (on: TestServer, auth = key.auth) => {
      const response = await fetch(on.url + '/usage', { headers: auth });
      return { status: response.status, body: (await response.json()) as { error_code?: string } };
    };
    // Both servers have read (and cached) the key while it was valid.
    assert.equal((await usageOn(a)).status, 200);
    assert.equal((await usageOn(b)).status, 200);
    const token = ((await (await fetch(b.url + '/access-token', { method: 'POST', headers: { ...key.auth, 'content-type': 'application/json' }, body: JSON.stringify({ grants: { tts: true } }) })).json()) as { token: string }).token;
    const socket = await TestSocket.open(b.url, key.auth);
    try {
      assert.ok(Date.now() < expiresAt, 'set up before the expiry (a slow machine would make this test meaningless)');
      assert.ok(await eventually(() => Date.now() > expiresAt, 5000), 'the expiry passed');
      for (const on of [a, b]) {
        const got = await usageOn(on);
        assert.equal(got.status, 401);
        assert.equal(got.body.error_code, 'key_expired');
      }
      const byToken = await fetch(b.url + '/tts/bytes', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(ttsBody()) });
      assert.equal(byToken.status, 401);
      assert.equal(((await byToken.json()) as { error_code: string }).error_code, 'key_expired');
      socket.send({ ...WS_BASE, context_id: 'late', transcript: 'Too late.', continue: false });
      assert.equal((await socket.waitFor((e) => e.context_id === 'late' && e.type === 'error')).error_code, 'key_expired');
    } finally {
      socket.ws.close();
    }
    const listed = (await (await fetch(`${b.url}/admin/orgs/${pgOrg}/keys`, { headers: adminAuth })).json()) as { data: { id: string; status: string }[] };
    assert.equal(listed.data.find((k) => k.id === key.id)!.status, 'expired');
  });
});

describe('CLI', () => {
  const run = (args: string[]) =>
    promisify(execFile)(process.execPath, [MAIN, ...args], { env: { ...process.env, VOICEGATE_DATA_DIR: dataDir, VOICEGATE_LOG_LEVEL: 'silent' } });

  test('keys create, update and list carry the policy; bad flags are refused with a reason', { timeout: 60_000 }, async () => {
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    const created = await run(['keys', 'create', '--org', orgId, '--name', 'cli', '--budget', '1000/day', '--scopes', 'tts,usage:read', '--models', 'gepard-1.0', '--expires', expires, '--networks', '10.0.0.0/8,::1']);
    const key = created.stdout.trim();
    const record = JSON.parse(created.stderr.slice(created.stderr.indexOf('{'))) as Record<string, any>;
    assert.match(key, /^sk_/);
    assert.deepEqual(record.budget, { credits: 1000, period: 'day', spent: 0, resets_at: periodReset('day', Date.now())!.toISOString() });
    assert.deepEqual([record.scopes, record.models, record.expires_at, record.allowed_networks], [['tts', 'usage:read'], ['gepard-1.0'], expires, ['10.0.0.0/8', '::1/128']]);
    // The server reads the CLI's key: 10.0.0.0/8 leaves this client out.
    assert.equal((await fetch(server.url + '/usage', { headers: { authorization: `Bearer ${key}` } })).status, 403);

    const updated = JSON.parse((await run(['keys', 'update', record.id, '--networks', 'none', '--scopes', 'voices:read', '--budget', 'none'])).stdout) as Record<string, any>;
    assert.deepEqual([updated.allowed_networks, updated.scopes, updated.budget, updated.models], [null, ['voices:read'], null, ['gepard-1.0']]);
    const listed = JSON.parse((await run(['keys', 'list', '--org', orgId])).stdout) as Record<string, any>[];
    assert.deepEqual(listed.find((k) => k.id === record.id)!.scopes, ['voices:read']);
    assert.ok(
      await eventually(async () => (await fetch(server.url + '/usage', { headers: { authorization: `Bearer ${key}` } })).status === 403, 5000),
      'without Redis, the server sees the change once its cache expires: usage:read is gone',
    );

    for (const [flags, reason] of [
      [['--budget', '1000/week'], /period must be one of/],
      [['--budget', 'lots'], /--budget takes/],
      [['--scopes', 'tts,admin'], /unknown scope admin/],
      [['--expires', '2001-01-01T00:00:00Z'], /in the future/],
      [['--networks', '10.0.0.300/8'], /not an IPv4 or IPv6 CIDR/],
    ] as const) {
      await assert.rejects(run(['keys', 'update', record.id, ...flags]), (err: any) => err.code !== 0 && reason.test(err.stderr));
    }
  });
});
