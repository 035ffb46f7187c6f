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
import { startGateway, TONE_MODELS, type Gateway } from './helpers/gateways.js';
import { crashMidJob } from './helpers/job-crash.js';
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
  await crashMidJob({
    store,
    adminToken: ADMIN_TOKEN,
    start: async () => {
      const gateway = await startGateway(config());
      gateways.push(gateway);
      return gateway;
    },
    atKill: async (id, segmentsDone) => {
      const stored = await s3.keys(`${prefix}/${id}`);
      assert.ok(!stored.includes(`${prefix}/${id}/result`), 'no result object');
      // Every segment the row counts is in the bucket, whole (its audio object is its last put).
      const audioObjects = stored.filter((key) => key.endsWith('.pcm'));
      assert.ok(audioObjects.length >= segmentsDone, `${audioObjects.length} segment objects for ${segmentsDone} recorded`);
    },
    atEnd: async (id) => {
      assert.ok(await eventually(async () => (await s3.keys(`${prefix}/${id}`)).join() === `${prefix}/${id}/result,${prefix}/${id}/timestamps.json`, 20_000, 50), 'the segments are removed once the result is whole');
    },
  });
});
