/**
 * @module audio/mp3 — streaming mono CBR MP3 encoding (LAME via wasm-media-encoders) and the
 * sample-rate/bit-rate compatibility rules, so requests LAME would silently alter are refused.
 *
 * MP3 only exists at 9 sample rates, and the legal bit rates depend on the MPEG version implied by
 * the rate. Measured against the encoder's own frame headers (every rate × every bit rate it
 * accepts, with outputSampleRate pinned):
 *  - MPEG-1   (32000/44100/48000 Hz): 32–320 kbps honoured; lower requests become 32 kbps.
 *  - MPEG-2   (16000/22050/24000 Hz): 8–160 kbps honoured; higher requests become 160 kbps.
 *  - MPEG-2.5 (8000/11025/12000 Hz):  8–64 kbps honoured; higher requests become 64 kbps
 *    (LAME's own cap, stricter than the 160 kbps the MPEG-2.5 table allows).
 * 56 and 144 kbps are legal MPEG rates that wasm-media-encoders rejects outright. Without an
 * explicit outputSampleRate LAME also resamples on its own (e.g. 32 kbps drops to 22.05 kHz), so
 * the encoder always pins it to the input rate.
 */

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createEncoder, createMp3Encoder } from 'wasm-media-encoders';

type MpegVersion = 'MPEG-1' | 'MPEG-2' | 'MPEG-2.5';

const VERSION_BY_RATE: ReadonlyMap<number, MpegVersion> = new Map([
  [8000, 'MPEG-2.5'],
  [11025, 'MPEG-2.5'],
  [12000, 'MPEG-2.5'],
  [16000, 'MPEG-2'],
  [22050, 'MPEG-2'],
  [24000, 'MPEG-2'],
  [32000, 'MPEG-1'],
  [44100, 'MPEG-1'],
  [48000, 'MPEG-1'],
]);

/** Layer III bit-rate tables (kbps) from ISO 11172-3 / 13818-3, capped where LAME caps them. */
const MPEG_KBPS: Record<MpegVersion, readonly number[]> = {
  'MPEG-1': [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  'MPEG-2': [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  'MPEG-2.5': [8, 16, 24, 32, 40, 48, 56, 64],
};

/** CBR values wasm-media-encoders accepts (it has no 56 or 144). */
const ENCODER_KBPS: ReadonlySet<number> = new Set([8, 16, 24, 32, 40, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]);

export const MP3_SAMPLE_RATES: readonly number[] = [...VERSION_BY_RATE.keys()];

/** Bit rates (bits/s) the encoder honours exactly at `sampleRate`; empty if mp3 lacks that rate. */
export function mp3BitRates(sampleRate: number): number[] {
  const version = VERSION_BY_RATE.get(sampleRate);
  if (!version) return [];
  return MPEG_KBPS[version].filter((k) => ENCODER_KBPS.has(k)).map((k) => k * 1000);
}

/** A sensible default when a request names no bit rate: 128k, or the rate's ceiling if lower. */
export function defaultMp3BitRate(sampleRate: number): number {
  const rates = mp3BitRates(sampleRate);
  if (rates.length === 0) throw new RangeError(`mp3 does not support a sample rate of ${sampleRate} Hz`);
  return Math.min(128000, rates[rates.length - 1]);
}

/**
 * Why LAME cannot produce exactly `bitRate` bits/s CBR at `sampleRate` Hz, as a message for the
 * client, or null when the pair is honoured as requested.
 */
export function mp3BitRateProblem(sampleRate: number, bitRate: number): string | null {
  const version = VERSION_BY_RATE.get(sampleRate);
  if (!version) {
    return `mp3 does not support a sample rate of ${sampleRate} Hz; use one of ${MP3_SAMPLE_RATES.join(', ')}`;
  }
  const allowed = mp3BitRates(sampleRate);
  if (allowed.includes(bitRate)) return null;
  const min = allowed[0];
  const max = allowed[allowed.length - 1];
  if (bitRate > max) return `mp3 at ${sampleRate} Hz supports bit rates up to ${max}; ${bitRate} was requested`;
  if (bitRate < min) return `mp3 at ${sampleRate} Hz supports bit rates down to ${min}; ${bitRate} was requested`;
  return `mp3 at ${sampleRate} Hz supports bit rates ${allowed.join(', ')}; ${bitRate} was requested`;
}

export interface Mp3Stream {
  /** Encodes the next chunk; may return nothing while LAME fills a frame. */
  encode(samples: Float32Array): Uint8Array;
  /** Emits the buffered final frames; the stream is finished afterwards. */
  flush(): Uint8Array;
}

type Mp3Encoder = Awaited<ReturnType<typeof createMp3Encoder>>;

/** createEncoder's wasm argument; a compiled WebAssembly.Module is one of its accepted forms. */
type WasmSource = Parameters<typeof createEncoder>[1];
/** The WebAssembly global, typed locally: this project's lib settings (no DOM) do not declare it. */
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmSource> } })
  .WebAssembly;

let compiled: Promise<WasmSource> | undefined;

/**
 * Every stream needs its own encoder instance (LAME state lives in wasm memory), but compiling the
 * wasm per request would be wasted work: compile the packaged mp3.wasm once and instantiate that.
 */
async function newEncoder(): Promise<Mp3Encoder> {
  // Async wrapper so a failing import.meta.resolve becomes a rejection and takes the fallback below.
  compiled ??= (async () => {
    const path = fileURLToPath(import.meta.resolve('wasm-media-encoders/wasm/mp3'));
    return wasm.compile(await readFile(path));
  })().catch((err: unknown) => {
    compiled = undefined;
    throw err;
  });
  try {
    return await createEncoder('audio/mpeg', await compiled);
  } catch {
    return createMp3Encoder(); // the package's inlined copy, in case the .wasm file is not reachable
  }
}

/** Creates a mono CBR MP3 stream; throws with mp3BitRateProblem's message for unsupported pairs. */
export async function createMp3Stream(sampleRate: number, bitRate: number): Promise<Mp3Stream> {
  const problem = mp3BitRateProblem(sampleRate, bitRate);
  if (problem) throw new RangeError(problem);
  const encoder = await newEncoder();
  encoder.configure({
    channels: 1,
    sampleRate,
    outputSampleRate: sampleRate as Parameters<Mp3Encoder['configure']>[0]['outputSampleRate'],
    bitrate: (bitRate / 1000) as Parameters<Mp3Encoder['configure']>[0]['bitrate'],
  });
  let done = false;
  return {
    encode(samples: Float32Array): Uint8Array {
      if (done) throw new Error('mp3 stream already flushed');
      if (samples.length === 0) return new Uint8Array(0);
      // The result is a view into wasm memory that the next call overwrites: copy it out.
      return encoder.encode([samples]).slice();
    },
    flush(): Uint8Array {
      if (done) return new Uint8Array(0);
      done = true;
      return encoder.finalize().slice();
    },
  };
}
