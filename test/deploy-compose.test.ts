/**
 * @module test/deploy-compose
 * compose.yaml run for real with podman-compose, as a user runs it: two
 * gateways (the image built from the Dockerfile) behind the HAProxy entry
 * point, PostgreSQL and Redis (stand-ins built from Debian's packages under
 * the file's image variables; test/deploy/stand-ins). Speech goes through
 * the entry point from both gateways; one gateway is stopped while requests
 * keep coming, and every request is still served; the ledger holds exactly
 * one charge per request, of its characters, and the balance matches. The
 * file is also rendered and validated with docker-compose's `config`, and
 * its `s3` profile (an S3-compatible server for long-form jobs) is read and
 * held to what `.env.example` tells a user to set.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parse } from 'yaml';
import { decodeToFloat, rms } from '../src/audio/decode.js';
import { loadConfig } from '../src/config/load.js';
import { buildImage, buildStandIn, containersUnavailable, IMAGE, podman, REPO, run, runName, until } from './helpers/containers.js';
import { ttsBody } from './helpers/server.js';
import { closedPort } from './helpers/redis.js';

const skip = containersUnavailable(['podman', 'runc', 'podman-compose']);
const project = runName('vgcompose');
const admin = randomBytes(16).toString('hex');
let env: Record<string, string>;
let url: string;

const compose = (args: string[], timeoutMs = 300_000) => run('podman-compose', ['-p', project, '-f', join(REPO, 'compose.yaml'), ...args], { env, timeoutMs });

before(async () => {
  if (skip) return;
  await buildImage();
  const [postgres, redis, haproxy] = [await buildStandIn('postgres'), await buildStandIn('redis'), await buildStandIn('haproxy')];
  const port = await closedPort();
  url = `http://127.0.0.1:${port}`;
  // What a user's .env holds, and the file's image variables pointing at what this machine can build.
  env = {
    POSTGRES_PASSWORD: randomBytes(12).toString('hex'),
    REDIS_PASSWORD: randomBytes(12).toString('hex'),
    VOICEGATE_TOKEN_SECRET: randomBytes(24).toString('hex'),
    VOICEGATE_WEBHOOK_SECRET: randomBytes(24).toString('hex'),
    VOICEGATE_ADMIN_TOKEN: admin,
    VOICEGATE_GATEWAYS: '2',
    VOICEGATE_PUBLISH: `127.0.0.1:${port}`,
    VOICEGATE_IMAGE: IMAGE,
    POSTGRES_IMAGE: postgres,
    REDIS_IMAGE: redis,
    HAPROXY_IMAGE: haproxy,
  };
  const up = await compose(['up', '-d', '--no-build', 'postgres', 'redis', 'gateway', 'lb']);
  assert.equal(up.code, 0, `podman-compose up:\n${up.stdout.slice(-3000)}\n${up.stderr.slice(-3000)}`);
}, { timeout: 1_800_000 });

after(async () => {
  if (skip || process.env.KEEP_COMPOSE) return;
  const down = await compose(['down', '-v', '-t', '5'], 180_000);
  if (down.code !== 0) console.log(`podman-compose down: ${down.stderr.slice(-2000)}`);
  // Whatever down left (volumes of a run that failed half-way).
  const left = await run('podman', ['volume', 'ls', '-q', '--filter', `label=io.podman.compose.project=${project}`]);
  if (left.stdout.trim()) await run('podman', ['volume', 'rm', '-f', ...left.stdout.trim().split('\n')]);
  await run('podman', ['network', 'rm', '-f', `${project}_default`]);
});

const gateways = () => [1, 2].map((n) => `${project}_gateway_${n}`);

/** A POST that a 503 `store_unavailable` (nothing done, Retry-After) is retried for, up to three times: see `say` below. */
async function postRetried(path: string, headers: Record<string, string>, body: unknown): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (response.status !== 503 || attempt === 3 || !(await response.clone().text()).includes('store_unavailable')) return response;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

async function adminOrg(credits: number): Promise<{ orgId: string; key: string }> {
  const headers = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' };
  const created = await postRetried('/admin/orgs', headers, { name: 'compose', credits, limits: { max_concurrent: null, rate_limit: null } });
  assert.equal(created.status, 201, await created.clone().text());
  const { id } = (await created.json()) as { id: string };
  const issued = await postRetried(`/admin/orgs/${id}/keys`, headers, { name: 'compose' });
  const { key } = (await issued.json()) as { key: string };
  return { orgId: id, key };
}

