/**
 * Long-form jobs on an S3-compatible bucket (s3rver in a process of its own,
 * through the real AWS SDK): two servers sharing only the bucket and
 * PostgreSQL, one streaming downloads and one redirecting them to presigned
 * URLs. A 50,000-character job is stored in the bucket and downloaded whole
 * and by range; the presigned redirect serves the same bytes; the bucket
 * stopped mid-job pauses the run (a metric says so) and, started again, the
 * job resumes with every segment made once and one charge; retention removes
 * the objects.
 */
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { after, before, describe, test } from 'node:test';
import { jobDiagnostics, type JobSegmentMade } from '../src/jobs/diagnostics.js';
import { parseWav } from '../src/audio/wav.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';
import { eventually } from './helpers/redis.js';
import { startS3, type S3Server } from './helpers/s3.js';
import { startServer, type TestServer } from './helpers/server.js';

const T = { timeout: 180_000 };
const WORDS = ['river', 'stone', 'garden', 'window', 'silver', 'morning', 'quiet', 'harbour', 'lantern', 'meadow'];
const ADMIN_TOKEN = 'jobs-s3-admin-token-0123456789abcdef';

/** Exactly `characters` characters of plain sentences (no numbers: the normaliser leaves them as they are). */
function prose(characters: number, seed = 0): string {
  let text = '';
  for (let i = 0; text.length < characters + 1; i++) text += `The ${WORDS[(i + seed) % 10]} and the ${WORDS[(i * 7 + 3 + seed) % 10]} rest. `;
  return `${text.slice(0, characters - 1).trimEnd()}.`.padEnd(characters, '.');
}

