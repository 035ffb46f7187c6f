/**
 * @module test/cli-say
 * `voicegate say` as a user runs it, in a child process: against a running
 * server with a key (long text split under the model's limit, billed, cost
 * printed), in-process from a file to MP3, a refusal leaving no file, and
 * Ctrl-C leaving no file unless `--keep-partial`. Then `--job`: a text as one
 * long-form job (billed once under the job's id), following a job by
 * `--job-id`, an unknown job, Ctrl-C leaving the job queued on the server
 * with the command that resumes it, `--cancel`, and a connection that keeps
 * dropping (the events followed again, the download resumed).
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, connect as tcpConnect, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { decodeToFloat, rms } from '../src/audio/decode.js';
import { parseWav } from '../src/audio/wav.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { eventually } from './helpers/redis.js';
import { startServer, tempDataDir, type TestServer } from './helpers/server.js';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const LIMIT = 120;
const SENTENCES = [
  'The harbour was quiet in the early morning.',
  'Gulls circled over the boats, calling to each other.',
  'A fisherman mended his nets on the pier, humming an old song.',
  'Somewhere a bell rang twice, and then the town began to wake.',
  'Shutters opened, bread was baked, and the first ferry left on time.',
];
const TEXT = SENTENCES.join(' ');

let server: TestServer;
let org: TestOrg;
before(async () => {
  server = await startServer({ config: { accounts: { enabled: true }, models: { 'gepard-1.0': { maxTranscriptChars: LIMIT } }, jobs: { pollMs: 50 } } });
  org = await newOrg(server, { credits: 1_000_000 });
});
after(() => server.close());

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, VOICEGATE_LOG_LEVEL: 'silent', VOICEGATE_ESPEAK_WORKERS: '1', VOICEGATE_DATA_DIR: tempDataDir(), ...extra };
}

test('against a server: long text is split under the limit, joined into one WAV, billed, and the cost printed', { timeout: 60_000 }, async () => {
  const dir = tempDataDir();
  const out = join(dir, 'out.wav');
  const { stdout } = await run(process.execPath, [MAIN, 'say', TEXT, '-o', out, '--url', server.url, '--sample-rate', '22050'], { env: env({ VOICEGATE_API_KEY: org.key }) });
  const decoded = await decodeToFloat(readFileSync(out), { container: 'wav', encoding: 'pcm_s16le', sampleRate: 22050 });
  assert.equal(decoded.sampleRate, 22050);
  assert.ok(decoded.samples.length / 22050 > 10, `${decoded.samples.length / 22050} s for five sentences`);
  assert.ok(rms(decoded.samples) > 0.02);
  const usage = (await (await fetch(`${server.url}/usage?limit=100`, { headers: org.auth })).json()) as { data: { kind: string; characters: number }[] };
  const charges = usage.data.filter((e) => e.kind === 'charge');
  assert.ok(charges.length >= 3, `${charges.length} requests`);
  assert.ok(charges.every((c) => c.characters <= LIMIT), JSON.stringify(charges.map((c) => c.characters)));
  const total = charges.reduce((n, c) => n + c.characters, 0);
  assert.match(stdout, new RegExp(`${charges.length} requests; cost ${total.toLocaleString('en-US')} credits \\(\\$[0-9.]+\\)`), stdout);
  assert.deepEqual(readdirSync(dir), ['out.wav'], 'no temporary file left');
});

test('in-process, from a file, to MP3', { timeout: 60_000 }, async () => {
  const dir = tempDataDir();
  const input = join(dir, 'chapter.txt');
  writeFileSync(input, SENTENCES.slice(0, 2).join('\n\n'));
  const out = join(dir, 'chapter.mp3');
  const { stdout } = await run(process.execPath, [MAIN, 'say', '-f', input, '-o', out, '--model', 'omnivoice', '--voice', 'emma', '--sample-rate', '44100'], { env: env() });
  assert.match(stdout, /wrote .*chapter\.mp3/);
  const decoded = await decodeToFloat(readFileSync(out), { container: 'mp3', sampleRate: 44100 });
  assert.ok(decoded.samples.length / 44100 > 3);
  assert.ok(rms(decoded.samples) > 0.02);
});

test('a refusal (unknown voice) is printed, exits 1 and leaves no file', { timeout: 30_000 }, async () => {
  const dir = tempDataDir();
  const out = join(dir, 'out.wav');
  await assert.rejects(run(process.execPath, [MAIN, 'say', 'Hello.', '-o', out, '--voice', 'nobody', '--url', server.url], { env: env({ VOICEGATE_API_KEY: org.key }) }), (err: any) => {
    assert.equal(err.code, 1);
    assert.match(err.stderr, /voice_not_found/);
    return true;
  });
  assert.deepEqual(readdirSync(dir), []);
});

async function interrupt(dir: string, extra: string[]): Promise<{ code: number | null; stderr: string }> {
  const long = Array.from({ length: 12 }, () => TEXT).join(' ');
  const child = spawn(process.execPath, [MAIN, 'say', long, '-o', join(dir, 'long.wav'), '--url', server.url, ...extra], { env: env({ VOICEGATE_API_KEY: org.key }) });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Interrupt once some audio is in the partial file.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const partial = readdirSync(dir).find((f) => f.endsWith('.partial'));
    if (partial && readFileSync(join(dir, partial)).length > 50_000) break;
    assert.ok(Date.now() < deadline, 'the partial file never grew');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  child.kill('SIGINT');
  return { code: await exited, stderr };
}

test('Ctrl-C stops cleanly and leaves no file; with --keep-partial, a playable one', { timeout: 60_000 }, async () => {
  const dir = tempDataDir();
  const first = await interrupt(dir, []);
  assert.equal(first.code, 130, first.stderr);
  assert.deepEqual(readdirSync(dir), []);
  const second = await interrupt(dir, ['--keep-partial']);
  assert.equal(second.code, 130, second.stderr);
  assert.deepEqual(readdirSync(dir), ['long.wav']);
  const decoded = await decodeToFloat(readFileSync(join(dir, 'long.wav')), { container: 'wav', encoding: 'pcm_s16le', sampleRate: 24000 });
  assert.ok(decoded.samples.length / 24000 > 1 && rms(decoded.samples) > 0.02);
  assert.ok(existsSync(join(dir, 'long.wav')));
});

/** About `characters` of the sentences above, repeated. */
function textOf(characters: number): string {
  const parts: string[] = [];
  for (let i = 0, length = 0; length < characters; i++) {
    parts.push(SENTENCES[i % SENTENCES.length]);
    length += SENTENCES[i % SENTENCES.length].length + 1;
  }
  return parts.join(' ');
}

