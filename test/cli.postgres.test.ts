/**
 * @module test/cli.postgres
 * The operator CLI works on PostgreSQL when `VOICEGATE_DATABASE_URL` is set:
 * `node dist/src/main.js orgs create …` and friends against a fresh schema,
 * checked through a store of its own, with nothing written to the data
 * directory.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const schema = freshSchemaName();
const dataDir = mkdtempSync(join(tmpdir(), 'voicegate-cli-pg-'));

after(async () => {
  await dropSchema(schema);
  rmSync(dataDir, { recursive: true, force: true });
});

async function cli(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [MAIN, ...args], {
    timeout: 15_000,
    env: { ...process.env, VOICEGATE_DATA_DIR: dataDir, VOICEGATE_LOG_LEVEL: 'silent', VOICEGATE_DATABASE_URL: TEST_DATABASE_URL, VOICEGATE_DATABASE_SCHEMA: schema },
  });
}

test('orgs create, keys create, credits add and balance run against PostgreSQL', { timeout: 60_000 }, async () => {
  const created = JSON.parse((await cli('orgs', 'create', '--name', 'Acme', '--credits', '250', '--max-concurrent', '3')).stdout) as { id: string; balance: { credits: number } };
  assert.match(created.id, /^org_[0-9a-f]{16}$/);
  assert.equal(created.balance.credits, 250);

  const issued = await cli('keys', 'create', '--org', created.id, '--name', 'ci');
  assert.match(issued.stdout.trim(), /^sk_[0-9a-f]{16}_/);
  await cli('credits', 'add', '--org', created.id, '--amount', '50', '--reason', 'top-up');
  assert.equal(JSON.parse((await cli('balance', '--org', created.id)).stdout).credits, 300);

  const store = await openPostgresStore({ url: TEST_DATABASE_URL, schema, poolSize: 1, timeoutMs: 5000 });
  try {
    const org = await store.orgs.get(created.id);
    assert.equal(org?.name, 'Acme');
    assert.equal(org?.balance, 300);
    assert.equal(org?.limits.maxConcurrent, 3);
    assert.equal(await store.ledger.sum(created.id), 300);
    assert.equal((await store.keys.list(created.id)).length, 1);
  } finally {
    await store.close();
  }
  assert.equal(existsSync(join(dataDir, 'voicegate.sqlite')), false, 'no SQLite file was made');
});

test('usage summary and usage export read the ledger of a range; usage --org still pages it', { timeout: 60_000 }, async () => {
  const org = JSON.parse((await cli('orgs', 'create', '--name', 'Usage', '--credits', '1000')).stdout) as { id: string };
  const store = await openPostgresStore({ url: TEST_DATABASE_URL, schema, poolSize: 1, timeoutMs: 5000 });
  const from = new Date().toISOString();
  try {
    for (const [credits, model, key] of [[12, 'sonic', 'r1/0'], [30, 'gepard-1.0', 'r2/0'], [5, 'sonic', 'r2/1']] as const) {
      await store.ledger.append({ orgId: org.id, kind: 'charge', credits: -credits, keyId: null, requestId: key.split('/')[0], chargeKey: `${org.id}-${key}`, clientRequestId: null, model, endpoint: 'tts.bytes', characters: credits, reason: null });
    }
  } finally {
    await store.close();
  }
  const to = new Date(Date.now() + 1).toISOString();
  const summary = JSON.parse((await cli('usage', 'summary', '--from', from, '--to', to, '--group-by', 'model', '--org', org.id)).stdout);
  assert.deepEqual(
    summary.data.map((r: Record<string, unknown>) => [r.model, r.credits, r.requests]),
    [['gepard-1.0', 30, 1], ['sonic', 17, 1]],
  );
  const output = join(dataDir, 'usage.csv');
  await cli('usage', 'export', '--from', from, '--to', to, '--org', org.id, '--output', output);
  const lines = readFileSync(output, 'utf8').trimEnd().split('\r\n');
  assert.equal(lines[0], 'id,created_at,org_id,key_id,kind,endpoint,model,characters,credits,usd,request_id,charge_key,client_request_id,reason');
  assert.deepEqual(lines.slice(1).map((l) => Number(l.split(',')[8])), [-12, -30, -5]);
  const jsonl = (await cli('usage', 'export', '--from', from, '--to', to, '--org', org.id, '--format', 'jsonl')).stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
  assert.equal(jsonl.reduce((n: number, r: { credits: number }) => n + r.credits, 0), -47);
  await assert.rejects(cli('usage', 'summary', '--group-by', 'week'), /group_by takes day, hour/);
  const page = JSON.parse((await cli('usage', '--org', org.id, '--limit', '2')).stdout);
  assert.equal(page.data.length, 2);
  assert.equal(page.has_more, true);
});
