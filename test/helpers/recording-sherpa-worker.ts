/**
 * @module test/helpers/recording-sherpa-worker
 * A sherpa-onnx engine worker whose binding is a recorder instead of
 * sherpa-onnx: the real model worker (`engines/sherpa/model-worker`) runs
 * with it, and every `generate` call it makes is reported on the
 * BroadcastChannel named in `workerData` (`channel`), so a test sees at the
 * worker boundary exactly what sherpa would be given. Each call answers a
 * tenth of a second of tone at 24 kHz.
 */
import type { TtsRequest } from 'sherpa-onnx-node';
import { isMainThread } from 'node:worker_threads';
import { serveModel } from '../../src/engines/sherpa/model-worker.js';
import { engineWorkerData } from '../../src/engines/worker-pool/serve.js';

/** What the recorder reports of one call: the request, with the reference audio summarised. */
export interface RecordedCall {
  text: string;
  sid: number;
  speed: number;
  generationConfig: Omit<NonNullable<TtsRequest['generationConfig']>, 'referenceAudio'> | null;
  referenceAudio: { length: number; shared: boolean; head: number[] } | null;
}

// `npm test` also loads every file under test/ on the main thread: there it is only a module.
if (!isMainThread) serve();

function serve(): void {
  const { channel: name } = engineWorkerData<{ channel: string }>();
  const channel = new BroadcastChannel(name);

  serveModel(() => ({
    sampleRate: 24000,
    numSpeakers: 1,
    generate(request: TtsRequest) {
      const { referenceAudio, ...rest } = request.generationConfig ?? {};
      const call: RecordedCall = {
        text: request.text,
        sid: request.sid,
        speed: request.speed,
        generationConfig: request.generationConfig ? rest : null,
        referenceAudio: referenceAudio
          ? { length: referenceAudio.length, shared: referenceAudio.buffer instanceof SharedArrayBuffer, head: Array.from(referenceAudio.subarray(0, 4)) }
          : null,
      };
      channel.postMessage(call);
      const samples = new Float32Array(2400);
      for (let n = 0; n < samples.length; n++) samples[n] = 0.1 * Math.sin((2 * Math.PI * 200 * n) / 24000);
      return { samples, sampleRate: 24000 };
    },
  }));
}
