/**
 * @module test/model-import
 * Importing a model while the server runs (`POST /admin/models`) from the
 * stand-in Piper model, exported by the test into each accepted form: a raw
 * Piper pair (`.onnx` + `.onnx.json`, no sherpa metadata), a pair whose graph
 * already has the metadata, and a sherpa-onnx archive. Each imported model
 * speaks at once, is served again by a server started on the same data
 * folder, and is deleted (then `model_not_found`). Each bad import is refused
 * with a message naming what is wrong, and leaves the models folder as it was.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import tar from 'tar-stream';
import { kokoroStandIn, kokoroStandInVoices, KOKORO_STYLE_DIM, removeRunDir, runDir, standInArchive, standInOnnx, standInPiperJson, STAND_IN_RATE } from './helpers/sherpa-model.js';
import { startServer, tempDataDir, type TestServer } from './helpers/server.js';
import { until } from './helpers/poll.js';
import { deleteKeys, TEST_REDIS_URL, testPrefix } from './helpers/redis.js';

const run = promisify(execFile);
const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const ADMIN = 'admin-token-for-model-imports';
const auth = { authorization: `Bearer ${ADMIN}` };
let dataDir: string;
let server: TestServer;

const config = (dir: string) => ({ dataDir: dir, accounts: { enabled: false, adminToken: ADMIN }, modelImport: { maxUnpackedBytes: 1024 * 1024 } });
/** The first server also serves a Kokoro model, which voices files are added to. */
const withKokoro = (dir: string) => ({
  ...config(dir),
  engines: { kokoro: { type: 'sherpa-onnx', model: kokoroStandIn(), workers: 1 } },
  models: { 'kokoro-local': { extends: 'gepard-1.0', engine: 'kokoro' } },
});

before(async () => {
  dataDir = tempDataDir();
  server = await startServer({ config: withKokoro(dataDir) as never });
}, { timeout: 60_000 });
after(async () => {
  await server?.close();
  removeRunDir();
});

const piperJson = standInPiperJson;

type Part = [name: string, value: string | Uint8Array, filename?: string];

function importModel(parts: Part[]): Promise<Response> {
  const form = new FormData();
  for (const [name, value, filename] of parts) {
    if (typeof value === 'string' && filename === undefined) form.append(name, value);
    else form.append(name, new Blob([value]), filename);
  }
  return fetch(`${server.url}/admin/models`, { method: 'POST', headers: auth, body: form });
}

async function speak(model: string, voice = model): Promise<Response> {
  return server.post('/tts/bytes', {
    model_id: model,
    transcript: 'Hello there, this is my own voice.',
    voice: { mode: 'id', id: voice },
    output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: STAND_IN_RATE },
  });
}

async function speaks(model: string): Promise<void> {
  const response = await speak(model);
  assert.equal(response.status, 200, await response.clone().text());
  assert.ok((await response.arrayBuffer()).byteLength > STAND_IN_RATE / 10, 'some audio');
}

const installed = () => (existsSync(join(dataDir, 'models')) ? readdirSync(join(dataDir, 'models')).sort() : []);

test('a raw Piper pair (no sherpa metadata) is imported, speaks at once, and its id comes from the file name', { timeout: 60_000 }, async () => {
  const response = await importModel([
    ['model', standInOnnx({ withoutMetadata: true }), 'en_US-amy-medium.onnx'],
    ['config', piperJson(), 'en_US-amy-medium.onnx.json'],
  ]);
  assert.equal(response.status, 201, await response.clone().text());
  const body = (await response.json()) as Record<string, unknown>;
  assert.deepEqual(body, { id: 'en_US-amy-medium', engine: 'en_US-amy-medium', sample_rate: STAND_IN_RATE, voices: ['en_US-amy-medium'], languages: ['en-us'] });
  // The metadata sherpa-onnx reads was added, and tokens.txt made from phoneme_id_map.
  const folder = join(dataDir, 'models', 'en_US-amy-medium');
  assert.equal(readFileSync(join(folder, 'tokens.txt'), 'utf8').split('\n')[4], '! 4');
  assert.match(readFileSync(join(folder, 'en_US-amy-medium.onnx')).toString('latin1'), /sample_rate.*22050/s);
  await speaks('en_US-amy-medium');
  const models = (await (await fetch(`${server.url}/models`)).json()) as { data: { id: string }[] };
  assert.ok(models.data.some((m) => m.id === 'en_US-amy-medium'));
});

