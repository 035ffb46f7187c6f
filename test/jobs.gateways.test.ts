/**
 * Long-form jobs across gateways as a deployment runs them: real processes
 * on one PostgreSQL schema and one shared jobs folder. A gateway killed with
 * SIGKILL mid-job leaves its lease to lapse and a second gateway resumes the
 * job at its first unpersisted segment — the segments made before are not
 * made again, counted through the second gateway's segment metric — and the
 * job is still charged once. Two gateways polling one queue never make a
 * segment twice.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import type { Store } from '../src/store/store.js';
import type { JobSpec } from '../src/jobs/plan.js';
import { adminOrg, startGateway, TONE_MODELS, type Gateway } from './helpers/gateways.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';
import { eventually } from './helpers/redis.js';

const ADMIN_TOKEN = 'jobs-gateways-admin-token-0123456789';
const schema = freshSchemaName();
const jobsDir = mkdtempSync(join(tmpdir(), 'voicegate-jobs-shared-'));
const gateways: Gateway[] = [];
let store: Store;

const config = (jobs: Record<string, unknown>) => ({
  ...TONE_MODELS,
  store: { databaseUrl: TEST_DATABASE_URL, schema, poolSize: 4 },
  accounts: { enabled: true, adminToken: ADMIN_TOKEN, startingCredits: 0 },
  metrics: { enabled: true, public: true },
  jobs: { dir: jobsDir, segmentCharacters: 100, leaseMs: 1500, heartbeatMs: 300, pollMs: 100, ...jobs },
});

const WORDS = ['river', 'stone', 'garden', 'window', 'silver', 'morning', 'quiet', 'harbour', 'lantern', 'meadow'];
function prose(characters: number, seed = 0): string {
  let text = '';
  for (let i = 0; text.length < characters; i++) text += `The ${WORDS[(i + seed) % 10]} and the ${WORDS[(i * 7 + 3 + seed) % 10]} rest. `;
  return text.slice(0, characters).trim();
}

async function segmentsMade(gateway: Gateway): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('voicegate_job_segments_total '));
  return line ? Number(line.split(' ')[1]) : 0;
}

async function job(gateway: Gateway, auth: Record<string, string>, id: string): Promise<any> {
  return (await fetch(`${gateway.url}/tts/jobs/${id}`, { headers: auth })).json();
}

const body = (transcript: string) => ({
  model_id: 'gepard-1.0',
  voice: { mode: 'id', id: 'sarah' },
  output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 8000 },
  transcript,
});

before(async () => {
  store = await openPostgresStore({ url: TEST_DATABASE_URL, schema, poolSize: 2, timeoutMs: 5000 });
});

after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await store?.close();
  await dropSchema(schema);
  rmSync(jobsDir, { recursive: true, force: true });
});

test('kill -9 of the gateway running a job: a second gateway resumes it where it stopped, and it is charged once', { timeout: 120_000 }, async () => {
  const first = await startGateway(config({}));
  gateways.push(first);
  const org = await adminOrg(first, ADMIN_TOKEN, { credits: 1_000_000 });
  const text = prose(60_000);
  const submitted = await fetch(`${first.url}/tts/jobs`, { method: 'POST', headers: { ...org.auth, 'content-type': 'application/json' }, body: JSON.stringify(body(text)) });
  assert.equal(submitted.status, 202, await submitted.clone().text());
  const { id, progress } = (await submitted.json()) as { id: string; progress: { segments_total: number } };
  const total = progress.segments_total;
  assert.ok(total >= 500, `segments: ${total}`);

  // Killed a good way in, well before the end.
  assert.ok(await eventually(async () => (await store.jobs.get(id))!.segmentsDone >= 60, 60_000, 10), 'the first gateway made progress');
  first.process.kill('SIGKILL');
  await first.exited;
  const atKill = (await store.jobs.get(id))!;
  assert.equal(atKill.status, 'running');
  assert.ok(atKill.segmentsDone < total, `the job was still running at the kill (${atKill.segmentsDone}/${total})`);
  assert.equal(atKill.billing, 'held');

  const second = await startGateway(config({}));
  gateways.push(second);
  assert.ok(await eventually(async () => (await job(second, org.auth, id)).status === 'succeeded', 90_000, 50), JSON.stringify(await job(second, org.auth, id)));
  const done = await store.jobs.get(id);
  assert.equal(done!.attempts, 2, 'claimed twice: once by each gateway');
  // The second gateway made exactly the segments not persisted before the kill.
  assert.equal(await segmentsMade(second), total - atKill.segmentsDone);

  const audio = Buffer.from(await (await fetch(`${second.url}/tts/jobs/${id}/audio`, { headers: org.auth })).arrayBuffer());
  const seconds = (audio.length - 44) / 2 / 8000;
  const spoken = (done!.spec as JobSpec).segments.reduce((sum, s) => sum + s.text.length, 0) * 0.01;
  assert.ok(Math.abs(seconds - spoken) < spoken * 0.01, `result ${seconds} s, text speaks ${spoken} s: no segment lost or doubled`);

  // The charge is written just after the end is recorded.
  assert.ok(await eventually(async () => (await store.jobs.get(id))!.billing === 'charged', 10_000, 20));
  const charges = (await store.ledger.list(org.orgId, { limit: 100 })).data.filter((row) => row.kind === 'charge');
  assert.equal(charges.length, 1);
  assert.equal(charges[0].chargeKey, id);
  assert.equal(charges[0].credits, -60_000);
  assert.equal(await store.ledger.sum(org.orgId), 1_000_000 - 60_000);
  // Only the two gateways of the next test poll the queue.
  await second.stop();
});

test('two gateways polling one queue never make a segment twice', { timeout: 120_000 }, async () => {
  const pair = await Promise.all([startGateway(config({ concurrency: 2 })), startGateway(config({ concurrency: 2 }))]);
  gateways.push(...pair);
  const org = await adminOrg(pair[0], ADMIN_TOKEN, { credits: 1_000_000 });
  const before = await Promise.all(pair.map(segmentsMade));
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const response = await fetch(`${pair[i % 2].url}/tts/jobs`, { method: 'POST', headers: { ...org.auth, 'content-type': 'application/json' }, body: JSON.stringify(body(prose(4_000, i))) });
    assert.equal(response.status, 202);
    ids.push(((await response.json()) as { id: string }).id);
  }
  assert.ok(await eventually(async () => (await Promise.all(ids.map((id) => store.jobs.get(id)))).every((j) => j!.billing === 'charged'), 90_000, 50));
  const jobs = await Promise.all(ids.map((id) => store.jobs.get(id)));
  const total = jobs.reduce((sum, j) => sum + j!.segmentsTotal, 0);
  const made = (await Promise.all(pair.map(segmentsMade))).map((count, i) => count - before[i]);
  assert.equal(made[0] + made[1], total, `segments made ${made.join(' + ')} for ${total} in the jobs; attempts ${jobs.map((j) => j!.attempts)}; ${pair.map((g) => JSON.stringify(g.warnings.slice(0, 3)))}`);
  for (const j of jobs) assert.equal(j!.attempts, 1);
  const charges = (await store.ledger.list(org.orgId, { limit: 100 })).data.filter((row) => row.kind === 'charge');
  assert.deepEqual(charges.map((row) => row.chargeKey).sort(), [...ids].sort());
});
