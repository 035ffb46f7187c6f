/**
 * @module engines/sherpa/probe-child
 * The load probe's child process: loads the model with the config it is sent,
 * reports the rate and speaker count, speaks one word (so a graph that loads
 * but cannot run is found too; a cloning model speaks it in the voice of a
 * stand-in reference, `generation.ts`) and exits. If sherpa-onnx aborts
 * natively on a bad model, only this process dies.
 */
import sherpa, { type OfflineTtsConfig } from 'sherpa-onnx-node';
import { warmUpRequest } from './generation.js';

process.once('message', (config: OfflineTtsConfig) => {
  const tts = new sherpa.OfflineTts(config);
  const audio = tts.generate(warmUpRequest(config));
  process.send?.({ sampleRate: tts.sampleRate, numSpeakers: tts.numSpeakers, samples: audio.samples.length }, () => process.exit(0));
});
