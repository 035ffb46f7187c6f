/**
 * @module test/cli-say
 * `voicegate say` as a user runs it, in a child process: against a running
 * server with a key (long text split under the model's limit, billed, cost
 * printed), in-process from a file to MP3, a refusal leaving no file, and
 * Ctrl-C leaving no file unless `--keep-partial`.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { decodeToFloat, rms } from '../src/audio/decode.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
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
  server = await startServer({ config: { accounts: { enabled: true }, models: { 'gepard-1.0': { maxTranscriptChars: LIMIT } } } });
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
