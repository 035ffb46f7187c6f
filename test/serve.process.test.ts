/**
 * @module test/serve.process
 * `voicegate serve` as a process, the way a container runs it: on SIGTERM
 * `/readyz` answers 503 at once while new requests are still served for the
 * drain delay, a stream in flight finishes whole and the process exits 0,
 * after slow readers have read their last byte and within 1 s of it; a
 * second signal ends it at once. `pull` installs a model from an archive on
 * first start (progress in the log), binds the shipped model ids to it and
 * serves them with it; a second start finds it installed. A gateway started
 * before its PostgreSQL server is reachable waits for it.
 */
import assert from 'node:assert/strict';
import { Agent, request, type IncomingMessage } from 'node:http';
import { after, test } from 'node:test';
import { decodeToFloat, rms } from '../src/audio/decode.js';
import { startGateway, type Gateway } from './helpers/gateways.js';
import { removeRunDir, standInArchive, STAND_IN_RATE } from './helpers/sherpa-model.js';
import { ttsBody } from './helpers/server.js';
import { readAtPace } from './helpers/slow-reader.js';
import { closedPort } from './helpers/redis.js';
import { until } from './helpers/poll.js';

after(() => removeRunDir());

const post = (gateway: Gateway, path: string, body: unknown) =>
  fetch(gateway.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

test('SIGTERM: readyz 503 at once, new requests served during the drain delay, the open stream finishes, exit 0', { timeout: 60_000 }, async () => {
  const gateway = await startGateway({ accounts: { enabled: false }, server: { drainDelayMs: 1500, shutdownGraceMs: 20_000 } });
  let code: number | null = null;
  gateway.process.once('exit', (c) => (code = c));
  try {
    assert.equal((await fetch(gateway.url + '/readyz')).status, 200);
    const long = 'Finish this sentence before you go, every word of it. '.repeat(30);
    const stream = await post(gateway, '/tts/bytes', ttsBody({ transcript: long, stream: true, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } }));
    assert.equal(stream.status, 200);
    const reader = stream.body!.getReader();
    let bytes = (await reader.read()).value!.length;
    gateway.process.kill('SIGTERM');
    await until(async () => (await fetch(gateway.url + '/readyz')).status === 503, { timeoutMs: 1000, intervalMs: 25, what: 'readyz 503 after SIGTERM' });
    const during = await post(gateway, '/tts/bytes', ttsBody({ transcript: 'Still served while draining.' }));
    assert.equal(during.status, 200, 'a request during the drain delay is served');
    assert.ok((await during.arrayBuffer()).byteLength > 44);
    for (let r = await reader.read(); !r.done; r = await reader.read()) bytes += r.value.length;
    assert.ok(bytes > 22050 * 2 * 40, `the whole stream arrived (${bytes} bytes)`);
    await gateway.exited;
    assert.equal(code, 0);
  } finally {
    await gateway.stop();
  }
});

test('keep-alive clients: answers during the drain say Connection: close; with only idle connections left the process exits within the drain delay and 1 s, not at the grace', { timeout: 60_000 }, async () => {
  const gateway = await startGateway({ accounts: { enabled: false }, server: { drainDelayMs: 1000, shutdownGraceMs: 20_000 } });
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  let exitedAt = 0;
  gateway.process.once('exit', () => (exitedAt = performance.now()));
  const get = (path: string) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(gateway.url + path, { agent }, (response) => {
        response.resume();
        response.on('end', () => resolve(response));
      });
      req.on('error', reject);
      req.end();
    });
  try {
    // Eight keep-alive connections, idle once answered.
    const answers = await Promise.all(Array.from({ length: 8 }, () => get('/healthz')));
    assert.ok(answers.every((a) => a.headers.connection === 'keep-alive'));
    const sent = performance.now();
    gateway.process.kill('SIGTERM');
    await until(async () => (await get('/readyz')).statusCode === 503, { timeoutMs: 1000, intervalMs: 25, what: 'readyz 503 after SIGTERM' });
    const during = await get('/healthz');
    assert.equal(during.headers.connection, 'close', 'an answer during the drain closes its connection');
    await gateway.exited;
    const seconds = (exitedAt - sent) / 1000;
    assert.ok(seconds < 1 + 1 + 0.5, `exited ${seconds.toFixed(2)} s after SIGTERM (drain delay 1 s, grace 20 s)`);
  } finally {
    agent.destroy();
    await gateway.stop();
  }
});