test('compose.yaml renders and validates with docker-compose config', { skip: skip ?? (!process.env.PATH?.split(':').some((d) => existsSync(join(d, 'docker-compose'))) && !process.env.CI ? 'docker-compose not installed' : false), timeout: 60_000 }, async () => {
  const rendered = await run('docker-compose', ['-f', join(REPO, 'compose.yaml'), 'config'], { env: { ...env, COMPOSE_PROFILES: 'gpu,s3,tracing', VOICEGATE_CONFIG: '/etc/voicegate/gpu.json', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' } });
  assert.equal(rendered.code, 0, rendered.stderr);
  assert.match(rendered.stdout, /condition: service_healthy/);
  assert.match(rendered.stdout, /replicas: 2/);
  assert.match(rendered.stdout, /kokoro/);
  assert.match(rendered.stdout, /s3-bucket/);
  assert.match(rendered.stdout, /jaegertracing/);
  assert.match(rendered.stdout, /OTEL_EXPORTER_OTLP_ENDPOINT: http:\/\/jaeger:4318/);
  const missing = await run('docker-compose', ['-f', join(REPO, 'compose.yaml'), 'config'], { env: { ...env, POSTGRES_PASSWORD: '' } });
  assert.notEqual(missing.code, 0, 'a missing password is refused');
  assert.match(missing.stderr, /POSTGRES_PASSWORD/);
});

test('the s3 profile: an S3-compatible server, its bucket made, and the gateways reaching it through .env alone', async () => {
  const file = parse(readFileSync(join(REPO, 'compose.yaml'), 'utf8')) as { services: Record<string, any>; volumes: Record<string, unknown> };
  const { s3, 's3-bucket': bucket, gateway } = file.services;
  assert.deepEqual([s3.profiles, bucket.profiles], [['s3'], ['s3']], 'off unless the profile is asked for');
  assert.ok(s3.healthcheck && bucket.depends_on.s3.condition === 'service_healthy', 'the bucket is made once the server is ready');
  assert.ok(s3.volumes.some((volume: string) => volume.startsWith('s3-data:')) && 's3-data' in file.volumes);
  assert.ok(!('depends_on' in gateway && 's3' in gateway.depends_on), 'the gateways start without the profile');
  // The storage and the SDK's standard variables are passed on when set, and left unset otherwise (no
  // value in the file: podman-compose 1.0 leaves an empty default, `${X:-}`, as the literal text).
  for (const name of ['VOICEGATE_STORAGE_URL', 'VOICEGATE_STORAGE_FORCE_PATH_STYLE', 'AWS_ENDPOINT_URL_S3', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'OTEL_EXPORTER_OTLP_ENDPOINT']) {
    assert.ok(name in gateway.environment && gateway.environment[name] === null, name);
  }
  assert.doesNotMatch(readFileSync(join(REPO, 'compose.yaml'), 'utf8'), /\$\{[A-Z_0-9]+:-\}/, 'no empty default');
  // .env.example's s3 lines load as a gateway reads them: jobs on the bundled server's bucket.
  const example = readFileSync(join(REPO, '.env.example'), 'utf8');
  const lines = Object.fromEntries([...example.matchAll(/^# ((?:VOICEGATE_STORAGE|AWS)_[A-Z_0-9]+)=(.*)$/gm)].map((match) => [match[1], match[2]]));
  const config = loadConfig({ env: lines });
  assert.deepEqual([config.storage.kind, config.storage.bucket, config.storage.forcePathStyle], ['s3', bucket.environment.S3_BUCKET.replace(/^\$\{S3_BUCKET:-(.*)\}$/, '$1'), true]);
  assert.equal(new URL(lines.AWS_ENDPOINT_URL_S3).hostname, 's3', 'the endpoint is the s3 service');
});

test('speech through the entry point from every gateway; one gateway stopped, every request still served; the ledger exact', { skip: skip ?? false, timeout: 600_000 }, async () => {
  await until(async () => (await fetch(`${url}/readyz`)).status === 200, 240_000, 'the entry point ready');
  for (const name of gateways()) {
    await until(async () => (await run('podman', ['exec', name, 'voicegate', 'healthcheck'])).code === 0 || null, 120_000, `${name} ready`);
  }
  const org = await adminOrg(1_000_000);
  const auth = { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' };
  // A 503 whose error is store_unavailable charges nothing and says Retry-After: a client retries it,
  // and so does this one, up to three times. On these hosts podman's DNS (aardvark-dns 1.4) at times stalls a
  // lookup for seconds, which a gateway opening a database connection meets as store_unavailable.
  // Any other failure, a connection cut by a gateway that leaves above all, fails the test.
  let retried = 0;
  const say = async (transcript: string): Promise<{ status: number; bytes: Buffer; credits: number }> => {
    for (let attempt = 0; ; attempt++) {
      const response = await fetch(`${url}/tts/bytes`, { method: 'POST', headers: auth, body: JSON.stringify(ttsBody({ transcript })) });
      const bytes = Buffer.from(await response.arrayBuffer());
      if (response.status === 503 && attempt < 3 && /"error_code":"store_unavailable"/.test(bytes.toString('utf8'))) {
        retried++;
        await new Promise((r) => setTimeout(r, 1000 * Number(response.headers.get('retry-after') ?? 1)));
        continue;
      }
      if (response.status !== 200) console.log(`${transcript}: ${response.status} ${bytes.toString('utf8').slice(0, 300)}`);
      return { status: response.status, bytes, credits: Number(response.headers.get('x-request-credits')) };
    }
  };

  const first = await say('Hello through the entry point.');
  assert.equal(first.status, 200);
  const audio = await decodeToFloat(first.bytes, { container: 'wav', encoding: 'pcm_s16le', sampleRate: 22050 });
  assert.ok(rms(audio.samples) > 0.01, 'speech, not silence');

  // Both gateways take requests: each has a synthesis in its own metrics. A gateway still starting
  // (a loaded machine) joins once HAProxy's check sees it ready, so requests go on, bounded, until both have.
  const sent: string[] = ['Hello through the entry point.'];
  const results: { status: number; credits: number }[] = [first];
  const servedBy = () =>
    Promise.all(
      gateways().map(async (name) => {
        const metrics = await run('podman', ['exec', name, 'node', '-e', "fetch('http://127.0.0.1:9464/metrics').then(r=>r.text()).then(t=>console.log(t))"]);
        return /^voicegate_requests_total\{[^}]*status="200"[^}]*\} [1-9]/m.test(metrics.stdout);
      }),
    );
  let served: boolean[] = [false, false];
  const deadline = performance.now() + 90_000;
  for (let i = 0; !served.every(Boolean) && performance.now() < deadline; i++) {
    const text = `Request number ${i} goes to whichever gateway is free.`;
    sent.push(text);
    results.push(await say(text));
    if (i % 4 === 3) served = await servedBy();
  }
  assert.deepEqual(served, [true, true], 'both gateways served speech');

  // Stop one gateway (SIGTERM: it drains) while requests keep coming.
  const stopping = run('podman', ['stop', '-t', '30', gateways()[0]], { timeoutMs: 60_000 });
  const during: Promise<{ status: number; credits: number }>[] = [];
  const started = Date.now();
  while (Date.now() - started < 6000) {
    const text = `Served while a gateway leaves, ${during.length}.`;
    sent.push(text);
    during.push(say(text));
    await new Promise((r) => setTimeout(r, 150));
  }
  results.push(...(await Promise.all(during)));
  const stop = await stopping;
  assert.equal(stop.code, 0, stop.stderr);
  const exit = await podman(['inspect', gateways()[0], '--format', '{{.State.ExitCode}}']);
  assert.equal(exit, '0', 'the stopped gateway drained and exited 0');
  for (let i = 0; i < 4; i++) {
    const text = `After the stop, ${i}.`;
    sent.push(text);
    results.push(await say(text));
  }
  assert.deepEqual(results.map((r) => r.status), results.map(() => 200), 'every request served');
  if (retried) console.log(`requests retried after 503 store_unavailable: ${retried} of ${sent.length}`);

  // The ledger: exactly one charge per request, of its characters; the balance matches.
  const expected = sent.reduce((sum, text) => sum + [...text].length, 0);
  assert.equal(results.reduce((sum, r) => sum + r.credits, 0), expected, 'the cost headers add up to the characters sent');
  const usage = await until(async () => {
    const response = await fetch(`${url}/usage?limit=100`, { headers: auth });
    const body = (await response.json()) as { data: { kind: string; credits: number }[] };
    const charges = body.data.filter((e) => e.kind === 'charge');
    return charges.length === sent.length ? body : null;
  }, 15_000, 'every charge in the ledger');
  const charges = usage.data.filter((e) => e.kind === 'charge');
  assert.equal(charges.reduce((sum, e) => sum + Math.abs(e.credits), 0), expected);
  const after = (await (await fetch(`${url}/usage?limit=1`, { headers: auth })).json()) as { org: { balance: { credits: number } } };
  assert.equal(after.org.balance.credits, 1_000_000 - expected);
});
