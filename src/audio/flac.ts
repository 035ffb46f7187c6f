/**
 * @module audio/flac
 * FLAC (16-bit, mono) through libFLAC compiled to WebAssembly (`libflacjs`):
 * a streaming encoder whose frames are written as each block of samples
 * completes, and a decoder for whole files (the tests' check of what was
 * sent). The first bytes are the `fLaC` marker and STREAMINFO; a stream's
 * STREAMINFO cannot carry the total length, which decoders do not need.
 */
import { createRequire } from 'node:module';

type FlacModule = any;

let loading: Promise<FlacModule> | null = null;

/** libFLAC, loaded once. */
function libflac(): Promise<FlacModule> {
  loading ??= new Promise((resolve) => {
    // Its Emscripten loader fetches the .wasm when a global fetch exists, which fails for a file
    // path under Node; without one it reads the file. Nothing else runs while it is hidden.
    const saved = globalThis.fetch;
    (globalThis as { fetch?: unknown }).fetch = undefined;
    let Flac: FlacModule;
    try {
      Flac = createRequire(import.meta.url)('libflacjs/dist/libflac.wasm.js');
    } finally {
      globalThis.fetch = saved;
    }
    if (Flac.isReady()) resolve(Flac);
    else Flac.on('ready', () => resolve(Flac));
  });
  return loading;
}

/** A streaming FLAC encoder of 16-bit mono samples. */
export interface FlacEncoder {
  encode(samples: Float32Array): Buffer;
  encodeInt16(samples: Int16Array): Buffer;
  end(): Buffer;
  close(): void;
}

export async function openFlacEncoder(sampleRate: number): Promise<FlacEncoder> {
  const Flac = await libflac();
  const handle = Flac.create_libflac_encoder(sampleRate, 1, 16, 5, 0, false);
  if (!handle) throw new Error(`libFLAC cannot encode at ${sampleRate} Hz`);
  let out: Buffer[] = [];
  const status = Flac.init_encoder_stream(handle, (data: Uint8Array, bytes: number) => void out.push(Buffer.from(data.subarray(0, bytes))), () => {});
  if (status !== 0) {
    Flac.FLAC__stream_encoder_delete(handle);
    throw new Error(`libFLAC encoder init failed (${status})`);
  }
  let open = true;
  const take = (): Buffer => {
    const bytes = Buffer.concat(out);
    out = [];
    return bytes;
  };
  const process = (samples: Int32Array): Buffer => {
    if (!open) throw new Error('flac encoder already ended');
    if (samples.length > 0 && !Flac.FLAC__stream_encoder_process_interleaved(handle, samples, samples.length)) throw new Error('libFLAC could not encode');
    return take();
  };
  return {
    encode(samples) {
      const ints = new Int32Array(samples.length);
      for (let i = 0; i < samples.length; i++) ints[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i] * 32767)));
      return process(ints);
    },
    encodeInt16: (samples) => process(Int32Array.from(samples)),
    end() {
      if (!open) return Buffer.alloc(0);
      Flac.FLAC__stream_encoder_finish(handle);
      open = false;
      Flac.FLAC__stream_encoder_delete(handle);
      return take();
    },
    close() {
      if (!open) return;
      open = false;
      Flac.FLAC__stream_encoder_delete(handle);
    },
  };
}

/** A whole FLAC file's samples (mono, scaled to ±1) and rate. */
export async function decodeFlac(bytes: Buffer): Promise<{ sampleRate: number; samples: Float32Array }> {
  const Flac = await libflac();
  const handle = Flac.create_libflac_decoder(false);
  let offset = 0;
  let sampleRate = 0;
  const parts: Float32Array[] = [];
  const read = (size: number) => {
    const end = Math.min(bytes.length, offset + size);
    const buffer = bytes.subarray(offset, end);
    offset = end;
    return { buffer, readDataLength: buffer.length, error: false };
  };
  const write = (channels: Uint8Array[], frame: { blocksize: number; bitsPerSample: number; sampleRate: number }) => {
    sampleRate = frame.sampleRate;
    const data = channels[0];
    const ints = new Int16Array(data.buffer, data.byteOffset, frame.blocksize);
    parts.push(Float32Array.from(ints, (s) => s / 32768));
  };
  const status = Flac.init_decoder_stream(handle, read, write, () => {}, () => {});
  if (status !== 0) throw new Error(`libFLAC decoder init failed (${status})`);
  const ok = Flac.FLAC__stream_decoder_process_until_end_of_stream(handle);
  Flac.FLAC__stream_decoder_finish(handle);
  Flac.FLAC__stream_decoder_delete(handle);
  if (!ok) throw new Error('not a FLAC stream libFLAC can decode');
  const samples = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) samples.set(part, (at += part.length) - part.length);
  return { sampleRate, samples };
}
