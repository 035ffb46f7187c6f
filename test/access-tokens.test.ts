/**
 * @module test/access-tokens
 * `POST /access-token` end to end: a token made from a key speaks on every
 * transport (Bearer on HTTP, `access_token=` on the WebSocket, the Cartesia
 * SDK's `token` option), is billed to the key's organisation, reads models
 * and voices, is refused on usage, account and admin routes, and stops
 * working once it expires or its key is revoked — also on a second server
 * sharing the token secret, and after a restart.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Cartesia from '@cartesia/cartesia-js';
import { AccessTokens } from '../src/accounts/access-tokens.js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, tempDataDir, ttsBody, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

const SECRET = 'a-test-secret-that-is-long-enough-1234567890';
let server: TestServer;
let org: TestOrg;
before(async () => {
  server = await startServer({ config: { accounts: { enabled: true, tokenSecret: SECRET, adminToken: 'admin-token-0123456789' } } });
  org = await newOrg(server, { credits: 1_000_000 });
});
after(() => server.close());

async function makeToken(auth: Record<string, string> = org.auth, body: unknown = { grants: { tts: true }, expires_in: 600 }): Promise<string> {
  const response = await server.post('/access-token', body, auth);
  const json = (await response.json()) as { token: string };
  assert.equal(response.status, 200, JSON.stringify(json));
  assert.deepEqual(Object.keys(json), ['token']);
  return json.token;
}

async function errorOf(response: Response): Promise<{ status: number; code: string }> {
  const body = (await response.json()) as { error_code: string };
  return { status: response.status, code: body.error_code };
}

describe('making a token', () => {
  test('bad bodies are 400 invalid_request; without a key 401', { timeout: 20_000 }, async () => {
    for (const body of [{}, { grants: { tts: false } }, { grants: { stt: true, tts: true } }, { grants: { tts: true }, expires_in: 3601 }, { grants: { tts: true }, expires_in: 0 }, { grants: { tts: true }, expires_in: 1.5 }]) {
      assert.deepEqual(await errorOf(await server.post('/access-token', body, org.auth)), { status: 400, code: 'invalid_request' }, JSON.stringify(body));
    }
    assert.deepEqual(await errorOf(await server.post('/access-token', { grants: { tts: true } })), { status: 401, code: 'missing_api_key' });
    // Each refusal says what is wrong, as it always has.
    const said: [Record<string, unknown>, RegExp][] = [
      [{}, /grants is required/],
      [{ grants: { stt: true, tts: true } }, /grant stt is not offered by this server; only tts/],
      [{ grants: { tts: false } }, /grants\.tts must be true/],
      [{ grants: { tts: true }, expires_in: 1.5 }, /expires_in must be a whole number of seconds from 1 to 3600/],
    ];
    for (const [body, message] of said) {
      const answer = (await (await server.post('/access-token', body, org.auth)).json()) as { message: string };
      assert.match(answer.message, message, JSON.stringify(body));
    }
    // Cartesia's other grants may be sent as false; expires_in defaults.
    assert.match(await makeToken(org.auth, { grants: { tts: true, stt: false } }), /^at_/);
  });

  test('a token cannot make another token', { timeout: 20_000 }, async () => {
    const token = await makeToken();
    assert.deepEqual(await errorOf(await server.post('/access-token', { grants: { tts: true } }, { authorization: `Bearer ${token}` })), {
      status: 403,
      code: 'access_token_not_allowed',
    });
  });
});

describe('using a token', () => {
  test('Bearer on /tts/bytes speaks and bills the key’s organisation', { timeout: 20_000 }, async () => {
    const token = await makeToken();
    const before = await balanceOf(server, org.orgId);
    const body = ttsBody({ transcript: 'Twelve chars' });
    const response = await server.post('/tts/bytes', body, { authorization: `Bearer ${token}` });
    assert.equal(response.status, 200);
    assert.ok((await response.arrayBuffer()).byteLength > 1000);
    const afterwards = await balanceOf(server, org.orgId);
    assert.equal(before.balance - afterwards.balance, 12);
    const usage = (await (await fetch(`${server.url}/usage?limit=1`, { headers: org.auth })).json()) as { data: { key_id: string | null }[] };
    assert.equal(usage.data[0].key_id, org.keyId, 'the charge names the parent key');
  });

  test('OpenAI speech and SSE take it too', { timeout: 20_000 }, async () => {
    const token = await makeToken();
    const auth = { authorization: `Bearer ${token}` };
    const speech = await server.post('/v1/audio/speech', { model: 'tts-1', input: 'Hello there.', voice: 'alloy', response_format: 'wav' }, auth);
    assert.equal(speech.status, 200, await speech.clone().text());
    await speech.arrayBuffer();
    const sse = await server.post('/tts/sse', ttsBody({ output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 } }), auth);
    assert.equal(sse.status, 200);
    assert.match(await sse.text(), /"done":true/);
  });

  test('access_token= on the WebSocket speaks; a bad one is refused at the upgrade', { timeout: 20_000 }, async () => {
    const token = await makeToken();
    const socket = await TestSocket.open(server.url, {}, `?access_token=${encodeURIComponent(token)}`);
    socket.send({ model_id: 'gepard-1.0', voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 }, context_id: 'c', transcript: 'Hello from a token.' });
    await socket.waitFor((e) => e.type === 'done' && e.context_id === 'c');
    assert.ok(socket.audio('c').length > 16000);
    socket.close();
    const forged = token.slice(0, -3) + (token.endsWith('AAA') ? 'BBB' : 'AAA');
    await assert.rejects(
      TestSocket.open(server.url, {}, `?access_token=${encodeURIComponent(forged)}`),
      (err: any) => err.status === 401 && JSON.parse(err.body).error_code === 'invalid_access_token',
    );
  });

  test('the Cartesia SDK’s accessToken.create and token option', { timeout: 20_000 }, async () => {
    const keyClient = new Cartesia({ apiKey: org.key, baseURL: server.url, maxRetries: 0 });
    const { token } = await keyClient.accessToken.create({ grants: { tts: true }, expires_in: 60 });
    const tokenClient = new Cartesia({ token, baseURL: server.url, maxRetries: 0 });
    const response = await tokenClient.tts.generate({
      model_id: 'gepard-1.0',
      transcript: 'Spoken with a token.',
      voice: { mode: 'id', id: 'sarah' },
      output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 22050 },
    });
    assert.ok((await response.arrayBuffer()).byteLength > 1000);
  });

  test('reads models and voices; refused on usage, voice changes, dictionaries and admin', { timeout: 20_000 }, async () => {
    const token = await makeToken();
    const auth = { authorization: `Bearer ${token}` };
    assert.equal((await fetch(`${server.url}/voices`, { headers: auth })).status, 200);
    assert.equal((await fetch(`${server.url}/voices/sarah`, { headers: auth })).status, 200);
    assert.equal((await fetch(`${server.url}/models`, { headers: auth })).status, 200);
    const refused = { status: 403, code: 'access_token_not_allowed' };
    assert.deepEqual(await errorOf(await fetch(`${server.url}/usage`, { headers: auth })), refused);
    assert.deepEqual(await errorOf(await fetch(`${server.url}/voices/sarah`, { method: 'DELETE', headers: auth })), refused);
    assert.deepEqual(await errorOf(await fetch(`${server.url}/pronunciation-dicts`, { headers: auth })), refused);
    assert.deepEqual(await errorOf(await server.post('/pronunciation-dicts', { name: 'x', items: [] }, auth)), refused);
    assert.deepEqual(await errorOf(await fetch(`${server.url}/admin/orgs`, { headers: auth })), { status: 401, code: 'invalid_admin_token' });
  });
});

test('a token lives at least the expires_in it was issued with, and not a second more', () => {
  let now = 1_700_000_000_999; // just before a whole second
  const tokens = new AccessTokens('a-secret-that-is-long-enough-for-hmac-use', () => now);
  const { token } = tokens.issue({ keyId: 'k', orgId: 'o', grants: { tts: true }, expiresInS: 1 });
  now += 999;
  assert.equal(tokens.verify(token).ok, true, 'still valid 999 ms later');
  now += 1001;
  assert.deepEqual(tokens.verify(token), { ok: false, reason: 'expired' });
});

describe('a token stops working', () => {
  test('once it expires, on HTTP and on an open WebSocket', { timeout: 20_000 }, async () => {
    const token = await makeToken(org.auth, { grants: { tts: true }, expires_in: 1 });
    const socket = await TestSocket.open(server.url, {}, `?access_token=${encodeURIComponent(token)}`);
    const deadline = Date.now() + 5_000;
    let last = { status: 200, code: '' };
    while (Date.now() < deadline) {
      last = await errorOf(await server.post('/tts/bytes', ttsBody({ transcript: '' }), { authorization: `Bearer ${token}` }));
      if (last.status === 401) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual(last, { status: 401, code: 'access_token_expired' });
    socket.send({ model_id: 'gepard-1.0', voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 }, context_id: 'late', transcript: 'Too late.' });
    const error = await socket.waitFor((e) => e.type === 'error' && e.context_id === 'late');
    assert.equal(error.error_code, 'access_token_expired');
    socket.close();
  });

  test('once its parent key is revoked', { timeout: 20_000 }, async () => {
    const own = await newOrg(server);
    const token = await makeToken(own.auth);
    const auth = { authorization: `Bearer ${token}` };
    const ok = await server.post('/tts/bytes', ttsBody(), auth);
    assert.equal(ok.status, 200);
    await ok.arrayBuffer();
    await server.app.services.accounts!.admin.revokeKey(own.keyId);
    assert.deepEqual(await errorOf(await server.post('/tts/bytes', ttsBody(), auth)), { status: 401, code: 'invalid_access_token' });
  });

  test('a token signed with another secret, or altered claims, are invalid', { timeout: 20_000 }, async () => {
    const other = new AccessTokens('another-secret-another-secret-another-secret');
    const foreign = other.issue({ keyId: org.keyId, orgId: org.orgId, grants: { tts: true }, expiresInS: 60 }).token;
    assert.deepEqual(await errorOf(await server.post('/tts/bytes', ttsBody(), { authorization: `Bearer ${foreign}` })), { status: 401, code: 'invalid_access_token' });
    const token = await makeToken();
    const [payload, signature] = token.slice(3).split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const altered = `at_${Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 3600 })).toString('base64url')}.${signature}`;
    assert.deepEqual(await errorOf(await server.post('/tts/bytes', ttsBody(), { authorization: `Bearer ${altered}` })), { status: 401, code: 'invalid_access_token' });
  });
});

test('tokens work on another instance with the same secret, and across a restart with a generated one', { timeout: 30_000 }, async () => {
  const twin = await startServer({ config: { dataDir: tempDataDir(), accounts: { enabled: true, tokenSecret: SECRET } } });
  try {
    // Same organisation and key in the twin's own store: the token needs no shared state beyond the secret.
    const twinOrg = await newOrg(twin);
    const made = new AccessTokens(SECRET).issue({ keyId: twinOrg.keyId, orgId: twinOrg.orgId, grants: { tts: true }, expiresInS: 60 }).token;
    const response = await twin.post('/tts/bytes', ttsBody(), { authorization: `Bearer ${made}` });
    assert.equal(response.status, 200);
    await response.arrayBuffer();
  } finally {
    await twin.close();
  }
  const dataDir = tempDataDir();
  const first = await startServer({ config: { dataDir, accounts: { enabled: true } } });
  let token: string;
  let key: string;
  try {
    key = first.app.bootstrap!.key;
    const response = await first.post('/access-token', { grants: { tts: true } }, { authorization: `Bearer ${key}` });
    token = ((await response.json()) as { token: string }).token;
  } finally {
    await first.close();
  }
  const second = await startServer({ config: { dataDir, accounts: { enabled: true } } });
  try {
    const response = await second.post('/tts/bytes', ttsBody(), { authorization: `Bearer ${token}` });
    assert.equal(response.status, 200, 'the generated secret is kept under the data directory');
    await response.arrayBuffer();
  } finally {
    await second.close();
  }
});