test('SIGTERM with slow readers: each gets every byte of its stream (bytes and SSE), and the process exits after the last one has read its end, within 1 s of it', { timeout: 60_000 }, async () => {
  const gateway = await startGateway({ accounts: { enabled: false }, server: { drainDelayMs: 500, shutdownGraceMs: 20_000 } });
  const agent = new Agent({ keepAlive: true });
  let exitedAt = 0;
  let code: number | null = null;
  gateway.process.once('exit', (c) => ((exitedAt = performance.now()), (code = c)));
  const send = (path: string, body: unknown) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(gateway.url + path, { agent, method: 'POST', headers: { 'content-type': 'application/json' } }, resolve);
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  try {
    // About 3 s of 8 kHz audio each: read at 16 kB/s, it takes the readers that long, while the
    // server has written it all into the sockets' buffers at once.
    const format = { container: 'raw', encoding: 'pcm_s16le', sample_rate: 8000 };
    const transcript = 'Read at the speed it plays, to the very last word. '.repeat(2);
    const bytesBody = ttsBody({ transcript, output_format: format });
    const sseBody = ttsBody({ transcript, output_format: format });
    const expected = (await readAtPace(await send('/tts/bytes', bytesBody), 1 << 30)).bytes;
    const [bytes, sse] = await Promise.all([send('/tts/bytes', bytesBody), send('/tts/sse', sseBody)]);
    assert.equal(bytes.headers.connection, 'keep-alive');
    const reading = Promise.all([readAtPace(bytes, 16_000), readAtPace(sse, 16_000 * 1.4)]);
    gateway.process.kill('SIGTERM');
    const [heard, events] = await reading;
    assert.equal(heard.bytes, expected, 'every byte of the bytes stream');
    assert.match(events.text, /"type":"done"/, 'the SSE stream to its done event');
    await gateway.exited;
    assert.equal(code, 0);
    assert.ok(heard.closedAt > 0 && events.closedAt > 0, 'the server closed both connections');
    const lastEnd = Math.max(heard.closedAt, events.closedAt);
    assert.ok(exitedAt >= lastEnd, `the process exited ${((lastEnd - exitedAt) / 1000).toFixed(2)} s before its last reader had its last byte`);
    assert.ok(exitedAt - lastEnd < 1000, `exited ${((exitedAt - lastEnd) / 1000).toFixed(2)} s after the last stream's end (grace 20 s)`);
  } finally {
    agent.destroy();
    await gateway.stop();
  }
});

test('a second signal ends a draining server at once', { timeout: 60_000 }, async () => {
  const gateway = await startGateway({ accounts: { enabled: false }, server: { drainDelayMs: 0, shutdownGraceMs: 30_000 } });
  let code: number | null = null;
  gateway.process.once('exit', (c) => (code = c));
  try {
    const stream = await post(gateway, '/tts/bytes', ttsBody({ transcript: 'A very long text to keep the stream open. '.repeat(45), stream: true, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } }));
    const reader = stream.body!.getReader();
    await reader.read(); // audio is flowing; a reader that pauses keeps the stream open
    gateway.process.kill('SIGTERM');
    await until(async () => (await fetch(gateway.url + '/readyz').catch(() => null))?.status !== 200, { timeoutMs: 2000, intervalMs: 25, what: 'draining' });
    const second = Date.now();
    gateway.process.kill('SIGTERM');
    await gateway.exited;
    assert.ok(Date.now() - second < 2000, 'exited soon after the second signal');
    assert.equal(code, 1);
    await reader.cancel().catch(() => {});
  } finally {
    await gateway.stop();
  }
});

test('pull installs a model from an archive on first start, binds the shipped models to it and serves speech with it', { timeout: 120_000 }, async () => {
  const archive = standInArchive();
  const gateway = await startGateway({ accounts: { enabled: false }, pull: [`vits-piper-en_US-lessac-medium=${archive}`] } as never, 90_000);
  try {
    const models = (await (await fetch(gateway.url + '/models')).json()) as { data: { id: string; engine: { id: string; type: string; native_sample_rate: number } }[] };
    const byId = Object.fromEntries(models.data.map((m) => [m.id, m.engine]));
    for (const id of ['gepard-1.0', 'omnivoice', 'vits-piper-en_US-lessac-medium']) {
      assert.equal(byId[id]?.id, 'vits-piper-en_US-lessac-medium', id);
      assert.equal(byId[id]?.type, 'sherpa-onnx', id);
    }
    const response = await post(gateway, '/tts/bytes', ttsBody({ transcript: 'A natural voice in one command.', output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: STAND_IN_RATE } }));
    assert.equal(response.status, 200);
    const audio = await decodeToFloat(Buffer.from(await response.arrayBuffer()), { container: 'wav', encoding: 'pcm_s16le', sampleRate: STAND_IN_RATE });
    assert.equal(audio.sampleRate, STAND_IN_RATE);
    assert.ok(audio.samples.length > STAND_IN_RATE / 2 && rms(audio.samples) > 0.001, 'speech from the pulled model');
  } finally {
    await gateway.stop();
  }
});

test('a pull entry that names no model stops start-up with the entry named', { timeout: 30_000 }, async () => {
  await assert.rejects(startGateway({ pull: ['../etc'] } as never), /pull: "\.\.\/etc" is not a model name/);
});

test('a gateway started before its PostgreSQL server is reachable waits for it', { timeout: 60_000 }, async () => {
  // A port that refuses connections: the gateway waits, logging, until its wait runs out.
  const port = await closedPort();
  const started = Date.now();
  const failure = await startGateway({ store: { databaseUrl: `postgres://postgres@127.0.0.1:${port}/test`, startupWaitMs: 1500 } } as never, 20_000).then(
    () => null,
    (err: Error) => err,
  );
  assert.ok(failure, 'the gateway gave up');
  assert.match(failure.message, /ECONNREFUSED|exited with 1/);
  assert.ok(Date.now() - started >= 1500, 'it waited for the database first');
});
