/**
 * @module warm-up
 * Warm before ready, on the main thread. A fresh process runs its code in
 * V8's interpreter: the first requests after a start spend tens of
 * milliseconds each compiling regular expressions (the normaliser), routes,
 * schemas, the session and the framing, while the callers wait. So before the
 * server listens, `warmUp` runs a few rounds of real requests through the
 * HTTP synthesis routes, in-process (`inject`, no socket), on a second
 * Fastify instance registered with the same route code: V8 shares what it
 * learns between the two, since the functions are the same. That instance
 * is handed the server's catalogues and engines, but the local gate (nothing
 * authenticated, reserved or charged), no audio cache, and an instance id of
 * its own, so the metrics, request logs and concurrency counts of the
 * server, which read only their instance's diagnostics events, never see the
 * warm-up. WebSocket turns share the session and framing code but are not
 * run here. Engines warm their own workers in their `start()`.
 */
import { buildHttpServer } from './http/server.js';
import type { Logger } from './log/logger.js';
import type { ModelProfile } from './models/profile.js';
import { registerSynthesisRoutes } from './routes.js';
import type { Services } from './services.js';
import { localGate } from './synthesis/gate.js';

/** Rounds of the request set; each round's requests run at once, as a burst of callers would. */
const ROUNDS = 3;
/** The warm-up gives up (and the server starts anyway, colder) after this long. */
const DEADLINE_MS = 20_000;
/** Engines warmed, one model each (the first bound to it in catalogue order). */
const MAX_ENGINES = 4;

/**
 * Short text that still takes the normaliser's common rules (money, times, numbers, abbreviations)
 * and more than one sentence: the main thread's cost per request hardly depends on the length, and
 * a neural engine's does (each request is real synthesis, and its session keeps buffers as large as
 * its longest input).
 */
const TEXTS = ['Hi! That is $5.20 at 3 PM.', 'Dr. Lee is in room 4. Press 1.', "Sorry, I didn't catch that?"];

interface WarmRequest {
  url: string;
  body: Record<string, unknown>;
}

/** The requests of one model: each endpoint, streamed and whole, at the rates and encodings callers use most. */
function requestsFor(model: ModelProfile): WarmRequest[] {
  const voice = { mode: 'id', id: model.defaultVoice ?? 'sarah' };
  const cartesia = (n: number, output_format: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    model_id: model.id,
    transcript: TEXTS[n % TEXTS.length],
    voice,
    output_format,
    ...extra,
  });
  const raw = (encoding: string, sample_rate: number) => ({ container: 'raw', encoding, sample_rate });
  const openai = (n: number, response_format: string, extra: Record<string, unknown> = {}) => ({
    model: model.id,
    input: TEXTS[n % TEXTS.length],
    ...(model.defaultVoice ? {} : { voice: voice.id }),
    response_format,
    ...extra,
  });
  return [
    { url: '/tts/sse', body: cartesia(0, raw('pcm_s16le', 24000), { add_timestamps: true }) },
    { url: '/tts/sse', body: cartesia(1, raw('pcm_mulaw', 8000)) },
    { url: '/tts/sse', body: cartesia(2, raw('pcm_s16le', 22050)) },
    { url: '/tts/bytes', body: cartesia(0, raw('pcm_s16le', 16000)) },
    { url: '/tts/bytes', body: cartesia(1, { container: 'wav', encoding: 'pcm_s16le', sample_rate: 44100 }) },
    { url: '/v1/audio/speech', body: openai(2, 'pcm', { stream_format: 'audio' }) },
    { url: '/v1/audio/speech', body: openai(0, 'wav') },
  ];
}

/**
 * Runs the warm-up; resolves with how many requests answered 200 and how many did not. It never
 * throws: a request that fails (a model whose voice or format differs) is counted and skipped.
 */
export async function warmUp(services: Services, logger: Logger): Promise<{ ok: number; failed: number; ms: number }> {
  const started = performance.now();
  const quiet = logger.child({ warmUp: true }, { level: 'silent' });
  const warm: Services = {
    ...services,
    logger: quiet,
    gate: localGate,
    cache: null,
    metrics: null,
    accounts: null,
    jobs: null,
    instanceId: `${services.instanceId}/warm-up`,
  };
  // No TLS on a server that never listens: building one must not create a CA or read key files.
  const http = buildHttpServer({ config: { ...services.config, server: { ...services.config.server, tls: null } }, logger: quiet }, () => false);
  registerSynthesisRoutes(http, warm);
  const failures = new Set(services.engines.failures().map((f) => f.id));
  const byEngine = new Map<string, ModelProfile>();
  for (const model of services.models.list()) {
    if (!failures.has(model.engine) && services.engines.get(model.engine)?.isReady() && !byEngine.has(model.engine)) byEngine.set(model.engine, model);
  }
  const models = [...byEngine.values()].slice(0, MAX_ENGINES);
  const requests = models.flatMap(requestsFor);
  let ok = 0;
  let failed = 0;
  try {
    await http.ready();
    const deadline = started + DEADLINE_MS;
    for (let round = 0; round < ROUNDS && performance.now() < deadline; round++) {
      await Promise.all(
        requests.map(async ({ url, body }) => {
          const response = await http.inject({ method: 'POST', url, payload: body }).catch(() => null);
          if (response?.statusCode === 200) ok++;
          else failed++;
        }),
      );
    }
  } finally {
    await http.close();
  }
  const ms = Math.round(performance.now() - started);
  logger.info({ requests: ok + failed, failed, ms }, 'warmed up the synthesis routes');
  return { ok, failed, ms };
}
