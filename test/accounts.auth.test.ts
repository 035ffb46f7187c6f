/**
 * @module test/accounts.auth
 * Keys: the bootstrap key on first start, the accepted ways to present a
 * key, both 401 codes, revocation, and keys never reaching the logs.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { newOrg } from './helpers/accounts.js';
import { startServer, tempDataDir, ttsBody } from './helpers/server.js';

const accounts = { enabled: true };

test('the first start creates an organisation with credits and a working key; later starts do not', async () => {
  const dataDir = tempDataDir();
  const first = await startServer({ config: { dataDir, accounts } });
  let key: string;
  try {
    assert.ok(first.app.bootstrap, 'bootstrap happened');
    key = first.app.bootstrap.key;
    assert.match(key, /^sk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    assert.equal(first.app.bootstrap.org.balance, 1_000_000);
    const response = await first.post('/tts/bytes', ttsBody(), { authorization: `Bearer ${key}` });
    assert.equal(response.status, 200);
    await response.arrayBuffer();
  } finally {
    await first.close();
  }
  const second = await startServer({ config: { dataDir, accounts } });
  try {
    assert.equal(second.app.bootstrap, null);
    const response = await second.post('/tts/bytes', ttsBody(), { 'x-api-key': key });
    assert.equal(response.status, 200, 'the key survives a restart');
    await response.arrayBuffer();
  } finally {
    await second.close();
  }
});

test('missing, unknown, malformed and revoked keys get the two 401 codes', async () => {
  const server = await startServer({ config: { accounts } });
  try {
    const org = await newOrg(server);
    const expect401 = async (headers: Record<string, string>, code: string) => {
      const response = await server.post('/tts/bytes', ttsBody(), headers);
      const body = (await response.json()) as { error_code: string };
      assert.equal(response.status, 401);
      assert.equal(body.error_code, code);
    };
    await expect401({}, 'missing_api_key');
    await expect401({ authorization: 'Basic abc' }, 'missing_api_key');
    await expect401({ authorization: 'Bearer nonsense' }, 'invalid_api_key');
    const forged = org.key.slice(0, -4) + (org.key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    await expect401({ authorization: `Bearer ${forged}` }, 'invalid_api_key');
    await expect401({ 'x-api-key': `sk_${'0'.repeat(16)}_${'A'.repeat(43)}` }, 'invalid_api_key');
    // The query parameter is for WebSocket upgrades only.
    const viaQuery = await fetch(`${server.url}/tts/bytes?api_key=${org.key}`, { method: 'POST', body: JSON.stringify(ttsBody()) });
    assert.equal(viaQuery.status, 401);
    await viaQuery.arrayBuffer();

    const ok = await server.post('/tts/bytes', ttsBody(), { authorization: `bearer ${org.key}` });
    assert.equal(ok.status, 200);
    await ok.arrayBuffer();
    await server.app.services.accounts!.admin.revokeKey(org.keyId);
    await expect401(org.auth, 'invalid_api_key');
    const keys = await server.app.services.accounts!.admin.listKeys(org.orgId);
    assert.ok(keys[0].lastUsedAt, 'last use is recorded');
    assert.ok(keys[0].revokedAt);
  } finally {
    await server.close();
  }
});

test('a key never reaches the logs, whether sent as a header or in the query', async () => {
  let log = '';
  const destination = new Writable({
    write(chunk, _encoding, done) {
      log += String(chunk);
      done();
    },
  });
  const server = await startServer({ config: { accounts }, logDestination: destination, logLevel: 'trace' });
  try {
    const org = await newOrg(server);
    const secret = org.key.split('_').slice(2).join('_');
    for (const headers of [org.auth, { 'x-api-key': org.key }, { authorization: `Bearer ${org.key}x` }]) {
      const response = await server.post('/tts/bytes', ttsBody({ voice: { mode: 'id', id: 'nobody' } }), headers);
      await response.arrayBuffer();
    }
    const query = await fetch(`${server.url}/voices?api_key=${org.key}&access_token=${org.key}`, { headers: org.auth });
    await query.arrayBuffer();
    assert.ok(log.includes('"request_id"'), 'requests were logged');
    assert.ok(log.length > 1000);
    assert.equal(log.includes(secret), false, 'the secret appears nowhere');
    assert.equal(log.includes(org.key.slice(0, 19)), false, 'not even the key id part');
  } finally {
    await server.close();
  }
});