async function metric(server: TestServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

describe('long-form jobs on S3-compatible storage', () => {
  const schema = freshSchemaName();
  const prefix = 'voicegate/jobs';
  let s3: S3Server;
  let streaming: TestServer;
  let redirecting: TestServer;
  let org: TestOrg;

  const config = (download: 'stream' | 'redirect') => ({
    store: { databaseUrl: TEST_DATABASE_URL, schema, poolSize: 4 },
    accounts: { enabled: true, adminToken: ADMIN_TOKEN },
    metrics: { enabled: true, public: true },
    engines: { tone8k: { type: 'tone', sampleRate: 8000, secondsPerChar: 0.01, chunkSeconds: 0.5 } } as never,
    models: { 'tone-jobs': { extends: 'omnivoice', engine: 'tone8k' } },
    storage: { kind: 's3' as const, bucket: s3.bucket, prefix, region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true },
    jobs: { pollMs: 50, heartbeatMs: 300, leaseMs: 3000, retentionHours: 1, storageRetryMaxMs: 400, download, downloadUrlSeconds: 120 },
  });
  const body = (transcript: string) => ({
    model_id: 'tone-jobs',
    voice: { mode: 'id', id: 'sarah' },
    output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 8000 },
    transcript,
  });
  const submit = async (server: TestServer, transcript: string) => {
    const response = await server.post('/tts/jobs', body(transcript), org.auth);
    assert.equal(response.status, 202, await response.clone().text());
    return ((await response.json()) as { id: string }).id;
  };
  const job = async (id: string) => (await fetch(`${streaming.url}/tts/jobs/${id}`, { headers: org.auth })).json() as Promise<any>;
  const finished = async (id: string, withinMs = 120_000) => {
    assert.ok(await eventually(async () => ['succeeded', 'failed'].includes((await job(id)).status), withinMs, 50), JSON.stringify(await job(id)));
    const done = await job(id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
    return done;
  };
  const charges = async () => (await streaming.app.services.store.ledger.list(org.orgId, { limit: 100 })).data.filter((row) => row.kind === 'charge');

  before(async () => {
    s3 = await startS3();
    streaming = await startServer({ config: config('stream') });
    redirecting = await startServer({ config: config('redirect') });
    org = await newOrg(streaming, { credits: 10_000_000 });
  }, T);
  after(async () => {
    await Promise.all([streaming?.close(), redirecting?.close()]);
    await s3?.dispose();
    await dropSchema(schema);
  });

  test('a 50,000-character job is stored in the bucket and downloaded whole and by range; a presigned redirect serves the same bytes', T, async () => {
    const id = await submit(streaming, prose(50_000));
    const done = await finished(id);
    // Only the result and its word timings are left in the bucket: the segments go once it is whole (just after the end is recorded).
    assert.ok(await eventually(async () => (await s3.keys(`${prefix}/${id}`)).join() === `${prefix}/${id}/result,${prefix}/${id}/timestamps.json`, 20_000, 50), (await s3.keys(`${prefix}/${id}`)).slice(0, 3).join());
    const url = `${streaming.url}/tts/jobs/${id}/audio`;
    const whole = Buffer.from(await (await fetch(url, { headers: org.auth })).arrayBuffer());
    assert.equal(whole.length, done.result.bytes);
    assert.ok(whole.length > 5 * 1024 * 1024, 'larger than a part: written by a multipart upload');
    const wav = parseWav(whole);
    const seconds = wav.data.length / 2 / 8000;
    assert.ok(Math.abs(seconds - done.result.duration_seconds) < 0.001);
    assert.ok(Math.abs(seconds - 500) < 5, `duration ${seconds} s`);

    const start = 5 * 1024 * 1024 - 100;
    const part = await fetch(url, { headers: { ...org.auth, range: `bytes=${start}-${start + 999}` } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), `bytes ${start}-${start + 999}/${whole.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), whole.subarray(start, start + 1000));
    const tail = await fetch(url, { headers: { ...org.auth, range: 'bytes=-10' } });
    assert.deepEqual(Buffer.from(await tail.arrayBuffer()), whole.subarray(-10));
    const beyond = await fetch(url, { headers: { ...org.auth, range: `bytes=${whole.length}-` } });
    assert.equal(beyond.status, 416);
    assert.equal(beyond.headers.get('content-range'), `bytes */${whole.length}`);

    // The other server redirects to the bucket: a presigned URL for the same object.
    const redirected = await fetch(`${redirecting.url}/tts/jobs/${id}/audio`, { headers: org.auth, redirect: 'manual' });
    assert.equal(redirected.status, 302);
    assert.equal(redirected.headers.get('cache-control'), 'no-store');
    const location = redirected.headers.get('location')!;
    assert.ok(location.startsWith(`${s3.endpoint}/${s3.bucket}/${prefix}/${id}/result?`), location);
    assert.match(location, /X-Amz-Expires=120&/);
    const fromBucket = await fetch(location);
    assert.equal(fromBucket.headers.get('content-type'), 'audio/wav');
    assert.ok(Buffer.from(await fromBucket.arrayBuffer()).equals(whole), 'the presigned URL serves the same bytes');
    const followed = await fetch(`${redirecting.url}/tts/jobs/${id}/audio`, { headers: { ...org.auth, range: `bytes=${start}-${start + 999}` } });
    assert.equal(followed.status, 206);
    assert.deepEqual(Buffer.from(await followed.arrayBuffer()), whole.subarray(start, start + 1000));

    assert.equal(done.characters, 50_000);
    assert.ok(await eventually(async () => (await charges()).some((row) => row.chargeKey === id), 10_000, 20));
    assert.deepEqual((await charges()).filter((row) => row.chargeKey === id).map((row) => row.credits), [-50_000]);
  });

  test('the bucket stopped mid-job pauses the run; started again, the job resumes with every segment made once and one charge', T, async () => {
    const made: number[] = [];
    let stopping: Promise<void> | null = null;
    let id = '';
    const listener = (message: unknown) => {
      const event = message as JobSegmentMade;
      if (event.jobId !== id) return;
      made.push(event.index);
      if (event.index === 5) stopping = s3.stop();
    };
    subscribe(jobDiagnostics.segment.name as string, listener);
    try {
      // One server runs it; the other only serves.
      await redirecting.app.services.jobs!.runner.stop();
      id = await submit(streaming, prose(30_000, 3));
      assert.ok(await eventually(() => stopping !== null, 60_000, 10), 'segments were made');
      await stopping;
      // The run waits on the bucket, its job still running and held, not failed.
      assert.ok(await eventually(async () => (await metric(streaming, 'voicegate_jobs_waiting_for_storage')) === 1, 30_000, 50), 'the run is paused on the bucket');
      assert.ok((await metric(streaming, 'voicegate_job_storage_failures_total')) >= 1);
      const paused = await streaming.app.services.store.jobs.get(id);
      assert.equal(paused!.status, 'running');
      assert.equal(paused!.billing, 'held');
      assert.ok(paused!.segmentsDone < paused!.segmentsTotal, `paused at ${paused!.segmentsDone}/${paused!.segmentsTotal}`);
      // A download meanwhile is a clear 503, not a 500.
      const earlier = (await streaming.app.services.store.jobs.list(org.orgId, { limit: 10 })).data.find((j) => j.status === 'succeeded');
      if (earlier) {
        const unavailable = await fetch(`${streaming.url}/tts/jobs/${earlier.id}/audio`, { headers: org.auth });
        assert.equal(unavailable.status, 503);
        assert.equal(((await unavailable.json()) as { error_code: string }).error_code, 'storage_unavailable');
        assert.ok(unavailable.headers.get('retry-after'));
      }

      await s3.start();
      const done = await finished(id);
      assert.equal(await metric(streaming, 'voicegate_jobs_waiting_for_storage'), 0);
      assert.deepEqual(
        made,
        Array.from({ length: done.progress.segments_total }, (_, i) => i),
        'each segment made once, in order: none lost to the outage, none made again',
      );
      const audio = parseWav(Buffer.from(await (await fetch(`${streaming.url}/tts/jobs/${id}/audio`, { headers: org.auth })).arrayBuffer()));
      assert.ok(Math.abs(audio.data.length / 2 / 8000 - 300) < 3, `duration ${audio.data.length / 2 / 8000} s`);
      assert.ok(await eventually(async () => (await streaming.app.services.store.jobs.get(id))!.billing === 'charged', 10_000, 20));
      assert.deepEqual((await charges()).filter((row) => row.chargeKey === id).map((row) => row.credits), [-30_000]);
      assert.equal(await streaming.app.services.store.ledger.reserved(org.orgId), 0, 'no hold left');
    } finally {
      unsubscribe(jobDiagnostics.segment.name as string, listener);
      redirecting.app.services.jobs!.runner.start();
    }
  });

  test('retention removes an expired job with its objects', T, async () => {
    const id = await submit(streaming, 'A short job about the river and the stone.');
    await finished(id);
    assert.ok(await eventually(async () => (await s3.keys(`${prefix}/${id}`)).join() === `${prefix}/${id}/result,${prefix}/${id}/timestamps.json`, 20_000, 50));
    // Swept as if the retention period had passed; one of the two servers leads the sweep.
    const later = Date.now() + 2 * 3_600_000;
    await Promise.all([streaming, redirecting].map((server) => server.app.services.jobs!.runner.reconcile(later)));
    assert.deepEqual(await s3.keys(`${prefix}/${id}`), []);
    assert.equal((await fetch(`${streaming.url}/tts/jobs/${id}`, { headers: org.auth })).status, 404);
  });
});