async function jobOf(base: string, id: string, auth: Record<string, string> = {}): Promise<{ status: number; job: any }> {
  const response = await fetch(`${base}/tts/jobs/${id}`, { headers: auth });
  return { status: response.status, job: await response.json() };
}

test('--job: a file of 6,000 characters spoken as one job, downloaded whole, billed once under the job id', { timeout: 180_000 }, async () => {
  const payer = await newOrg(server, { credits: 100_000 });
  const dir = tempDataDir();
  const input = join(dir, 'chapter.txt');
  const text = textOf(6_000);
  writeFileSync(input, text);
  const out = join(dir, 'out.wav');
  const { stdout, stderr } = await run(process.execPath, [MAIN, 'say', '--job', '-f', input, '-o', out, '--url', server.url, '--sample-rate', '22050'], { env: env({ VOICEGATE_API_KEY: payer.key }) });
  const id = /job (job_[0-9a-f]{24}) queued \(resume with --job-id \1\)/.exec(stderr)?.[1];
  assert.ok(id, stderr);
  assert.match(stdout, new RegExp(`wrote .*out\\.wav: ${text.length.toLocaleString('en-US')} characters, [0-9.,]+ s of audio, as job ${id}; cost ${text.length.toLocaleString('en-US')} credits \\(\\$[0-9.]+\\)`), stdout);
  const { job } = await jobOf(server.url, id, payer.auth);
  assert.equal(job.status, 'succeeded');
  assert.ok(job.progress.segments_total >= 6, `${job.progress.segments_total} segments`);
  const wav = parseWav(readFileSync(out));
  assert.equal(wav.sampleRate, 22050);
  assert.equal(readFileSync(out).length, job.result.bytes);
  const seconds = wav.data.length / 2 / 22050;
  assert.ok(Math.abs(seconds - job.result.duration_seconds) < 0.01, `${seconds} s in the file, ${job.result.duration_seconds} s by the job`);
  assert.ok(seconds > 200, `${seconds} s for 6,000 characters`);
  assert.deepEqual(readdirSync(dir).sort(), ['chapter.txt', 'out.wav'], 'no temporary file left');
  // The charge is recorded just after the job is marked done.
  let charges: { chargeKey: string | null; credits: number }[] = [];
  const charged = await eventually(async () => {
    charges = (await server.app.services.store.ledger.list(payer.orgId, { limit: 100 })).data.filter((row) => row.kind === 'charge');
    return charges.length > 0;
  }, 10_000);
  assert.ok(charged, 'the job was charged');
  assert.equal(charges.length, 1);
  assert.equal(charges[0].chargeKey, id);
  assert.equal(charges[0].credits, -text.length);
});

