/**
 * @module test/deploy-image
 * The image as a user runs it, built from the repository's Dockerfile with
 * podman (offline: Debian's packages and npm only): it runs as a non-root
 * user with production dependencies only and its state in the volume; the
 * first start prints the bootstrap key once and serves speech on the
 * published port; the HEALTHCHECK passes; SIGTERM drains (readyz 503, the
 * open stream finishes, exit 0), and readers at playback speed get every
 * byte of their streams and turns before the container exits (its network
 * namespace, and the sockets' buffers with it, go when it does); a restart
 * keeps the accounts;
 * `voicegate models pull --from` works as a command of the image; and
 * `VOICEGATE_PULL` installs a neural model (a stand-in archive) on first
 * start and serves the default model ids with it.
 */
import assert from 'node:assert/strict';
import { Agent, request, type IncomingMessage } from 'node:http';
import { after, before, test } from 'node:test';
import { decodeToFloat, rms } from '../src/audio/decode.js';
import { buildImage, containersUnavailable, followLogs, IMAGE, podman, publishedPort, run, runName, until } from './helpers/containers.js';
import { removeRunDir, standInArchive, STAND_IN_RATE } from './helpers/sherpa-model.js';
import { ttsBody } from './helpers/server.js';
import { paceWebSocket, readAtPace } from './helpers/slow-reader.js';
import { TestSocket } from './helpers/ws-client.js';

const skip = containersUnavailable();
const containers: string[] = [];
const volumes: string[] = [];

before(async () => {
  if (skip) return;
  const { seconds } = await buildImage();
  const size = await podman(['image', 'inspect', IMAGE, '--format', '{{.Size}}']);
  console.log(`image ${IMAGE}: built in ${seconds} s, ${Math.round(Number(size) / 1e6)} MB`);
}, { timeout: 1_500_000 });

after(async () => {
  if (skip) return;
  if (containers.length) await run('podman', ['rm', '-f', '-t', '0', ...containers]);
  if (volumes.length) await run('podman', ['volume', 'rm', '-f', ...volumes]);
  removeRunDir();
});

interface Started {
  name: string;
  url: string;
  logs: ReturnType<typeof followLogs>;
}

async function start(options: { volume?: string; env?: Record<string, string>; mounts?: string[] } = {}): Promise<Started> {
  const name = runName('voicegate-test-');
  const volume = options.volume ?? runName('voicegate-test-data-');
  if (!volumes.includes(volume)) volumes.push(volume);
  containers.push(name);
  const env = Object.entries(options.env ?? {}).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  const mounts = (options.mounts ?? []).flatMap((m) => ['-v', m]);
  await podman(['run', '-d', '--name', name, '-p', '127.0.0.1::8080', '-v', `${volume}:/var/lib/voicegate`, ...mounts, ...env, IMAGE]);
  const url = `http://127.0.0.1:${await publishedPort(name, 8080)}`;
  const logs = followLogs(name);
  await until(async () => (await fetch(`${url}/readyz`)).status === 200, 120_000, `${name} ready\n${logs.text()}`);
  return { name, url, logs };
}

const speak = (url: string, key: string | null, body: Record<string, unknown>) =>
  fetch(`${url}/tts/bytes`, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) });

test('the image: non-root, production dependencies only, state in the volume, port 8080, a healthcheck', { skip: skip ?? false, timeout: 60_000 }, async () => {
  const config = JSON.parse(await podman(['image', 'inspect', IMAGE, '--format', '{{json .Config}}'])) as Record<string, any>;
  assert.equal(config.User, '10001:10001');
  assert.ok(config.ExposedPorts['8080/tcp'] !== undefined);
  assert.ok(config.Volumes['/var/lib/voicegate'] !== undefined);
  assert.ok((config.Env as string[]).includes('VOICEGATE_DATA_DIR=/var/lib/voicegate'));
  assert.ok((config.Env as string[]).includes('VOICEGATE_HOST=0.0.0.0'));
  assert.deepEqual(config.Cmd, ['voicegate', 'serve']);
  const healthcheck = await podman(['image', 'inspect', IMAGE, '--format', '{{json .HealthCheck}}']);
  assert.match(healthcheck, /voicegate.*healthcheck/);
  // No dev dependencies, no compiler, no tests in the image.
  const check = await run('podman', ['run', '--rm', '--tmpfs', '/var/lib/voicegate', IMAGE, 'sh', '-c', 'test ! -e node_modules/typescript && test ! -e node_modules/@cartesia/cartesia-js && test ! -e node_modules/openai && test ! -e dist/test && test -x "$(command -v voicegate)" && id -u']);
  assert.equal(check.code, 0, check.stderr);
  assert.equal(check.stdout.trim(), '10001');
});

