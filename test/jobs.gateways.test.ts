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
import { adminOrg, startGateway, TONE_MODELS, type Gateway } from './helpers/gateways.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';
import { eventually } from './helpers/redis.js';
import { crashMidJob, prose, segmentsMade, toneJobBody } from './helpers/job-crash.js';

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
  await crashMidJob({
    store,
    adminToken: ADMIN_TOKEN,
    start: async () => {
      const gateway = await startGateway(config({}));
      gateways.push(gateway);
      return gateway;
    },
  });
});

test('two gateways polling one queue never make a segment twice', { timeout: 120_000 }, async () => {
  const pair = await Promise.all([startGateway(config({ concurrency: 2 })), startGateway(config({ concurrency: 2 }))]);
  gateways.push(...pair);
  const org = await adminOrg(pair[0], ADMIN_TOKEN, { credits: 1_000_000 });
  const before = await Promise.all(pair.map(segmentsMade));
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const response = await fetch(`${pair[i % 2].url}/tts/jobs`, { method: 'POST', headers: { ...org.auth, 'content-type': 'application/json' }, body: JSON.stringify(toneJobBody(prose(4_000, i))) });
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