test('--job-id follows a job submitted elsewhere and downloads its audio', { timeout: 60_000 }, async () => {
  const response = await server.post(
    '/tts/jobs',
    { model_id: 'gepard-1.0', transcript: TEXT, voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'mp3', sample_rate: 24000, bit_rate: 64000 } },
    org.auth,
  );
  assert.equal(response.status, 202, await response.clone().text());
  const { id } = (await response.json()) as { id: string };
  const dir = tempDataDir();
  const out = join(dir, 'followed.mp3');
  const { stdout } = await run(process.execPath, [MAIN, 'say', '--job-id', id, '-o', out, '--url', server.url], { env: env({ VOICEGATE_API_KEY: org.key }) });
  assert.match(stdout, new RegExp(`wrote .*followed\\.mp3: .* as job ${id}`));
  const { job } = await jobOf(server.url, id, org.auth);
  assert.equal(readFileSync(out).length, job.result.bytes);
  const decoded = await decodeToFloat(readFileSync(out), { container: 'mp3', sampleRate: 24000 });
  assert.ok(Math.abs(decoded.samples.length / 24000 - job.result.duration_seconds) < 0.2);
  assert.ok(rms(decoded.samples) > 0.02);
  // A job's own format decides: -o of another container is refused before anything is written.
  await assert.rejects(run(process.execPath, [MAIN, 'say', '--job-id', id, '-o', join(dir, 'followed.wav'), '--url', server.url], { env: env({ VOICEGATE_API_KEY: org.key }) }), (err: any) => {
    assert.equal(err.code, 1);
    assert.match(err.stderr, /makes mp3 audio/);
    return true;
  });
  assert.deepEqual(readdirSync(dir), ['followed.mp3']);
});

test('--job-id of an unknown job exits 1 with job_not_found and writes nothing', { timeout: 30_000 }, async () => {
  const dir = tempDataDir();
  await assert.rejects(run(process.execPath, [MAIN, 'say', '--job-id', 'job_0123456789abcdef01234567', '-o', join(dir, 'x.wav'), '--url', server.url], { env: env({ VOICEGATE_API_KEY: org.key }) }), (err: any) => {
    assert.equal(err.code, 1);
    assert.match(err.stderr, /job_not_found: job job_0123456789abcdef01234567 does not exist/);
    return true;
  });
  assert.deepEqual(readdirSync(dir), []);
});