test('docker run: the bootstrap key once, speech on the published port, the healthcheck, a restart that keeps the accounts', { skip: skip ?? false, timeout: 240_000 }, async () => {
  const volume = runName('voicegate-test-data-');
  const first = await start({ volume });
  const key = await until(async () => /sk_[0-9a-f]{16}_[A-Za-z0-9_-]+/.exec(first.logs.text())?.[0], 10_000, 'the bootstrap key in the log');
  const response = await speak(first.url, key, ttsBody({ transcript: 'Hello from the container.' }));
  assert.equal(response.status, 200);
  assert.ok(Number(response.headers.get('x-request-credits')) > 0);
  const audio = await decodeToFloat(Buffer.from(await response.arrayBuffer()), { container: 'wav', encoding: 'pcm_s16le', sampleRate: 22050 });
  assert.equal(audio.sampleRate, 22050);
  assert.ok(audio.samples.length > 22050 * 0.5 && rms(audio.samples) > 0.01, 'speech, not silence');
  const health = await run('podman', ['healthcheck', 'run', first.name]);
  assert.equal(health.code, 0, `healthcheck: ${health.stdout}${health.stderr}`);
  assert.equal((await podman(['exec', first.name, 'id', '-u'])).trim(), '10001');
  const owner = await podman(['exec', first.name, 'stat', '-c', '%u', '/var/lib/voicegate/voicegate.sqlite']);
  assert.equal(owner, '10001', 'the state lives in the volume, owned by the server user');
  await podman(['stop', '-t', '30', first.name], 60_000);
  first.logs.stop();

  const second = await start({ volume });
  const again = await speak(second.url, key, ttsBody({ transcript: 'Still here.' }));
  assert.equal(again.status, 200, 'the key from the first start still works');
  await again.arrayBuffer();
  assert.doesNotMatch(second.logs.text(), /sk_[0-9a-f]{16}_/, 'no second bootstrap key');
  second.logs.stop();
});

test('SIGTERM drains: readyz 503 at once, the open stream finishes, exit 0', { skip: skip ?? false, timeout: 180_000 }, async () => {
  const server = await start({ env: { VOICEGATE_ACCOUNTS: 'off', VOICEGATE_DRAIN_DELAY_MS: '1000' } });
  const stream = await speak(server.url, null, ttsBody({ transcript: 'Every word of this arrives before the server exits. '.repeat(20), stream: true, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } }));
  assert.equal(stream.status, 200);
  const reader = stream.body!.getReader();
  let bytes = (await reader.read()).value!.length;
  await podman(['kill', '--signal', 'TERM', server.name]);
  await until(async () => (await fetch(`${server.url}/readyz`)).status === 503, 5000, 'readyz 503 while draining');
  for (let r = await reader.read(); !r.done; r = await reader.read()) bytes += r.value.length;
  assert.ok(bytes > 22050 * 2 * 20, `the whole stream (${bytes} bytes)`);
  const code = await podman(['wait', server.name], 60_000);
  assert.equal(code.trim(), '0', `exit code\n${server.logs.text().slice(-2000)}`);
  server.logs.stop();
});