test('a pair whose graph has the metadata already, under the id sent first', { timeout: 60_000 }, async () => {
  const response = await importModel([
    ['id', 'my-voice'],
    ['model', standInOnnx(), 'voice.onnx'],
    ['config', piperJson(), 'voice.onnx.json'],
  ]);
  assert.equal(response.status, 201, await response.clone().text());
  assert.equal(((await response.json()) as { id: string }).id, 'my-voice');
  await speaks('my-voice');
  // The same id again is a conflict, and changes nothing.
  const again = await importModel([['id', 'my-voice'], ['model', standInOnnx(), 'voice.onnx'], ['config', piperJson(), 'voice.onnx.json']]);
  assert.equal(again.status, 409);
  assert.equal(((await again.json()) as { error_code: string }).error_code, 'model_exists');
});

test('a sherpa-onnx archive is imported and speaks', { timeout: 60_000 }, async () => {
  const response = await importModel([['archive', readFileSync(standInArchive()), 'vits-piper-en_US-lessac-medium.tar.bz2']]);
  assert.equal(response.status, 201, await response.clone().text());
  assert.equal(((await response.json()) as { id: string }).id, 'vits-piper-en_US-lessac-medium');
  await speaks('vits-piper-en_US-lessac-medium');
});

test('a Kokoro voices file is added to the installed Kokoro model as a model of its own; a file of the wrong size or a target that is not Kokoro is refused', { timeout: 60_000 }, async () => {
  const response = await importModel([['target', 'kokoro'], ['voices', kokoroStandInVoices(2), 'af_custom.bin']]);
  assert.equal(response.status, 201, await response.clone().text());
  const body = (await response.json()) as { id: string; voices: string[] };
  assert.deepEqual([body.id, body.voices], ['af_custom', ['af_custom-0', 'af_custom-1']]);
  const spoken = await speak('af_custom', 'af_custom-1');
  assert.equal(spoken.status, 200, await spoken.clone().text());
  assert.ok((await spoken.arrayBuffer()).byteLength > 0);
  const before = installed();
  const perVoice = KOKORO_STYLE_DIM[0] * KOKORO_STYLE_DIM[2] * 4;
  const short = await importModel([['target', 'kokoro'], ['voices', Buffer.alloc(1000), 'short.bin']]);
  assert.equal(short.status, 400);
  assert.match(((await short.json()) as { message: string }).message, new RegExp(`\`short\.bin\` is 1,000 bytes: a Kokoro voices file holds ${perVoice.toLocaleString('en-US')} bytes per voice`));
  const notKokoro = await importModel([['target', 'en_US-amy-medium'], ['voices', kokoroStandInVoices(1), 'x.bin']]);
  assert.equal(notKokoro.status, 400);
  assert.match(((await notKokoro.json()) as { message: string }).message, /target "en_US-amy-medium" is a vits model; a voices file is added to a Kokoro model/);
  assert.deepEqual(installed(), before);
});

test('a server started on the same data folder serves the imported models', { timeout: 60_000 }, async () => {
  const second = await startServer({ config: { ...withKokoro(dataDir), jobs: { enabled: false } } as never });
  try {
    const response = await second.post('/tts/bytes', {
      model_id: 'my-voice',
      transcript: 'Spoken by the second server.',
      voice: { mode: 'id', id: 'my-voice' },
      output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: STAND_IN_RATE },
    });
    assert.equal(response.status, 200, await response.clone().text());
  } finally {
    await second.close();
  }
});

test('voicegate models import hands a running server a Piper pair (the .onnx.json found beside the .onnx); a refusal exits 1 with its message', { timeout: 60_000 }, async () => {
  const dir = join(runDir(), 'cli');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'en_GB-cli-voice.onnx'), standInOnnx({ withoutMetadata: true }));
  writeFileSync(join(dir, 'en_GB-cli-voice.onnx.json'), piperJson());
  writeFileSync(join(dir, 'lonely.onnx'), standInOnnx());
  const env = { ...process.env, VOICEGATE_ADMIN_TOKEN: ADMIN, VOICEGATE_DATA_DIR: tempDataDir() };
  const { stdout } = await run(process.execPath, [MAIN, 'models', 'import', join(dir, 'en_GB-cli-voice.onnx'), '--url', server.url], { env });
  assert.match(stdout, /Imported en_GB-cli-voice \(22050 Hz; voices: en_GB-cli-voice\)/);
  await speaks('en_GB-cli-voice');
  writeFileSync(join(dir, 'bf_cli.bin'), kokoroStandInVoices(1));
  const voices = await run(process.execPath, [MAIN, 'models', 'import', join(dir, 'bf_cli.bin'), '--target', 'kokoro', '--url', server.url], { env });
  assert.match(voices.stdout, /Imported bf_cli \(24000 Hz; voices: bf_cli\)/);
  await assert.rejects(run(process.execPath, [MAIN, 'models', 'import', join(dir, 'lonely.onnx'), '--id', 'lonely', '--url', server.url], { env }), (err: { code: number; stderr: string }) => {
    assert.equal(err.code, 1);
    assert.match(err.stderr, /not imported \(400\): a Piper voice needs its `\.onnx\.json` beside `lonely\.onnx`/);
    return true;
  });
});

