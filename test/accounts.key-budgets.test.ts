/**
 * @module test/accounts.key-budgets
 * Key budgets and usage alerts through real servers: a budget holds under a
 * race of requests on two servers sharing PostgreSQL (overshoot under one
 * request, every charge once, nothing left held); every dialect renders
 * `key_budget_exceeded` in its own shape; access tokens spend their key's
 * budget; a day's budget resets when the clock passes midnight UTC (the clock
 * is moved, not waited for); alert webhooks are signed and sent once per
 * threshold per period, and never to a private address.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, mock, test } from 'node:test';
import { WebSocket } from 'ws';
import { verifyWebhook } from '../src/webhooks/signature.js';
import { TONE_MODELS } from './helpers/gateways.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';
import { eventually } from './helpers/redis.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';

const T = { timeout: 60_000 };
const ADMIN = 'admin-token-for-key-budgets-0123456789';
const SECRET = 'whsec_' + Buffer.from('a key budget test secret of 32 bytes').toString('base64');
const TRANSCRIPT = 'Budgets are counted in characters, one credit each.'; // 51 characters
const COST = [...TRANSCRIPT].length;

const accounts = { enabled: true, adminToken: ADMIN, startingCredits: 0 };

async function admin(server: TestServer, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

/** An organisation with `credits` and one key with `budget`, made through the admin API. */
async function keyWithBudget(server: TestServer, credits: number, budget: { credits: number; period: string } | null) {
  const org = await admin(server, 'POST', '/admin/orgs', { name: 'budgets', credits, limits: { max_concurrent: null, rate_limit: null } });
  assert.equal(org.status, 201, JSON.stringify(org.json));
  const key = await admin(server, 'POST', `/admin/orgs/${org.json.id}/keys`, { name: 'bot', ...(budget ? { budget } : {}) });
  assert.equal(key.status, 201, JSON.stringify(key.json));
  return { orgId: org.json.id as string, keyId: key.json.id as string, key: key.json.key as string, auth: { authorization: `Bearer ${key.json.key}` } };
}

const speak = (server: TestServer, auth: Record<string, string>, transcript = TRANSCRIPT) => server.post('/tts/bytes', ttsBody({ transcript }), auth);

describe('key budgets on two servers sharing PostgreSQL', () => {
  const schema = freshSchemaName();
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    const config = { ...TONE_MODELS, store: { databaseUrl: TEST_DATABASE_URL, schema }, accounts };
    a = await startServer({ config });
    b = await startServer({ config });
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await dropSchema(schema);
  });

  test('a race of requests on both servers spends the budget exactly: overshoot under one request, each charge once, nothing left held', T, async () => {
    const budget = 20 * COST + 25;
    const payer = await keyWithBudget(a, 1_000_000, { credits: budget, period: 'day' });
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => speak(i % 2 ? a : b, payer.auth).then(async (r) => ({ status: r.status, headers: r.headers, body: r.status === 200 ? await r.arrayBuffer() : await r.json() }))));
    const ok = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status === 402);
    assert.equal(ok.length + refused.length, 60, `statuses: ${answers.map((r) => r.status)}`);
    // Granted while budget − (spent + held) > 0: 21 requests of 51 against 1,045 (the 21st sees 25 left).
    assert.equal(ok.length, 21);
    for (const r of refused) {
      const body = r.body as { error_code: string; message: string };
      assert.equal(body.error_code, 'key_budget_exceeded');
      assert.match(body.message, /daily budget of 1045 credits/);
      assert.match(r.headers.get('x-key-budget-resets-at') ?? '', /T00:00:00\.000Z$/);
    }
    const store = a.app.services.accounts!.store;
    const since = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate())).toISOString();
    assert.equal(await store.usage.spent(payer.keyId, since), ok.length * COST);
    assert.equal((await store.orgs.get(payer.orgId))!.balance, 1_000_000 - ok.length * COST);
    assert.equal(await store.ledger.sum(payer.orgId), 1_000_000 - ok.length * COST);
    assert.equal(await store.ledger.reserved(payer.orgId), 0, 'nothing left held');
    // The listing shows the period's spending.
    const keys = await admin(b, 'GET', `/admin/orgs/${payer.orgId}/keys`);
    const listed = keys.json.data.find((k: { id: string }) => k.id === payer.keyId);
    assert.equal(listed.budget.spent, ok.length * COST);
  });

  test('raising the budget takes effect at once on both servers', T, async () => {
    const payer = await keyWithBudget(a, 1_000_000, { credits: 1, period: 'month' });
    assert.equal((await speak(a, payer.auth)).status, 200);
    assert.equal((await speak(b, payer.auth)).status, 402);
    const patched = await admin(a, 'PATCH', `/admin/keys/${payer.keyId}`, { budget: { credits: 10_000, period: 'month' } });
    assert.equal(patched.status, 200, JSON.stringify(patched.json));
    assert.ok(await eventually(async () => (await speak(b, payer.auth)).status === 200, 5000), 'the other server follows the change');
  });
});

