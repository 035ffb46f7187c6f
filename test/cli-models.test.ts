/**
 * @module test/cli-models
 * `voicegate models` as an operator runs it, in a child process, against a
 * local HTTP server that serves a generated model archive (the stand-in
 * sherpa-onnx model packed with `tar -cjf`): a pull with its progress bar,
 * printed config and verification; a checksum mismatch refused with nothing
 * left installed; a download resumed with `Range` after the server cut the
 * first response; `--from` a local file; `verify` finding a damaged model;
 * `remove`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { removeRunDir, runDir, standInOnnx, standInTokens } from './helpers/sherpa-model.js';
import { tempDataDir } from './helpers/server.js';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const NAME = 'vits-piper-en_US-lessac-medium';

let archive: Buffer;
let archivePath: string;
let server: Server;
let baseUrl: string;
/** Requests the server saw, and whether it should cut the next response midway. */
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
let cutNext = false;

before(async () => {
  // An archive laid out like the official ones: one top-level folder named after the model.
  // Incompressible padding makes it big enough to cut midway.
  const source = join(runDir(), 'archive-src');
  const folder = join(source, NAME);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'en_US-lessac-medium.onnx'), standInOnnx());
  writeFileSync(join(folder, 'tokens.txt'), standInTokens());
  writeFileSync(join(folder, 'MODEL_CARD'), randomBytes(400_000));
  archivePath = join(runDir(), `${NAME}.tar.bz2`);
  await run('tar', ['-cjf', archivePath, '-C', source, NAME]);
  archive = readFileSync(archivePath);

  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    if (req.url !== `/${NAME}.tar.bz2`) {
      res.writeHead(404).end('not found');
      return;
    }
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = range ? Number(range[1]) : 0;
    const body = archive.subarray(start);
    res.writeHead(range ? 206 : 200, {
      'content-length': body.length,
      'content-type': 'application/x-bzip2',
      ...(range ? { 'content-range': `bytes ${start}-${archive.length - 1}/${archive.length}` } : {}),
    });
    if (cutNext) {
      cutNext = false;
      res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
      return;
    }
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  removeRunDir();
});

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function models(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<Result> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, 'models', ...args], {
      env: { ...process.env, VOICEGATE_LOG_LEVEL: 'silent', VOICEGATE_DATA_DIR: dataDir, VOICEGATE_MODELS_BASE_URL: baseUrl, ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

test('list shows the catalogue with family, rate, size, licence and source', { timeout: 20_000 }, async () => {
  const r = await models(tempDataDir(), ['list']);
  assert.equal(r.code, 0, r.stderr);
  for (const name of [NAME, 'kokoro-en-v0_19', 'kitten-nano-en-v0_1-fp16']) assert.match(r.stdout, new RegExp(name));
  assert.match(r.stdout, /vits\s+en-US\s+22050/);
  assert.match(r.stdout, /Apache-2\.0/);
  assert.match(r.stdout, /github\.com\/k2-fsa\/sherpa-onnx\/releases\/download\/tts-models/);
});

test('list --available shows the catalogue by language: Kokoro v1, the current KittenTTS and Piper beyond English', { timeout: 20_000 }, async () => {
  const r = await models(tempDataDir(), ['list', '--available']);
  assert.equal(r.code, 0, r.stderr);
  const groups = new Map<string, string>();
  for (const block of r.stdout.split(/\n\s*\n/)) {
    const [heading, ...lines] = block.trim().split('\n');
    if (/^[a-z]+:$/.test(heading)) groups.set(heading.slice(0, -1), lines.join('\n'));
  }
  for (const [language, name] of [
    ['de', 'vits-piper-de_DE-thorsten-medium'],
    ['fr', 'vits-piper-fr_FR-siwis-medium'],
    ['es', 'vits-piper-es_ES-davefx-medium'],
    ['it', 'vits-piper-it_IT-paola-medium'],
    ['pt', 'vits-piper-pt_BR-faber-medium'],
    ['nl', 'vits-piper-nl_NL-mls-medium'],
    ['en', 'kitten-nano-en-v0_8-int8'],
    ['en', 'kitten-mini-en-v0_8'],
    ['multilingual', 'kokoro-multi-lang-v1_0'],
    ['multilingual', 'kokoro-int8-multi-lang-v1_0'],
    ['multilingual', 'kokoro-multi-lang-v1_1'],
    ['multilingual', 'kokoro-int8-multi-lang-v1_1'],
  ]) {
    assert.match(groups.get(language) ?? '', new RegExp(`^\\s+${name}\\s`, 'm'), `${name} under ${language}:\n${r.stdout}`);
  }
  // Each row: its size, that no checksum is published, and its licence.
  assert.match(groups.get('multilingual')!, /kokoro-multi-lang-v1_0\s+en-US en-GB es fr hi it ja pt-BR zh\s+kokoro\s+53\s+~333 MB\s+not published\s+Apache-2\.0/);
  assert.match(groups.get('de')!, /CC0-1\.0/);
  assert.ok([...groups.keys()].at(-1) === 'multilingual', 'multilingual models come last');
});

test('pull downloads with a progress bar, verifies, installs and prints the config that serves it', { timeout: 60_000 }, async () => {
  const dataDir = tempDataDir();
  const r = await models(dataDir, ['pull', NAME, '--progress', '--sha256', sha256(archive)]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /█+/);
  assert.match(r.stderr, new RegExp(`${(archive.length / 1e6).toFixed(1)}/`));
  assert.match(r.stdout, /Installed .* \(vits, 22050 Hz\); verified/);
  const json = JSON.parse(r.stdout.slice(r.stdout.indexOf('{')));
  const dir = join(dataDir, 'models', NAME);
  assert.equal(json.engines[NAME].type, 'sherpa-onnx');
  assert.equal(json.engines[NAME].model, dir);
  assert.equal(json.models[NAME].engine, NAME);
  assert.ok(existsSync(join(dir, 'tokens.txt')));
  assert.ok(existsSync(join(dir, 'en_US-lessac-medium.onnx')));
  // Nothing but the model is left behind: no download, no staging folder.
  assert.deepEqual(readdirSync(join(dataDir, 'models')).filter((n) => n !== '.downloads'), [NAME]);
  assert.deepEqual(readdirSync(join(dataDir, 'models', '.downloads')), []);

  // Without --progress and not on a terminal it stays quiet.
  const quiet = await models(tempDataDir(), ['pull', NAME]);
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.doesNotMatch(quiet.stderr, /█|MB\/s/);

  const again = await models(dataDir, ['pull', NAME]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /already installed/);
});

test('a checksum mismatch is refused and nothing is left installed', { timeout: 30_000 }, async () => {
  const dataDir = tempDataDir();
  const r = await models(dataDir, ['pull', NAME, '--sha256', 'ab'.repeat(32)]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /checksum mismatch/);
  assert.ok(!existsSync(join(dataDir, 'models', NAME)));
  assert.deepEqual(readdirSync(join(dataDir, 'models', '.downloads')), []);
});

test('a cut connection is resumed with Range and the result verifies', { timeout: 60_000 }, async () => {
  const dataDir = tempDataDir();
  seen.length = 0;
  cutNext = true;
  const r = await models(dataDir, ['pull', NAME, '--sha256', sha256(archive)]);
  assert.equal(r.code, 0, r.stderr);
  const requests = seen.filter((s) => s.url === `/${NAME}.tar.bz2`);
  assert.equal(requests.length, 2);
  assert.equal(requests[0].headers.range, undefined);
  const resumedAt = Number(/^bytes=(\d+)-$/.exec(requests[1].headers.range ?? '')?.[1]);
  assert.ok(resumedAt > 0 && resumedAt < archive.length, `resumed at ${resumedAt} of ${archive.length}`);
  const v = await models(dataDir, ['verify', NAME]);
  assert.equal(v.code, 0, v.stdout + v.stderr);
  assert.match(v.stdout, new RegExp(`${NAME}: ok \\(vits, 22050 Hz\\)`));
});

test('--from a local file installs without the network; verify finds damage; remove deletes', { timeout: 60_000 }, async () => {
  const dataDir = tempDataDir();
  seen.length = 0;
  const r = await models(dataDir, ['pull', 'my-voice', '--from', archivePath], { VOICEGATE_MODELS_BASE_URL: 'http://127.0.0.1:1' });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(seen.length, 0);
  const dir = join(dataDir, 'models', 'my-voice');
  assert.ok(existsSync(join(dir, 'tokens.txt')));
  assert.match((await models(dataDir, ['list'])).stdout, /my-voice.*yes/);

  writeFileSync(join(dir, 'tokens.txt'), standInTokens().split('\n').slice(0, 40).join('\n') + '\nɐ');
  const v = await models(dataDir, ['verify']);
  assert.equal(v.code, 1);
  assert.match(v.stdout, /my-voice: FAILED: tokens\.txt line 41/);

  const rm = await models(dataDir, ['remove', 'my-voice']);
  assert.equal(rm.code, 0, rm.stderr);
  assert.ok(!existsSync(dir));
  assert.equal((await models(dataDir, ['remove', 'my-voice'])).code, 1);
  assert.equal((await models(dataDir, ['pull', '../evil', '--from', archivePath])).code, 2);
});

test('a broken archive is refused with the reason and nothing is left installed', { timeout: 30_000 }, async () => {
  const dataDir = tempDataDir();
  const bad = join(runDir(), 'bad.tar.bz2');
  writeFileSync(bad, archive.subarray(0, 2000));
  const r = await models(dataDir, ['pull', 'bad', '--from', bad]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /bad was not installed: could not unpack/);
  assert.deepEqual(readdirSync(join(dataDir, 'models')), []);
  rmSync(bad);
});
