/**
 * @module engines/sherpa/model-worker
 * One sherpa-onnx model in a worker thread of the pool. It speaks one job at
 * a time, sentence by sentence (a sentence longer than `maxSentenceChars` cut
 * at clause punctuation: the session keeps the memory of the longest call it
 * made, ≈ 20 MiB per second of audio), and hands each sentence's audio (in pieces of
 * at most half a second) to the pool's worker half
 * (`engines/worker-pool/serve`) as soon as it is made, so first audio is the
 * first sentence. The pool's cancel flag is read before each sentence and
 * piece, and a slow reader pauses generation itself, not only the posting.
 * A cloning model speaks every sentence in the voice of the job's reference
 * clip (`generation.ts`).
 *
 * Each sentence is one synchronous `generate` call on this thread. sherpa's
 * `generateAsync` works on a native thread that calls back into this one,
 * and a worker terminated while such a call is in flight (a crash drill, a
 * cancel that did not land in time, shutdown) takes the whole process down;
 * a synchronous call only ever ends between sentences.
 * The model was loaded in a child process first (`probe.ts`), since sherpa
 * ends its process natively on a bad one.
 *
 * The binding is a parameter so a test can stand in for sherpa-onnx at this
 * boundary and see exactly what each call is given; `worker.ts` passes the
 * real one.
 */
import type { GeneratedAudio, OfflineTtsConfig, TtsRequest } from 'sherpa-onnx-node';
import { engineWorkerData, serveJobs } from '../worker-pool/serve.js';
import { generationRequest, warmUpRequest } from './generation.js';
import type { SherpaJob, SherpaReady, SherpaWorkerData } from './protocol.js';
import { sentences } from '../sentences.js';
import { providerFor } from './session-options.js';

/** The part of sherpa-onnx's `OfflineTts` a worker uses. */
export interface OfflineTtsBinding {
  readonly sampleRate: number;
  readonly numSpeakers: number;
  generate(request: TtsRequest): GeneratedAudio;
}

/**
 * Clamps a sentence's samples to −1…1 in place (NaN becomes 0). `enableExternalBuffer: false`
 * (generation.ts) makes sherpa copy them into an array of this thread's own, so nothing else sees
 * the change, and the pieces can be views of it: a job with an output stage encodes each piece at
 * once, and the pool copies a view it transfers (serve.ts), so no piece is copied twice.
 */
function clamped(samples: Float32Array): Float32Array {
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i];
    if (!(s >= -1 && s <= 1)) samples[i] = s > 1 ? 1 : s < -1 ? -1 : 0;
  }
  return samples;
}

/** Loads the model with `load` and serves the pool's jobs on this worker thread. */
export function serveModel(load: (config: OfflineTtsConfig) => OfflineTtsBinding): void {
  const { config: given, numSteps, sessionOptions, maxSentenceChars } = engineWorkerData<SherpaWorkerData>();
  // sherpa-onnx ends the whole process when the options file its provider names is missing: this
  // worker writes it again before it loads (a temporary folder cleaned since start), or loads without it.
  const config = sessionOptions ? { ...given, model: { ...given.model, provider: providerFor(sessionOptions) } } : given;
  const tts = load(config);
  // Warm up: the first generation sets up the phonemizer and the session's buffers.
  tts.generate(warmUpRequest(config, numSteps));
  const piece = Math.max(1, Math.round(tts.sampleRate / 2));

  serveJobs<SherpaJob, Float32Array, never, SherpaReady>(
    { sampleRate: tts.sampleRate, numSpeakers: tts.numSpeakers },
    (job, output) => {
      const options = { sid: job.sid, speed: job.speed, reference: job.reference, numSteps, lang: job.lang };
      for (const sentence of sentences(job.text, maxSentenceChars)) {
        if (output.cancelled()) return;
        const samples = clamped(tts.generate(generationRequest(sentence, options)).samples);
        for (let at = 0; at < samples.length && !output.cancelled(); at += piece) {
          output.push(samples.subarray(at, Math.min(samples.length, at + piece)));
        }
      }
    },
    // Pieces are already half a second: each goes out as it is made.
    { batch: 1 },
  );
}