describe('key budgets in every dialect, access tokens, and a new period', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { ...TONE_MODELS, accounts } });
  });
  after(() => server?.close());

  test('key_budget_exceeded in each dialect’s own shape, the WebSocket included', T, async () => {
    const payer = await keyWithBudget(server, 100_000, { credits: 10, period: 'total' });
    // The first request is granted (10 > 0) and overshoots by what it costs; then every one is refused.
    assert.equal((await speak(server, payer.auth)).status, 200);

    const native = await speak(server, payer.auth);
    assert.equal(native.status, 402);
    const nativeBody = (await native.json()) as { error_code: string; message: string; request_id: string };
    assert.equal(nativeBody.error_code, 'key_budget_exceeded');
    assert.match(nativeBody.message, /total budget of 10 credits \(51 spent.*does not reset/);
    assert.ok(nativeBody.request_id);
    assert.equal(native.headers.get('x-key-budget-resets-at'), null, 'a total budget never resets');

    const openai = await server.post('/v1/audio/speech', { model: 'tts-1', input: TRANSCRIPT, voice: 'alloy' }, payer.auth);
    assert.equal(openai.status, 402);
    assert.equal(((await openai.json()) as { error: { code: string } }).error.code, 'key_budget_exceeded');

    const eleven = await fetch(`${server.url}/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM`, {
      method: 'POST',
      headers: { 'xi-api-key': payer.key, 'content-type': 'application/json' },
      body: JSON.stringify({ text: TRANSCRIPT, model_id: 'eleven_multilingual_v2' }),
    });
    assert.equal(eleven.status, 402);
    const elevenBody = (await eleven.json()) as { detail: { status: string; message: string; request_id: string } };
    assert.equal(elevenBody.detail.status, 'quota_exceeded');
    assert.match(elevenBody.detail.message, /budget/);

    const socket = new WebSocket(`${server.url.replace('http', 'ws')}/tts/websocket?cartesia_version=2025-04-16`, { headers: payer.auth });
    const error = await new Promise<Record<string, unknown>>((resolve, reject) => {
      socket.once('error', reject);
      socket.on('message', (data) => {
        const event = JSON.parse(String(data)) as Record<string, unknown>;
        if (event.type === 'error') resolve(event);
      });
      socket.once('open', () =>
        socket.send(JSON.stringify({ ...ttsBody({ transcript: TRANSCRIPT }), context_id: 'c1', output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 8000 } })),
      );
    });
    socket.close();
    assert.equal(error.error_code, 'key_budget_exceeded');
    assert.equal(error.status_code, 402);
    assert.equal(await server.app.services.accounts!.store.ledger.reserved(payer.orgId), 0);
  });

  test('an access token made from a key spends that key’s budget', T, async () => {
    const payer = await keyWithBudget(server, 100_000, { credits: COST, period: 'day' });
    const made = await server.post('/access-token', { grants: { tts: true }, expires_in: 60 }, payer.auth);
    assert.equal(made.status, 200);
    const { token } = (await made.json()) as { token: string };
    assert.equal((await speak(server, { authorization: `Bearer ${token}` })).status, 200);
    // The key's budget is spent, whichever credential spent it.
    assert.equal((await speak(server, payer.auth)).status, 402);
    assert.equal((await speak(server, { authorization: `Bearer ${token}` })).status, 402);
  });

  test('a day’s budget starts again at midnight UTC: the clock is moved, not waited for', T, async () => {
    const payer = await keyWithBudget(server, 100_000, { credits: COST, period: 'day' });
    const evening = Date.UTC(2026, 11, 31, 23, 59, 0);
    mock.timers.enable({ apis: ['Date'], now: evening });
    try {
      assert.equal((await speak(server, payer.auth)).status, 200);
      const refused = await speak(server, payer.auth);
      assert.equal(refused.status, 402);
      assert.equal(refused.headers.get('x-key-budget-resets-at'), '2027-01-01T00:00:00.000Z');
      const keys = await admin(server, 'GET', `/admin/orgs/${payer.orgId}/keys`);
      assert.deepEqual(
        (({ spent, resets_at }) => ({ spent, resets_at }))(keys.json.data.find((k: { id: string }) => k.id === payer.keyId).budget),
        { spent: COST, resets_at: '2027-01-01T00:00:00.000Z' },
      );
      mock.timers.setTime(Date.UTC(2027, 0, 1, 0, 0, 1));
      assert.equal((await speak(server, payer.auth)).status, 200, 'a new day, a new budget');
      assert.equal((await speak(server, payer.auth)).status, 402);
    } finally {
      mock.timers.reset();
    }
  });
});

