/**
 * @module test/cli-say-captions
 * `voicegate say --captions`, in a child process against a server: short text
 * split into several requests gets one caption file on the joined audio's
 * clock, and `--job` writes the job's captions; both read by the subtitle
 * parsers, every word once and in order, within the audio.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { parseWav } from '../src/audio/wav.js';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { captionWords, readSrt, readVtt, type ReadCue } from './helpers/captions.js';
import { startServer, tempDataDir, type TestServer } from './helpers/server.js';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const TEXT =
  'The harbour was quiet in the early morning. Gulls circled over the boats, calling to each other. A fisherman mended his nets on the pier, humming an old song. Somewhere a bell rang twice.';

let server: TestServer;
let org: TestOrg;
before(async () => {
  server = await startServer({ config: { accounts: { enabled: true }, models: { 'gepard-1.0': { maxTranscriptChars: 100 } }, jobs: { pollMs: 50 } } });
  org = await newOrg(server, { credits: 1_000_000 });
});
after(() => server.close());

function env(): NodeJS.ProcessEnv {
  return { ...process.env, VOICEGATE_LOG_LEVEL: 'silent', VOICEGATE_ESPEAK_WORKERS: '1', VOICEGATE_DATA_DIR: tempDataDir(), VOICEGATE_API_KEY: org.key };
}

function assertCaptions(cues: readonly ReadCue[], seconds: number): void {
  assert.deepEqual(captionWords(cues), TEXT.split(' '));
  cues.forEach((cue, index) => {
    assert.ok(cue.start >= 0 && cue.end > cue.start && cue.end <= Math.round(seconds * 1000) + 1, `cue ${index} ${cue.start}–${cue.end} in ${seconds} s`);
    if (index > 0) assert.ok(cue.start >= cues[index - 1].end);
  });
}

test('short text in several requests: --captions out.vtt is on the joined audio’s clock', { timeout: 60_000 }, async () => {
  const dir = tempDataDir();
  const out = join(dir, 'out.wav');
  const vtt = join(dir, 'out.vtt');
  const { stdout } = await run(process.execPath, [MAIN, 'say', TEXT, '-o', out, '--captions', vtt, '--url', server.url, '--sample-rate', '16000'], { env: env() });
  assert.match(stdout, /wrote .*out\.wav and .*out\.vtt: .* in [2-9] requests/);
  const seconds = parseWav(readFileSync(out)).data.length / 2 / 16000;
  const cues = readVtt(readFileSync(vtt, 'utf8'));
  assertCaptions(cues, seconds);
  // The last sentence came in a later request: its cue sits near the end of the joined audio.
  assert.ok(cues.at(-1)!.start > seconds / 2, `${cues.at(-1)!.start} ms of ${seconds} s`);
  // A name that is neither .vtt nor .srt is refused before anything is spoken.
  await assert.rejects(run(process.execPath, [MAIN, 'say', 'Hi.', '-o', join(dir, 'x.wav'), '--captions', join(dir, 'x.txt'), '--url', server.url], { env: env() }), /must end in \.vtt or \.srt/);
  assert.ok(!existsSync(join(dir, 'x.wav')));
});

test('--job --captions out.srt writes the job’s captions beside its audio', { timeout: 120_000 }, async () => {
  const dir = tempDataDir();
  const out = join(dir, 'book.wav');
  const srt = join(dir, 'book.srt');
  const { stdout } = await run(process.execPath, [MAIN, 'say', TEXT, '--job', '-o', out, '--captions', srt, '--url', server.url, '--sample-rate', '16000'], { env: env() });
  assert.match(stdout, /wrote .*book\.wav and .*book\.srt: .* as job job_/);
  const seconds = parseWav(readFileSync(out)).data.length / 2 / 16000;
  const text = readFileSync(srt, 'utf8');
  assert.match(text, /^1\n00:00:00,\d{3} --> /);
  assertCaptions(readSrt(text), seconds);
});
