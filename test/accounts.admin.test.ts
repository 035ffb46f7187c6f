/**
 * @module test/accounts.admin
 * Operating accounts as an operator would: the `voicegate` CLI run as a
 * separate process on the server's data directory, and the admin HTTP API
 * behind its token.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startServer, tempDataDir, ttsBody } from './helpers/server.js';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));

async function cli(dataDir: string, ...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [MAIN, ...args], { env: { ...process.env, VOICEGATE_DATA_DIR: dataDir, VOICEGATE_LOG_LEVEL: 'silent' } });
}

test('the CLI creates an org, issues a key the server accepts, adds credits, reports usage and revokes', async () => {
  const dataDir = tempDataDir();
  const org = JSON.parse((await cli(dataDir, 'orgs', 'create', '--name', 'Acme', '--credits', '500', '--max-concurrent', '4', '--rate', '100/60')).stdout);
  assert.match(org.id, /^org_[0-9a-f]{16}$/);
  assert.deepEqual(org.balance, { credits: 500, usd: '0.015' });
  assert.deepEqual(org.limits, { max_concurrent: 4, rate_limit: { requests: 100, per_seconds: 60 } });

  const issued = await cli(dataDir, 'keys', 'create', '--org', org.id, '--name', 'backend');
  const key = issued.stdout.trim();
  assert.match(key, /^sk_/);
  assert.match(issued.stderr, /shown once/);

  const server = await startServer({ config: { dataDir, accounts: { enabled: true } } });
  try {
    assert.equal(server.app.bootstrap, null, 'an existing store is not bootstrapped');
    const response = await server.post('/tts/bytes', ttsBody({ transcript: 'From the CLI.' }), { authorization: `Bearer ${key}` });
    assert.equal(response.status, 200);
    await response.arrayBuffer();

    const credited = JSON.parse((await cli(dataDir, 'credits', 'add', '--org', org.id, '--amount', '1000', '--reason', 'invoice 42')).stdout);
    assert.equal(credited.org.balance.credits, 500 - 13 + 1000);
    assert.equal(credited.entry.reason, 'invoice 42');
    assert.deepEqual(JSON.parse((await cli(dataDir, 'balance', '--org', org.id)).stdout), { credits: 1487, usd: '0.04461' });
    const usage = JSON.parse((await cli(dataDir, 'usage', '--org', org.id, '--limit', '2')).stdout);
    assert.deepEqual(usage.data.map((e: { kind: string; credits: number }) => [e.kind, e.credits]), [['credit', 1000], ['charge', -13]]);
    assert.equal(usage.has_more, true);

    const keys = JSON.parse((await cli(dataDir, 'keys', 'list', '--org', org.id)).stdout);
    assert.equal(keys.length, 1);
    assert.equal(keys[0].status, 'active');
    assert.equal(JSON.stringify(keys).includes(key.slice(20)), false, 'listing never shows the secret');
    await cli(dataDir, 'keys', 'revoke', keys[0].id);
    // The server caches key records for up to 500 ms; a revocation from another process lands within that.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const refused = await server.post('/tts/bytes', ttsBody(), { authorization: `Bearer ${key}` });
    assert.equal(refused.status, 401);
    await refused.arrayBuffer();
  } finally {
    await server.close();
  }
  await assert.rejects(cli(dataDir, 'orgs', 'show', 'org_missing'), (err: { code: number; stderr: string }) => err.code === 2 && /does not exist/.test(err.stderr));
  await assert.rejects(cli(dataDir, 'credits', 'add', '--org', org.id, '--amount', 'lots', '--reason', 'x'), (err: { code: number }) => err.code === 2);
  await assert.rejects(cli(dataDir, 'frobnicate'), (err: { code: number }) => err.code === 2);
});

test('the admin HTTP API is off without a token, refuses a wrong one, and manages accounts with the right one', async () => {
  const off = await startServer({ config: { accounts: { enabled: true } } });
  try {
    const response = await fetch(off.url + '/admin/orgs');
    assert.equal(response.status, 403);
    assert.equal(((await response.json()) as { error_code: string }).error_code, 'admin_disabled');
  } finally {
    await off.close();
  }
  const token = 'admin-token-0123456789abcdef';
  const server = await startServer({ config: { accounts: { enabled: true, adminToken: token } } });
  const admin = (method: string, path: string, body?: unknown, auth = token) =>
    fetch(server.url + '/admin' + path, {
      method,
      headers: { authorization: `Bearer ${auth}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  try {
    assert.equal((await admin('GET', '/orgs', undefined, 'wrong-token')).status, 401);
    const created = await admin('POST', '/orgs', { name: 'Beta', credits: 50, limits: { max_concurrent: 2 } });
    assert.equal(created.status, 201);
    const org = (await created.json()) as any;
    assert.equal(org.balance.credits, 50);
    assert.equal(org.limits.max_concurrent, 2);
    const keyResponse = await admin('POST', `/orgs/${org.id}/keys`, { name: 'web' });
    const key = (await keyResponse.json()) as any;
    assert.equal(keyResponse.status, 201);
    assert.match(key.key, /^sk_/);
    const spoken = await server.post('/tts/bytes', ttsBody({ transcript: 'Beta.' }), { authorization: `Bearer ${key.key}` });
    assert.equal(spoken.status, 200);
    await spoken.arrayBuffer();
    const credit = await admin('POST', `/orgs/${org.id}/credits`, { amount: 100, reason: 'trial' });
    assert.equal(((await credit.json()) as any).org.balance.credits, 145);
    assert.equal((await admin('POST', `/orgs/${org.id}/credits`, { amount: 1.5, reason: 'x' })).status, 400);
    const limited = await admin('PATCH', `/orgs/${org.id}`, { limits: { rate_limit: { requests: 10, per_seconds: 1 } } });
    assert.deepEqual(((await limited.json()) as any).limits, { max_concurrent: 2, rate_limit: { requests: 10, per_seconds: 1 } });
    const usage = (await (await admin('GET', `/orgs/${org.id}/usage`)).json()) as any;
    assert.deepEqual(usage.data.map((e: any) => e.kind), ['credit', 'charge', 'credit']);
    assert.equal((await admin('GET', `/orgs/org_nope/usage`)).status, 404);
    assert.equal((await admin('DELETE', `/keys/${key.id}`)).status, 200);
    assert.equal((await admin('DELETE', `/keys/key_nope`)).status, 404);
    const revoked = await server.post('/tts/bytes', ttsBody(), { authorization: `Bearer ${key.key}` });
    assert.equal(revoked.status, 401);
    await revoked.arrayBuffer();
    const listed = (await (await admin('GET', '/orgs')).json()) as any;
    assert.ok(listed.data.some((o: any) => o.id === org.id));
  } finally {
    await server.close();
  }
});