/** A webhook receiver on loopback that records what it is sent. */
async function receiver(): Promise<{ url: string; received: { headers: IncomingHttpHeaders; body: string }[]; server: Server }> {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received, server };
}

describe('usage alerts', () => {
  let server: TestServer;
  let hook: Awaited<ReturnType<typeof receiver>>;
  before(async () => {
    hook = await receiver();
    server = await startServer({
      config: { ...TONE_MODELS, accounts, jobs: { webhooks: { allowHttp: true, allowPrivateNetworks: true, secret: SECRET } } },
    });
  });
  after(async () => {
    await server?.close();
    hook?.server.close();
  });

  test('budget and balance thresholds each send one signed webhook per period', T, async () => {
    const payer = await keyWithBudget(server, 10 * COST, { credits: 4 * COST, period: 'month' });
    const budgetAlert = await admin(server, 'POST', `/admin/orgs/${payer.orgId}/alerts`, { url: hook.url, key_id: payer.keyId, budget_percent: [100, 50, 80] });
    assert.equal(budgetAlert.status, 201, JSON.stringify(budgetAlert.json));
    assert.deepEqual(budgetAlert.json.budget_percent, [50, 80, 100]);
    const balanceAlert = await admin(server, 'POST', `/admin/orgs/${payer.orgId}/alerts`, { url: hook.url, balance_below: [8 * COST] });
    assert.equal(balanceAlert.status, 201);

    const mine = () => hook.received.map((r) => JSON.parse(r.body)).filter((m) => m.data.org_id === payer.orgId);
    // 2 of 4: 50 %; the balance is 8 × COST, not yet under it.
    for (let i = 0; i < 2; i++) assert.equal((await speak(server, payer.auth)).status, 200);
    assert.ok(await eventually(async () => mine().length === 1, 10_000), `received ${JSON.stringify(mine())}`);
    assert.deepEqual(mine()[0].data.percent, 50);
    // 4 of 4: 80 % and 100 %; the balance falls under 8 × COST with the third (7 × COST), then 6 × COST.
    for (let i = 0; i < 2; i++) assert.equal((await speak(server, payer.auth)).status, 200);
    assert.ok(await eventually(async () => mine().length === 4, 10_000), `received ${JSON.stringify(mine())}`);
    assert.deepEqual(mine().map((m) => m.type).sort(), ['usage.balance_below', 'usage.budget_threshold', 'usage.budget_threshold', 'usage.budget_threshold']);
    assert.deepEqual(mine().filter((m) => m.data.percent).map((m) => m.data.percent).sort((x: number, y: number) => x - y), [50, 80, 100]);
    const balance = mine().find((m) => m.type === 'usage.balance_below');
    assert.equal(balance.data.below, 8 * COST);
    assert.ok([7 * COST, 6 * COST].includes(balance.data.balance), `balance ${balance.data.balance}`);

    for (const { headers, body } of hook.received) assert.doesNotThrow(() => verifyWebhook(SECRET, headers as Record<string, string>, body));
    const ids = hook.received.map((r) => r.headers['webhook-id']);
    assert.equal(new Set(ids).size, ids.length, 'each event its own message id');

    // More charges in the same periods fire nothing again (the budget refuses; the balance alert saw its threshold).
    await admin(server, 'PATCH', `/admin/keys/${payer.keyId}`, { budget: { credits: 100 * COST, period: 'month' } });
    assert.ok(await eventually(async () => (await speak(server, payer.auth)).status === 200, 5000));
    await server.app.services.accounts!.alerts.evaluate(payer.orgId);
    const listed = await admin(server, 'GET', `/admin/orgs/${payer.orgId}/alerts`);
    assert.deepEqual(listed.json.data.map((a: { events: unknown[] }) => a.events.length).sort(), [1, 3]);
    assert.equal(mine().length, 4);

    // Credits added start the balance's new period: under the threshold again, it fires again.
    const credited = await admin(server, 'POST', `/admin/orgs/${payer.orgId}/credits`, { amount: 1, reason: 'top-up' });
    assert.equal(credited.status, 201);
    assert.equal((await speak(server, payer.auth)).status, 200);
    assert.ok(await eventually(async () => mine().filter((m) => m.type === 'usage.balance_below').length === 2, 10_000));

    const deleted = await admin(server, 'DELETE', `/admin/alerts/${balanceAlert.json.id}`);
    assert.equal(deleted.status, 200);
    assert.equal((await admin(server, 'DELETE', `/admin/alerts/${balanceAlert.json.id}`)).json.error_code, 'alert_not_found');
  });

  test('alert requests are checked: thresholds, the key, and the URL', T, async () => {
    const payer = await keyWithBudget(server, 100, null);
    const bad = async (body: unknown) => (await admin(server, 'POST', `/admin/orgs/${payer.orgId}/alerts`, body)).json.error_code;
    assert.equal(await bad({ url: hook.url }), 'invalid_request');
    assert.equal(await bad({ url: hook.url, budget_percent: [50] }), 'invalid_request');
    assert.equal(await bad({ url: hook.url, balance_below: [0] }), 'invalid_request');
    assert.equal(await bad({ url: hook.url, key_id: 'key_0000000000000000', budget_percent: [50] }), 'invalid_request');
    assert.equal(await bad({ url: 'not a url', balance_below: [5] }), 'invalid_webhook_url');
    assert.equal((await admin(server, 'POST', '/admin/orgs/org_missing/alerts', { url: hook.url, balance_below: [5] })).status, 404);
  });
});

describe('usage alerts never reach a private address', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ config: { ...TONE_MODELS, accounts } });
  });
  after(() => server?.close());

  test('loopback, private and link-local URLs are refused when the alert is made', T, async () => {
    const payer = await keyWithBudget(server, 100, null);
    for (const url of ['https://127.0.0.1/hook', 'https://10.1.2.3/hook', 'https://169.254.169.254/latest', 'https://[::1]/hook', 'http://hooks.example.com/plain-http']) {
      const made = await admin(server, 'POST', `/admin/orgs/${payer.orgId}/alerts`, { url, balance_below: [5] });
      assert.equal(made.status, 400, url);
      assert.equal(made.json.error_code, 'invalid_webhook_url', url);
    }
  });
});