/** A `.tar.bz2` of `members` (name → contents), made with tar-stream and bzip2. */
async function archiveOf(members: [name: string, contents: Buffer][]): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, contents] of members) pack.entry({ name, size: contents.length }, contents);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  const path = join(runDir(), `packed-${members.length}-${Date.now()}.tar`);
  writeFileSync(path, Buffer.concat(chunks));
  return execFileSync('bzip2', ['-c', path], { maxBuffer: 1 << 26 });
}

test('bad imports are refused with what is wrong, and leave the models folder unchanged', { timeout: 120_000 }, async () => {
  const onnx = standInOnnx();
  const cases: { name: string; parts: () => Promise<Part[]> | Part[]; status: number; message: RegExp }[] = [
    {
      name: 'mismatched rate',
      parts: () => [['model', standInOnnx({ sampleRate: 16000 }), 'rate.onnx'], ['config', piperJson({ sampleRate: 22050 }), 'rate.onnx.json']],
      status: 400,
      message: /`rate\.onnx\.json` says 22,050 Hz, the graph was exported for 16,000/,
    },
    {
      name: 'speakers the graph does not take',
      parts: () => [['model', standInOnnx({ withoutMetadata: true }), 'multi.onnx'], ['config', piperJson({ speakers: 4 }), 'multi.onnx.json']],
      status: 400,
      message: /says 4 speakers, the graph takes no speaker id/,
    },
    {
      name: 'truncated graph',
      parts: () => [['model', onnx.subarray(0, Math.floor(onnx.length / 2)), 'cut.onnx'], ['config', piperJson(), 'cut.onnx.json']],
      status: 400,
      message: /`cut\.onnx` is not a valid ONNX graph: .*truncated/,
    },
    {
      name: 'missing .onnx.json',
      parts: () => [['model', onnx, 'alone.onnx']],
      status: 400,
      message: /needs its `\.onnx\.json` beside `alone\.onnx`/,
    },
    {
      name: 'eSpeak NG voice that does not exist',
      parts: () => [['model', standInOnnx({ withoutMetadata: true }), 'klingon.onnx'], ['config', piperJson({ voice: 'tlh' }), 'klingon.onnx.json']],
      status: 400,
      message: /eSpeak NG voice "tlh" the model speaks with does not exist/,
    },
    {
      name: 'archive member with ../',
      parts: async () => [['archive', await archiveOf([['model/tokens.txt', Buffer.from('a 0\n')], ['../escaped.txt', Buffer.from('out')]]), 'evil.tar.bz2']],
      status: 400,
      message: /archive member "\.\.\/escaped\.txt" escapes the target/,
    },
    {
      name: 'archive over the bound',
      parts: async () => [['archive', await archiveOf([['bomb/model.onnx', Buffer.alloc(8 * 1024 * 1024)]]), 'bomb.tar.bz2']],
      status: 413,
      message: /the archive unpacks to more than 1,048,576 bytes \(modelImport\.maxUnpackedBytes\)/,
    },
  ];
  const before = installed();
  for (const c of cases) {
    const response = await importModel(await c.parts());
    const body = (await response.json()) as { error_code: string; message: string };
    assert.equal(response.status, c.status, `${c.name}: ${JSON.stringify(body)}`);
    assert.equal(body.error_code, c.status === 413 ? 'model_import_too_large' : 'model_import_invalid', c.name);
    assert.match(body.message, c.message, c.name);
    assert.deepEqual(installed(), before, `${c.name} left the models folder unchanged`);
  }
  assert.ok(!existsSync(join(dataDir, 'escaped.txt')) && !existsSync(join(dataDir, 'models', 'escaped.txt')));
  const models = (await (await fetch(`${server.url}/models`)).json()) as { data: { id: string }[] };
  for (const id of ['rate', 'multi', 'cut', 'alone', 'klingon', 'evil', 'bomb']) assert.ok(!models.data.some((m) => m.id === id), `${id} is not registered`);
  assert.equal(server.app.services.engines.get('rate'), undefined);
});