test('SIGTERM with slow readers: every byte of a bytes stream, an SSE stream and a WebSocket turn arrives, then exit 0', { skip: skip ?? false, timeout: 180_000 }, async () => {
  const server = await start({ env: { VOICEGATE_ACCOUNTS: 'off', VOICEGATE_DRAIN_DELAY_MS: '1000', VOICEGATE_SHUTDOWN_GRACE_MS: '25000' } });
  const agent = new Agent({ keepAlive: true });
  const send = (path: string, body: unknown) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(server.url + path, { agent, method: 'POST', headers: { 'content-type': 'application/json' } }, resolve);
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  // About 1 MB of audio each: made in a second or two, read in five. Most of it is still in the
  // server's socket buffers when the server has written the last byte, more than a client's own
  // buffers take, so a process that exited then would take it with it.
  const format = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 };
  const transcript = 'A player reads this at the speed it plays, and hears it to the very last word. '.repeat(4);
  const body = ttsBody({ transcript, output_format: format });
  // The turn is a third as long: the socket's close does not keep the server up for the streams.
  const turn = { model_id: 'gepard-1.0', voice: { mode: 'id', id: 'sarah' }, output_format: format, transcript: transcript.slice(0, transcript.length / 3), continue: false };
  const socketAudio = async (socket: TestSocket, id: string) => {
    await socket.waitFor((e) => e.type === 'done' && e.context_id === id, 60_000);
    return socket.of(id, 'chunk').reduce((n, e) => n + Buffer.from(e.data, 'base64').length, 0);
  };
  try {
    const expected = (await readAtPace(await send('/tts/bytes', body), 1 << 30)).bytes;
    const first = await TestSocket.open(server.url);
    first.send({ ...turn, context_id: 'before' });
    const expectedTurn = await socketAudio(first, 'before');
    first.ws.close();

    const socket = await TestSocket.open(server.url);
    const unpace = paceWebSocket(socket.ws, 270_000);
    socket.send({ ...turn, context_id: 'slow' });
    const [bytes, sse] = await Promise.all([send('/tts/bytes', body), send('/tts/sse', body)]);
    const reading = Promise.all([readAtPace(bytes, 200_000), readAtPace(sse, 270_000), socketAudio(socket, 'slow')]);
    await podman(['kill', '--signal', 'TERM', server.name]);
    const [heard, events, turnAudio] = await reading;
    assert.equal(heard.bytes, expected, 'every byte of the bytes stream');
    assert.match(events.text, /"type":"done"/, 'the SSE stream to its done event');
    assert.equal(turnAudio, expectedTurn, 'every byte of the WebSocket turn');
    assert.equal(await socket.waitForClose(30_000), 1001, 'the socket closed as going away once its turn ended');
    unpace();
    const code = await podman(['wait', server.name], 60_000);
    assert.equal(code.trim(), '0', `exit code\n${server.logs.text().slice(-2000)}`);
  } finally {
    agent.destroy();
    server.logs.stop();
  }
});

test('voicegate models pull --from, and VOICEGATE_PULL on first start serves a neural voice under the default model ids', { skip: skip ?? false, timeout: 300_000 }, async () => {
  const archive = standInArchive();
  const mount = `${archive}:/archives/vits-piper-en_US-lessac-medium.tar.bz2:ro`;
  // The command of the image, on a volume of its own.
  const pullVolume = runName('voicegate-test-data-');
  volumes.push(pullVolume);
  const pulled = await run('podman', ['run', '--rm', '-v', `${pullVolume}:/var/lib/voicegate`, '-v', mount, IMAGE, 'voicegate', 'models', 'pull', 'vits-piper-en_US-lessac-medium', '--from', '/archives/vits-piper-en_US-lessac-medium.tar.bz2'], { timeoutMs: 180_000 });
  assert.equal(pulled.code, 0, pulled.stderr);
  assert.match(pulled.stdout, /Installed vits-piper-en_US-lessac-medium in \/var\/lib\/voicegate\/models\/vits-piper-en_US-lessac-medium .*verified/);

  // One docker run with VOICEGATE_PULL.
  const server = await start({
    env: { VOICEGATE_ACCOUNTS: 'off', VOICEGATE_PULL: 'vits-piper-en_US-lessac-medium=/archives/vits-piper-en_US-lessac-medium.tar.bz2' },
    mounts: [mount],
  });
  assert.match(server.logs.text(), /"msg":"model installed and verified"/);
  const models = (await (await fetch(`${server.url}/models`)).json()) as { data: { id: string; engine: { type: string } }[] };
  for (const id of ['gepard-1.0', 'omnivoice']) assert.equal(models.data.find((m) => m.id === id)?.engine.type, 'sherpa-onnx', id);
  const response = await speak(server.url, null, ttsBody({ transcript: 'A natural voice in one command.', output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: STAND_IN_RATE } }));
  assert.equal(response.status, 200);
  const audio = await decodeToFloat(Buffer.from(await response.arrayBuffer()), { container: 'wav', encoding: 'pcm_s16le', sampleRate: STAND_IN_RATE });
  assert.ok(audio.samples.length > STAND_IN_RATE / 2 && rms(audio.samples) > 0.001, 'audio from the pulled model');
  server.logs.stop();
});
