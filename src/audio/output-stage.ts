/**
 * @module audio/output-stage — what happens to an engine's samples on their way to a PCM-style
 * answer (raw or WAV; s16, f32, μ-law, A-law): the voice's gain, resampling to the output rate,
 * encoding. Synchronous and free of any thread's resources, so it runs where the audio is made:
 * inside an engine's worker thread (engines/staged), which hands the main thread finished bytes
 * instead of samples it would still have to filter and encode.
 *
 * A request's sentences may be made by different workers one after another, so the stage's whole
 * state is plain data (`StageState`: the FIR filter's, audio/fir-stream) that each job takes and
 * hands back; continued that way, the bytes are exactly those of one stage run over the whole
 * request on one thread. Only rate pairs with a FIR resampler (or none) have a stage: the others
 * use Speex, whose state lives in wasm memory, and stay on the main thread (synthesis/pipeline).
 */
import type { FirState, FirStream } from './fir-stream.js';
import type { Encoding, OutputFormat } from './format.js';
import { HalfbandUpsampler } from './halfband.js';
import { floatWithGain, int16AsBytes } from './pcm.js';
import { encodePcm } from './pcm-encoding.js';
import { createFirResampler, firResamples } from './resampler.js';

export interface StageSpec {
  /** The engine's rate. */
  inputRate: number;
  outputRate: number;
  encoding: Encoding;
}

/** Where a stage stands between jobs; `resampler` is null when the rates are equal. */
export interface StageState {
  resampler: FirState | null;
}

/** The stage for `format` from an engine at `inputRate`, or null when it has none (MP3, a Speex rate pair). */
export function stageSpecFor(inputRate: number, format: OutputFormat): StageSpec | null {
  if (format.container === 'mp3' || !format.encoding) return null;
  if (inputRate !== format.sampleRate && !firResamples(inputRate, format.sampleRate)) return null;
  return { inputRate, outputRate: format.sampleRate, encoding: format.encoding };
}

export class OutputStage {
  private readonly resampler: FirStream | null;
  /** 16-bit output at twice the rate (WAV 44.1 kHz from 22,050 Hz): rounded in the filter's kernel. */
  private readonly doubledS16: HalfbandUpsampler | null;

  /** A stage at the start of a stream, or continuing from `state`. */
  constructor(
    readonly spec: StageSpec,
    state?: StageState,
  ) {
    if (spec.inputRate === spec.outputRate) {
      this.resampler = this.doubledS16 = null;
      return;
    }
    const resampler = createFirResampler(spec.inputRate, spec.outputRate);
    if (!resampler) throw new RangeError(`no output stage resamples ${spec.inputRate} → ${spec.outputRate} Hz`);
    this.resampler = state?.resampler ? resampler.resume(state.resampler) : resampler;
    this.doubledS16 = spec.encoding === 'pcm_s16le' && resampler instanceof HalfbandUpsampler ? resampler : null;
  }

  /**
   * The bytes of the next samples at the engine's rate, under `gain`: 16-bit samples become
   * Float32 in the gain's pass (audio/pcm). May be empty while the filter holds input back.
   */
  encode(samples: Int16Array | Float32Array, gain: number): Buffer {
    const scaled = floatWithGain(samples, gain);
    if (this.doubledS16) return int16AsBytes(this.doubledS16.processS16(scaled));
    return encodePcm(this.spec.encoding, this.resampler ? this.resampler.process(scaled) : scaled);
  }

  /** The bytes the filter still holds; ends the stream. */
  flush(): Buffer {
    if (this.doubledS16) return int16AsBytes(this.doubledS16.flushS16());
    return encodePcm(this.spec.encoding, this.resampler ? this.resampler.flush() : new Float32Array(0));
  }

  /** The state to continue from, on this thread or another. */
  state(): StageState {
    return { resampler: this.resampler ? this.resampler.snapshot() : null };
  }
}
