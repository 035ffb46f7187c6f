/**
 * @module synthesis/voice-gain
 * The fixed loudness gain of a voice on an engine (`voices/loudness.ts`):
 * from the levels the engine ships (eSpeak's measured table), otherwise
 * measured once per engine, voice and revision (a cloned voice's clip) — the
 * reference passage synthesised and its RMS taken — and kept. An engine that
 * keeps its own level (remote inference servers, which already serve one
 * loudness per voice and where measuring would spend a remote generation;
 * the tone test signal) gets gain 1.
 *
 * Resolving a request only looks the gain up (`knownGain`); it never runs an
 * engine, so nothing a caller sends makes an engine work before its request
 * has passed the limits and been admitted. A voice not measured yet is served
 * at unity gain, and the session starts its measurement in the background
 * when an admitted request with it ends (`measureInBackground`): one
 * measurement at a time per engine, voice and revision, tried again later if
 * it failed. Meanwhile the engine is busy with it, and may phrase a request
 * made then as it does when busy (a sherpa-onnx engine cuts a first
 * sentence's head, engines/sentences).
 */
import type { Engine, EngineInput, VoiceReference } from '../engines/engine.js';
import { gainForLevel, LevelMeter, REFERENCE_PASSAGE } from '../voices/loudness.js';
import type { Voice } from '../voices/voice.js';

/** Measured voices kept per engine; an engine serving more (cloned voices) forgets the oldest. */
const MAX_MEASURED = 4096;

interface Measured {
  /** Gains measured, by voice and revision. */
  gains: Map<string, number>;
  /** Measurements under way, by voice and revision. */
  running: Map<string, Promise<void>>;
}

const measured = new WeakMap<Engine, Measured>();

/** A voice's revision as far as its level goes: a cloned voice's clip (its digest); built-in voices have one. */
const keyOf = (voice: Voice, reference: VoiceReference | null) => (reference ? `${voice.id}@${reference.digest}` : voice.id);

function stateOf(engine: Engine): Measured {
  let state = measured.get(engine);
  if (!state) measured.set(engine, (state = { gains: new Map(), running: new Map() }));
  return state;
}

/**
 * Synthesises the reference passage with `voice` and returns its RMS level in dBFS. A cloning
 * engine speaks a cloned voice from its clip, so it is measured with `reference` as requests are.
 */
export async function measureLevel(
  engine: Engine,
  voice: Voice,
  signal: AbortSignal = new AbortController().signal,
  reference: VoiceReference | null = null,
): Promise<number> {
  const meter = new LevelMeter();
  const input: EngineInput = { text: REFERENCE_PASSAGE, voice, speed: 1, wordTimings: false };
  if (reference) input.reference = reference;
  for await (const chunk of engine.synthesize(input, signal)) meter.add(chunk.samples);
  return meter.dbfs();
}

/** The gain for `voice` on `engine` if it is known without running the engine (shipped, kept, or measured); null if not yet. */
export function knownGain(engine: Engine, voice: Voice, reference: VoiceReference | null = null): number | null {
  const loudness = engine.loudness;
  if (loudness && 'keep' in loudness) return 1;
  const level = loudness?.levels[voice.id];
  if (level !== undefined) return gainForLevel(level);
  return measured.get(engine)?.gains.get(keyOf(voice, reference)) ?? null;
}

/**
 * Measures `voice` on `engine` unless its gain is known or being measured; the requests after it
 * are served with the gain. Called for an admitted request, so only an admitted caller starts one.
 */
export function measureInBackground(engine: Engine, voice: Voice, reference: VoiceReference | null = null): void {
  void measurement(engine, voice, reference);
}

/**
 * Waits, under `signal`, until the gain of `voice` on `engine` is measured, measuring it if nobody
 * is; true if it was not known before. For work that speaks a voice at length after admission (a
 * long-form job), which would otherwise make its first segments at unity gain.
 */
export async function awaitMeasured(engine: Engine, voice: Voice, reference: VoiceReference | null, signal: AbortSignal): Promise<boolean> {
  const running = measurement(engine, voice, reference);
  if (!running) return false;
  signal.throwIfAborted();
  await new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    void running.then(() => (signal.removeEventListener('abort', onAbort), resolve()));
  });
  return true;
}

/** The gain of `voice` on `engine`, measured first if it is not known (a failed measurement gives 1). */
export async function gainOf(engine: Engine, voice: Voice, reference: VoiceReference | null = null, signal: AbortSignal = new AbortController().signal): Promise<number> {
  await awaitMeasured(engine, voice, reference, signal);
  return knownGain(engine, voice, reference) ?? 1;
}

/** The measurement of the voice under way (started here if none is); null when its gain is known. */
function measurement(engine: Engine, voice: Voice, reference: VoiceReference | null): Promise<void> | null {
  if (knownGain(engine, voice, reference) !== null) return null;
  const state = stateOf(engine);
  const key = keyOf(voice, reference);
  const running = state.running.get(key);
  if (running) return running;
  const run = measureLevel(engine, voice, undefined, reference).then(
    (level) => {
      if (state.gains.size >= MAX_MEASURED) state.gains.delete(state.gains.keys().next().value!);
      state.gains.set(key, gainForLevel(level));
    },
    // An engine stopping or failing: the next admitted request tries again.
    () => {},
  );
  state.running.set(key, run);
  void run.finally(() => state.running.delete(key));
  return run;
}

/** Resolves once every measurement of `engine` under way has ended (tests, and a warm-up that wants levels known). */
export async function measurementsSettled(engine: Engine): Promise<void> {
  const state = measured.get(engine);
  while (state && state.running.size > 0) await Promise.all(state.running.values());
}
