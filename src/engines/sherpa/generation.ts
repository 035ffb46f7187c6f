/**
 * @module engines/sherpa/generation
 * The arguments of each sherpa-onnx `generate` call, for every family.
 *
 * Every call goes through `generationConfig` (sherpa-onnx-node ≥ 1.13 then
 * takes speaker and speed from it, not from the top level): that path throws
 * a catchable "TTS generation failed" when a model makes no audio, where the
 * plain `{ text, sid, speed }` path dereferences the missing result and ends
 * the process — which is what a cloning model (ZipVoice, Pocket) does
 * without a reference. Cloning models get their reference there too:
 * `referenceAudio`, `referenceSampleRate` and `referenceText`.
 */
import type { OfflineTtsConfig, TtsRequest } from 'sherpa-onnx-node';
import type { SherpaReference } from './protocol.js';

/** Whether the config loads a model that speaks in the voice of a reference clip. */
export function isCloningConfig(config: OfflineTtsConfig): boolean {
  return config.model.zipvoice !== undefined || config.model.pocket !== undefined;
}

export interface GenerationOptions {
  sid: number;
  speed: number;
  reference?: SherpaReference;
  /** Flow-matching steps of a cloning model; sherpa-onnx's own default when absent. */
  numSteps?: number;
  /** A multi-lingual Kokoro model's language (`extra.lang`, which overrides the config's `lang`). */
  lang?: string;
}

/** The request for one sentence. */
export function generationRequest(text: string, options: GenerationOptions): TtsRequest {
  const { sid, speed, reference, numSteps, lang } = options;
  const generationConfig: NonNullable<TtsRequest['generationConfig']> = { sid, speed };
  if (lang) generationConfig.extra = { lang };
  if (reference) {
    generationConfig.referenceAudio = reference.audio;
    generationConfig.referenceSampleRate = reference.sampleRate;
    if (reference.text) generationConfig.referenceText = reference.text;
    if (numSteps !== undefined) generationConfig.numSteps = numSteps;
  }
  return { text, sid, speed, enableExternalBuffer: false, generationConfig };
}

export const WARM_UP_TEXT = 'Ready.';

/**
 * A stand-in reference for the load probe and a worker's warm-up, which speak before any voice is
 * asked for: one second of a soft voiced buzz (a 120 Hz harmonic series) at 24 kHz, said to say
 * the warm-up text. Only the model's running matters, not how it sounds.
 */
export function warmUpReference(): SherpaReference {
  const rate = 24000;
  const audio = new Float32Array(rate);
  for (let n = 0; n < audio.length; n++) {
    let s = 0;
    for (let h = 1; h <= 8; h++) s += Math.sin((2 * Math.PI * 120 * h * n) / rate) / h;
    audio[n] = 0.05 * s * Math.sin((Math.PI * n) / audio.length);
  }
  return { audio, sampleRate: rate, text: WARM_UP_TEXT };
}

/** The warm-up (and probe) request for a model loaded with `config`. */
export function warmUpRequest(config: OfflineTtsConfig, numSteps?: number): TtsRequest {
  return generationRequest(WARM_UP_TEXT, { sid: 0, speed: 1, reference: isCloningConfig(config) ? warmUpReference() : undefined, numSteps });
}
