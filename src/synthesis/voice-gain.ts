/**
 * @module synthesis/voice-gain
 * The fixed loudness gain of a voice on an engine (`voices/loudness.ts`):
 * from the levels the engine ships (eSpeak's measured table), otherwise
 * measured once per engine and voice — the reference passage synthesised and
 * its RMS taken — the first time the voice is used, and kept. An engine that
 * keeps its own level (remote inference servers, which already serve one
 * loudness per voice and where measuring would spend a remote generation;
 * the tone test signal) gets gain 1.
 */
import type { Engine, EngineInput, VoiceReference } from '../engines/engine.js';
import { gainForLevel, LevelMeter, REFERENCE_PASSAGE } from '../voices/loudness.js';
import type { Voice } from '../voices/voice.js';

/** Measured voices kept per engine; an engine serving more (cloned voices) forgets the oldest. */
const MAX_MEASURED = 4096;

const measured = new WeakMap<Engine, Map<string, Promise<number>>>();

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

/** The gain for `voice` on `engine`; a failed measurement gives 1 this time and is tried again next time. */
export async function voiceGain(engine: Engine, voice: Voice, reference: VoiceReference | null = null): Promise<number> {
  const loudness = engine.loudness;
  if (loudness && 'keep' in loudness) return 1;
  const level = loudness?.levels[voice.id];
  if (level !== undefined) return gainForLevel(level);
  let voices = measured.get(engine);
  if (!voices) measured.set(engine, (voices = new Map()));
  let gain = voices.get(voice.id);
  if (!gain) {
    if (voices.size >= MAX_MEASURED) voices.delete(voices.keys().next().value!);
    gain = measureLevel(engine, voice, undefined, reference).then(gainForLevel);
    voices.set(voice.id, gain);
    gain.catch(() => voices.delete(voice.id));
  }
  try {
    return await gain;
  } catch {
    return 1;
  }
}
