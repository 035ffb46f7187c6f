/**
 * @module test/engine-idle-unload
 * A sherpa-onnx engine with `idleUnloadSeconds` (the stand-in Piper model the
 * test writes): after the idle period its workers exit and the process's
 * resident size falls by at least 80 % of what loading the model added
 * (measured on a second load, the native library staying resident after the
 * first); `/readyz` stays ready meanwhile; the next request loads the model
 * again and speaks; the metrics say loaded or not and count the loads.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { removeRunDir, standInModel, STAND_IN_RATE } from './helpers/sherpa-model.js';
import { until } from './helpers/poll.js';
import { gainOf } from '../src/synthesis/voice-gain.js';
import { startServer, type TestServer } from './helpers/server.js';

let server: TestServer;

before(async () => {
  server = await startServer({
    config: {
      engines: { piper: { type: 'sherpa-onnx', model: standInModel(), workers: 2, idleUnloadSeconds: 1 } } as never,
      models: { 'piper-local': { extends: 'gepard-1.0', engine: 'piper' } } as never,
      metrics: { enabled: true, public: true },
    },
  });
  // The voice's loudness, measured first: a first request otherwise measures it with more speech of its own.
  await gainOf(server.app.services.engines.get('piper')!, (await server.app.services.voices.get('piper', null))!);
}, { timeout: 60_000 });
after(async () => {
  await server?.close();
  removeRunDir();
});

const info = () => server.app.services.engines.get('piper')!.info() as unknown as { loaded: boolean; loads: number; ready: boolean; lastLoadMs: number | null };

let spoken = 0;
/** A request the engine speaks (a new text each time, so the audio cache cannot answer it). */
async function speak(): Promise<string | null> {
  spoken++;
  const response = await server.post('/tts/bytes', {
    model_id: 'piper-local',
    transcript: `The model comes back when it is needed, time ${spoken}.`,
    voice: { mode: 'id', id: 'piper' },
    output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: STAND_IN_RATE },
  });
  assert.equal(response.status, 200, await response.clone().text());
  assert.ok((await response.arrayBuffer()).byteLength > 0);
  return response.headers.get('x-voicegate-engine-load-ms');
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{engine="piper"}`));
  assert.ok(line, `${name} for piper is in the metrics`);
  return Number(line.split(' ').pop());
}

// A full collection before each reading, so garbage of the test's own requests is not counted as the model's.
v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const rss = () => {
  gc();
  return process.memoryUsage().rss;
};

test('idle: the workers exit and memory returns; /readyz stays ready; the next request loads again and speaks; the loads are counted', { timeout: 90_000 }, async () => {
  assert.equal(info().loaded, true);
  assert.equal(await metric('voicegate_engine_loads_total'), 1);
  await speak();
  // The first unload: the native library stays resident, so what a load adds is measured on the second.
  await until(() => !info().loaded, { timeoutMs: 10_000 });
  assert.equal(await metric('voicegate_engine_loaded'), 0);
  const readyz = await fetch(`${server.url}/readyz`);
  assert.equal(readyz.status, 200);
  const ready = (await readyz.json()) as { status: string; engines: { id: string; loaded?: boolean; ready: boolean }[] };
  assert.equal(ready.status, 'ready');
  assert.deepEqual(ready.engines.filter((e) => e.id === 'piper').map((e) => [e.ready, e.loaded]), [[true, false]]);
  const unloaded = rss();
  // The request that found the model unloaded waited for the load, and says how long.
  const loadMs = await speak();
  assert.match(loadMs ?? '', /^\d+$/);
  assert.equal(Number(loadMs) >= 0 && Number(loadMs) <= info().lastLoadMs! + 50, true, `${loadMs} ms against the load's ${info().lastLoadMs} ms`);
  assert.equal(await speak(), null, 'a request on a loaded model waited for no load');
  assert.equal(info().loaded, true);
  assert.equal(info().loads, 2);
  assert.ok(typeof info().lastLoadMs === 'number');
  const loaded = rss();
  const added = loaded - unloaded;
  console.log(`rss unloaded ${(unloaded / 2 ** 20).toFixed(1)} MiB, loaded ${(loaded / 2 ** 20).toFixed(1)} MiB: the load added ${(added / 2 ** 20).toFixed(1)} MiB`);
  assert.ok(added > 4 * 2 ** 20, 'loading the workers adds memory');
  await until(() => !info().loaded, { timeoutMs: 10_000 });
  const fell = await until(() => {
    const now = rss();
    return loaded - now >= 0.8 * added && now;
  }, { timeoutMs: 15_000, intervalMs: 200, what: () => `rss ${(rss() / 2 ** 20).toFixed(1)} MiB to fall by 80 % of ${(added / 2 ** 20).toFixed(1)} MiB from ${(loaded / 2 ** 20).toFixed(1)} MiB` });
  console.log(`rss after the idle unload ${(fell / 2 ** 20).toFixed(1)} MiB`);
  assert.equal(await metric('voicegate_engine_loads_total'), 2);
  assert.equal(await metric('voicegate_engine_loaded'), 0);
  await speak();
  assert.equal(info().loads, 3, JSON.stringify(info()));
  assert.equal(await metric('voicegate_engine_loads_total'), 3);
});