test('DELETE /admin/models/{id} removes an imported model and its files; built-in models are refused', { timeout: 60_000 }, async () => {
  const response = await fetch(`${server.url}/admin/models/en_US-amy-medium`, { method: 'DELETE', headers: auth });
  assert.equal(response.status, 204);
  assert.ok(!installed().includes('en_US-amy-medium'));
  const gone = await speak('en_US-amy-medium');
  assert.equal(gone.status, 404);
  assert.equal(((await gone.json()) as { error_code: string }).error_code, 'model_not_found');
  const builtin = await fetch(`${server.url}/admin/models/gepard-1.0`, { method: 'DELETE', headers: auth });
  assert.equal(builtin.status, 409);
  assert.equal(((await builtin.json()) as { error_code: string }).error_code, 'model_not_removable');
  const unknown = await fetch(`${server.url}/admin/models/nothing-here`, { method: 'DELETE', headers: auth });
  assert.equal(unknown.status, 404);
  const unauthorised = await fetch(`${server.url}/admin/models/my-voice`, { method: 'DELETE' });
  assert.equal(unauthorised.status, 401);
  // The same id can be imported again once deleted.
  const again = await importModel([['model', standInOnnx({ withoutMetadata: true }), 'en_US-amy-medium.onnx'], ['config', piperJson(), 'en_US-amy-medium.onnx.json']]);
  assert.equal(again.status, 201, await again.clone().text());
  await speaks('en_US-amy-medium');
});

test('with Redis and shared job storage, a model imported on one gateway is served by the others, and deleted from them', { timeout: 120_000 }, async () => {
  const prefix = testPrefix();
  const shared = tempDataDir();
  const gateway = () => startServer({ logLevel: process.env.DEBUG_IMPORT ? 'info' : undefined, config: { ...config(tempDataDir()), redis: { url: TEST_REDIS_URL, keyPrefix: prefix }, jobs: { enabled: true, dir: shared } } as never });
  const [a, b] = [await gateway(), await gateway()];
  let c: TestServer | null = null;
  const speakOn = (on: TestServer) =>
    on.post('/tts/bytes', { model_id: 'shared-voice', transcript: 'Heard on every gateway.', voice: { mode: 'id', id: 'shared-voice' }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: STAND_IN_RATE } });
  try {
    const form = new FormData();
    form.append('id', 'shared-voice');
    form.append('model', new Blob([standInOnnx({ withoutMetadata: true })]), 'voice.onnx');
    form.append('config', new Blob([piperJson()]), 'voice.onnx.json');
    const imported = await fetch(`${a.url}/admin/models`, { method: 'POST', headers: auth, body: form });
    assert.equal(imported.status, 201, await imported.clone().text());
    // The other gateway fetches it when the bus announces it, and speaks with it without a restart.
    await until(async () => (await speakOn(b)).status === 200, { timeoutMs: 30_000 });
    // One started afterwards finds it on the storage.
    c = await gateway();
    assert.equal((await speakOn(c)).status, 200);
    const deleted = await fetch(`${a.url}/admin/models/shared-voice`, { method: 'DELETE', headers: auth });
    assert.equal(deleted.status, 204);
    for (const other of [b, c]) await until(async () => (await speakOn(other)).status === 404, { timeoutMs: 30_000 });
    assert.ok(!existsSync(join(shared, 'models', 'shared-voice.tar')), 'off the shared storage');
  } finally {
    await Promise.all([a.close(), b.close(), c?.close()]);
    await deleteKeys(prefix);
  }
});

test('an uploaded file over modelImport.maxUploadBytes is 413, and nothing is installed', { timeout: 60_000 }, async () => {
  const dir = tempDataDir();
  const small = await startServer({ config: { ...config(dir), modelImport: { maxUploadBytes: 2048 } } as never });
  try {
    const form = new FormData();
    form.append('model', new Blob([Buffer.alloc(64 * 1024)]), 'big.onnx');
    form.append('config', new Blob([piperJson()]), 'big.onnx.json');
    const response = await fetch(`${small.url}/admin/models`, { method: 'POST', headers: auth, body: form });
    const body = (await response.json()) as { error_code: string; message: string };
    assert.equal(response.status, 413, JSON.stringify(body));
    assert.equal(body.error_code, 'model_import_too_large');
    assert.match(body.message, /big\.onnx is over 2,048 bytes \(modelImport\.maxUploadBytes\)|over 2,048 bytes/);
    assert.deepEqual(existsSync(join(dir, 'models')) ? readdirSync(join(dir, 'models')) : [], []);
  } finally {
    await small.close();
  }
});
