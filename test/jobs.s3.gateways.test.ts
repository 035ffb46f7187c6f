/**
 * Long-form jobs across gateways that share only an S3-compatible bucket
 * (s3rver, in a process of its own) and PostgreSQL, as real processes with
 * their credentials from the AWS SDK's environment variables. A gateway
 * killed with SIGKILL mid-job leaves no result object in the bucket; the
 * second gateway resumes the job at its first unpersisted segment, makes
 * exactly the segments not stored before, and the job is charged once with
 * audio of the right length.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import type { Store } from '../src/store/store.js';
import type { JobSpec } from '../src/jobs/plan.js';
import { adminOrg, startGateway, TONE_MODELS, type Gateway } from './helpers/gateways.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';
import { eventually } from './helpers/redis.js';
import { startS3, type S3Server } from './helpers/s3.js';

const ADMIN_TOKEN = 'jobs-s3-gateways-admin-token-0123456789';
const schema = freshSchemaName();
const prefix = 'shared';
const gateways: Gateway[] = [];
let store: Store;
let s3: S3Server;

// No jobs.dir: each gateway's own data directory would hold its files; the bucket is all they share.
const config = () => ({
  ...TONE_MODELS,
  store: { databaseUrl: TEST_DATABASE_URL, schema, poolSize: 4 },
  accounts: { enabled: true, adminToken: ADMIN_TOKEN, startingCredits: 0 },
  metrics: { enabled: true, public: true },
  storage: { url: `s3://${s3.bucket}/${prefix}`, endpoint: s3.endpoint, forcePathStyle: true },
  jobs: { segmentCharacters: 100, leaseMs: 1500, heartbeatMs: 300, pollMs: 100 },
});

const WORDS = ['river', 'stone', 'garden', 'window', 'silver', 'morning', 'quiet', 'harbour', 'lantern', 'meadow'];
function prose(characters: number): string {
  let text = '';
  for (let i = 0; text.length < characters; i++) text += `The ${WORDS[i % 10]} and the ${WORDS[(i * 7 + 3) % 10]} rest. `;
  return text.slice(0, characters).trim();
}

async function segmentsMade(gateway: Gateway): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('voicegate_job_segments_total '));
  return line ? Number(line.split(' ')[1]) : 0;
}

before(async () => {
  s3 = await startS3();
  store = await openPostgresStore({ url: TEST_DATABASE_URL, schema, poolSize: 2, timeoutMs: 5000 });
});

after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await store?.close();
  await dropSchema(schema);
  await s3?.dispose();
});

test('kill -9 of the gateway running a job on the bucket: the other resumes it, no partial result is ever visible, one charge', { timeout: 180_000 }, async () => {
  const first = await startGateway(config());
  gateways.push(first);
  const org = await adminOrg(first, ADMIN_TOKEN, { credits: 1_000_000 });
  const text = prose(60_000);
  const submitted = await fetch(`${first.url}/tts/jobs`, {
    method: 'POST',
    headers: { ...org.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ model_id: 'gepard-1.0', voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 8000 }, transcript: text }),
  });
  assert.equal(submitted.status, 202, await submitted.clone().text());
  const { id, progress } = (await submitted.json()) as { id: string; progress: { segments_total: number } };
  const total = progress.segments_total;
  assert.ok(total >= 500, `segments: ${total}`);

  assert.ok(await eventually(async () => (await store.jobs.get(id))!.segmentsDone >= 60, 60_000, 10), 'the first gateway made progress');
  first.process.kill('SIGKILL');
  await first.exited;
  const atKill = (await store.jobs.get(id))!;
  assert.equal(atKill.status, 'running');
  assert.ok(atKill.segmentsDone < total, `the job was still running at the kill (${atKill.segmentsDone}/${total})`);
  assert.equal(atKill.billing, 'held');
  const stored = await s3.keys(`${prefix}/${id}`);
  assert.ok(!stored.includes(`${prefix}/${id}/result`), 'no result object');
  // Every segment the row counts is in the bucket, whole (its audio object is its last put).
  const audioObjects = stored.filter((key) => key.endsWith('.pcm'));
  assert.ok(audioObjects.length >= atKill.segmentsDone, `${audioObjects.length} segment objects for ${atKill.segmentsDone} recorded`);

  const second = await startGateway(config());
  gateways.push(second);
  const read = async () => (await fetch(`${second.url}/tts/jobs/${id}`, { headers: org.auth })).json() as Promise<{ status: string }>;
  assert.ok(await eventually(async () => (await read()).status === 'succeeded', 120_000, 50), JSON.stringify(await read()));
  const done = await store.jobs.get(id);
  assert.equal(done!.attempts, 2, 'claimed twice: once by each gateway');
  assert.equal(await segmentsMade(second), total - atKill.segmentsDone, 'the second gateway made only the segments not stored before the kill');

  const audio = Buffer.from(await (await fetch(`${second.url}/tts/jobs/${id}/audio`, { headers: org.auth })).arrayBuffer());
  assert.equal(audio.length, done!.result!.bytes);
  const seconds = (audio.length - 44) / 2 / 8000;
  const spoken = (done!.spec as JobSpec).segments.reduce((sum, s) => sum + s.text.length, 0) * 0.01;
  assert.ok(Math.abs(seconds - spoken) < spoken * 0.01, `result ${seconds} s, text speaks ${spoken} s: no segment lost or doubled`);

  assert.ok(await eventually(async () => (await store.jobs.get(id))!.billing === 'charged', 10_000, 20));
  const charges = (await store.ledger.list(org.orgId, { limit: 100 })).data.filter((row) => row.kind === 'charge');
  assert.equal(charges.length, 1);
  assert.equal(charges[0].chargeKey, id);
  assert.equal(charges[0].credits, -60_000);
  assert.equal(await store.ledger.sum(org.orgId), 1_000_000 - 60_000);
  assert.ok(await eventually(async () => (await s3.keys(`${prefix}/${id}`)).join() === `${prefix}/${id}/result`, 20_000, 50), `the segments are removed once the result is whole: ${JSON.stringify(second.warnings.slice(-3))}`);
});