test('--job, in-process (no --url): the job runs here and the file is written', { timeout: 60_000 }, async () => {
  const dir = tempDataDir();
  const out = join(dir, 'local.wav');
  const { stdout, stderr } = await run(process.execPath, [MAIN, 'say', '--job', SENTENCES[0], '-o', out], { env: env() });
  assert.match(stderr, /job job_[0-9a-f]{24} queued/);
  assert.match(stdout, /wrote .*local\.wav: .* as job job_[0-9a-f]{24}; cost 0 credits \(not billed\)/);
  const wav = parseWav(readFileSync(out));
  assert.ok(wav.data.length / 2 / wav.sampleRate > 1);
});

test('Ctrl-C while following leaves the job on the server and prints how to resume; --cancel then cancels it', { timeout: 60_000 }, async () => {
  // This server takes jobs but runs none: the job stays queued.
  const paused = await startServer({ config: { jobs: { concurrency: 0, pollMs: 50 } } });
  try {
    const dir = tempDataDir();
    const out = join(dir, 'long.wav');
    const child = spawn(process.execPath, [MAIN, 'say', '--job', textOf(3_000), '-o', out, '--url', paused.url], { env: env() });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let id: string | undefined;
    assert.ok(await eventually(() => Boolean((id = /job (job_[0-9a-f]{24}) queued/.exec(stderr)?.[1])), 20_000), `no job id printed: ${stderr}`);
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    assert.ok(stderr.includes(`still running on the server: voicegate say --job-id ${id} -o ${out} --url ${paused.url}`), stderr);
    assert.deepEqual(readdirSync(dir), []);
    const left = await jobOf(paused.url, id!);
    assert.equal(left.status, 200);
    assert.equal(left.job.status, 'queued');

    const { stdout } = await run(process.execPath, [MAIN, 'say', '--job-id', id!, '--cancel', '--url', paused.url], { env: env() });
    assert.match(stdout, new RegExp(`cancelled job ${id}`));
    assert.equal((await jobOf(paused.url, id!)).job.status, 'cancelled');
  } finally {
    await paused.close();
  }
});

/** A TCP proxy to `target` that cuts every connection `cutMs` after it opens, passing at most `bytesPerMs` downstream. */
async function cuttingProxy(target: string, cutMs: number, bytesPerMs: number): Promise<{ url: string; cuts: () => number; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  let cuts = 0;
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(Number(port), hostname);
    client.pipe(upstream);
    upstream.on('data', (data: Buffer) => {
      client.write(data);
      upstream.pause();
      setTimeout(() => upstream.resume(), data.length / bytesPerMs);
    });
    const timer = setTimeout(() => {
      cuts++;
      client.destroy();
      upstream.destroy();
    }, cutMs);
    client.on('close', () => (clearTimeout(timer), upstream.destroy()));
    client.on('error', () => {});
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}`, cuts: () => cuts, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

test('--job through a connection that keeps dropping: the events are followed again and the download resumed', { timeout: 120_000 }, async () => {
  // Every connection lasts 400 ms, and the audio comes at 10 MB/s: a few seconds of job and a download of several MB are both cut.
  const proxy = await cuttingProxy(server.url, 400, 10_000);
  try {
    const dir = tempDataDir();
    const out = join(dir, 'cut.wav');
    const { stdout, stderr } = await run(process.execPath, [MAIN, 'say', '--job', textOf(3_000), '-o', out, '--url', proxy.url, '--sample-rate', '22050'], { env: env({ VOICEGATE_API_KEY: org.key }) });
    const id = /job (job_[0-9a-f]{24}) queued/.exec(stderr)?.[1];
    assert.ok(id, stderr);
    assert.match(stdout, new RegExp(`as job ${id}`));
    assert.ok(proxy.cuts() >= 2, `${proxy.cuts()} connections cut`);
    const whole = Buffer.from(await (await fetch(`${server.url}/tts/jobs/${id}/audio`, { headers: org.auth })).arrayBuffer());
    assert.ok(whole.length > 4_000_000, `${whole.length} bytes`);
    assert.ok(readFileSync(out).equals(whole), 'the file is the job\'s audio, byte for byte');
    assert.deepEqual(readdirSync(dir), ['cut.wav']);
  } finally {
    await proxy.close();
  }
});
