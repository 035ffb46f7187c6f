/**
 * @module test/usage-reports
 * Usage summaries and the ledger's export through a real server: the admin
 * summary and export, an organisation's own summary (another organisation's
 * data never appears), the CSV header and quoting and the JSON Lines shape,
 * a failed request counted in `failed_requests`, the export summed per
 * organisation equal to the summary, and every input refused with a reason.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { startFakeUpstream, type FakeUpstream } from './helpers/fake-upstream.js';
import { eventually } from './helpers/redis.js';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';

const ADMIN = 'usage-reports-admin-token';
const admin = { authorization: `Bearer ${ADMIN}` };

let upstream: FakeUpstream;
let server: TestServer;
let a: TestOrg;
let b: TestOrg;
let from: string;

type Json = Record<string, any>;

async function get(path: string, headers: Record<string, string> = admin): Promise<Response> {
  return fetch(server.url + path, { headers });
}

async function json(path: string, headers: Record<string, string> = admin): Promise<Json> {
  const response = await get(path, headers);
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as Json;
}

/** Splits RFC 4180 CSV (quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') row.push(field), rows.push(row), (row = []), (field = ''), i++;
    else field += c;
  }
  assert.equal(field + row.join(''), '', 'the CSV ends with a line break');
  return rows;
}

before(async () => {
  upstream = await startFakeUpstream();
  const remote = { upstreams: [{ url: upstream.url, maxConcurrent: 8 }], model: 'remote', sampleRate: 24000, voices: { sarah: 'sarah' }, timeoutMs: 5000, ejectAfterFailures: 1000 };
  server = await startServer({
    config: {
      accounts: { enabled: true, adminToken: ADMIN, usdPerMillionCredits: 50 },
      engines: { gpu: { type: 'openai-upstream', format: 'pcm', ...remote } },
      models: { remote: { extends: 'gepard-1.0', engine: 'gpu' } },
    },
  });
  from = new Date().toISOString();
  a = await newOrg(server, { credits: 10_000 });
  b = await newOrg(server, { credits: 10_000 });
  await server.app.services.accounts!.admin.addCredits(a.orgId, 5, 'a "quoted", reason\nover two lines');
  for (const [org, transcript] of [[a, 'Hello there.'], [a, 'A second request, a little longer.'], [b, 'Hello from the other organisation.']] as const) {
    const response = await server.post('/tts/bytes', ttsBody({ transcript }), org.auth);
    assert.equal(response.status, 200);
    await response.arrayBuffer();
  }
  // Admitted, then the engine fails before any audio: no charge, one failed request.
  upstream.script = ['status-500', 'status-500'];
  const failed = await server.post('/tts/bytes', ttsBody({ model_id: 'remote' }), a.auth);
  assert.equal(failed.status, 502);
  await failed.arrayBuffer();
});
after(async () => {
  await server?.close();
  await upstream?.close();
});

describe('usage reports', { timeout: 60_000 }, () => {
  test('admin summary by org and model: the ledger summed, failed requests counted', async () => {
    const store = server.app.services.accounts!.store;
    const q = `from=${encodeURIComponent(from)}&group_by=org,model`;
    assert.ok(await eventually(async () => (await json(`/admin/usage/summary?${q}`)).data.some((r: Json) => r.failed_requests > 0), 5000), 'the failure is recorded');
    const body = await json(`/admin/usage/summary?${q}`);
    assert.equal(body.from, from);
    assert.deepEqual(body.group_by, ['org', 'model']);
    const mine = body.data.filter((r: Json) => r.org === a.orgId || r.org === b.orgId);
    for (const org of [a, b]) {
      const charges = (await store.ledger.list(org.orgId, { limit: 100 })).data.filter((e) => e.kind === 'charge');
      const rows = mine.filter((r: Json) => r.org === org.orgId && r.model === 'gepard-1.0');
      assert.deepEqual(rows, [
        {
          org: org.orgId,
          model: 'gepard-1.0',
          credits: charges.reduce((n, e) => n - e.credits, 0),
          characters: charges.reduce((n, e) => n + (e.characters ?? 0), 0),
          usd: String((charges.reduce((n, e) => n - e.credits, 0) * 50) / 1e6),
          requests: charges.length,
          failed_requests: 0,
        },
      ]);
    }
    assert.deepEqual(
      mine.filter((r: Json) => r.model === 'remote'),
      [{ org: a.orgId, model: 'remote', credits: 0, characters: 0, usd: '0', requests: 0, failed_requests: 1 }],
    );
    // One organisation, by the admin's filter.
    const onlyB = await json(`/admin/usage/summary?${q}&org=${b.orgId}`);
    assert.deepEqual(onlyB.data.map((r: Json) => r.org), [b.orgId]);
  });

  test('an organisation’s own summary holds only its own data', async () => {
    const body = await json(`/usage/summary?group_by=org&group_by=key,day`, a.auth);
    assert.ok(body.data.length > 0);
    assert.ok(body.data.every((r: Json) => r.org === a.orgId), JSON.stringify(body.data));
    assert.ok(body.data.every((r: Json) => r.key === a.keyId));
    assert.match(body.data[0].day, /^\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/);
    // The default range: from the start of this UTC month until now.
    const now = new Date();
    assert.equal(body.from, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString());
    const refused = await get(`/usage/summary?org=${b.orgId}`, a.auth);
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as Json).error_code, 'invalid_request');
    assert.equal((await get('/usage/summary', {})).status, 401);
    assert.equal((await get('/admin/usage/summary', a.auth)).status, 401);
  });

  test('CSV export: a header, one quoted line per ledger row, summing to the summary per organisation', async () => {
    const to = new Date().toISOString();
    const response = await get(`/admin/usage/export?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&format=csv`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.match(response.headers.get('content-disposition') ?? '', /^attachment; filename="voicegate-usage-\d{8}T\d{6}(\.\d{3})?Z-\d{8}T\d{6}(\.\d{3})?Z\.csv"$/);
    const [header, ...lines] = parseCsv(await response.text());
    assert.deepEqual(header, ['id', 'created_at', 'org_id', 'key_id', 'kind', 'endpoint', 'model', 'characters', 'credits', 'usd', 'request_id', 'charge_key', 'client_request_id', 'reason']);
    const rows = lines.map((line) => Object.fromEntries(header.map((h, i) => [h, line[i]])));
    const ours = rows.filter((r) => r.org_id === a.orgId || r.org_id === b.orgId);
    // Starting credits (2), the added credits, and three charges.
    assert.deepEqual(ours.map((r) => r.kind).sort(), ['charge', 'charge', 'charge', 'credit', 'credit', 'credit']);
    assert.ok(ours.some((r) => r.reason === 'a "quoted", reason\nover two lines'));
    assert.equal(new Set(rows.map((r) => r.id)).size, rows.length);
    const summary = await json(`/admin/usage/summary?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&group_by=org`);
    for (const org of [a, b]) {
      const charged = ours.filter((r) => r.org_id === org.orgId && r.kind === 'charge').reduce((n, r) => n - Number(r.credits), 0);
      assert.equal(charged, summary.data.find((r: Json) => r.org === org.orgId).credits);
    }
  });

  test('JSON Lines export of one organisation', async () => {
    const response = await get(`/admin/usage/export?from=${encodeURIComponent(from)}&format=jsonl&org=${a.orgId}`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/x-ndjson');
    assert.match(response.headers.get('content-disposition') ?? '', new RegExp(`-${a.orgId}\\.jsonl"$`));
    const text = await response.text();
    assert.ok(text.endsWith('\n'));
    const rows = text.trimEnd().split('\n').map((line) => JSON.parse(line) as Json);
    assert.ok(rows.every((r) => r.org_id === a.orgId));
    const charge = rows.find((r) => r.kind === 'charge')!;
    assert.deepEqual(Object.keys(charge), ['id', 'created_at', 'org_id', 'key_id', 'kind', 'endpoint', 'model', 'characters', 'credits', 'usd', 'request_id', 'charge_key', 'client_request_id', 'reason']);
    assert.equal(typeof charge.id, 'string');
    assert.ok(charge.credits < 0, 'a charge is negative, as in the ledger');
    assert.equal(charge.usd, String((charge.credits * 50) / 1e6));
    assert.equal(charge.key_id, a.keyId);
  });

  test('bad input is refused with the reason', async () => {
    for (const [path, reason] of [
      ['/admin/usage/summary?from=yesterday', /from must be an ISO 8601/],
      ['/admin/usage/summary?to=2026-13-45', /to is not a valid time/],
      ['/admin/usage/summary?from=2026-12-01T10:00:00', /from must be an ISO 8601/],
      ['/admin/usage/summary?from=2026-12-02&to=2026-12-01', /from must be before to/],
      ['/admin/usage/summary?from=2026-12-01&to=2026-12-01', /from must be before to/],
      ['/admin/usage/summary?group_by=day,week', /group_by takes day, hour, model, endpoint, key, org.*"week"/],
      ['/admin/usage/export?format=xml', /format must be csv or jsonl/],
      ['/admin/usage/export?from=2026-01-01&from=2026-02-01', /from may be given once/],
    ] as const) {
      const response = await get(path);
      assert.equal(response.status, 400, path);
      const body = (await response.json()) as Json;
      assert.equal(body.error_code, 'invalid_request', path);
      assert.match(body.message, reason, path);
    }
    const unknown = await get('/admin/usage/summary?org=org_nobody');
    assert.equal(unknown.status, 404);
  });
});
