/**
 * @module cli/say/output
 * The audio file `say` writes: 16-bit PCM pieces joined into one WAV, MP3
 * or raw file. Each piece's first and last few milliseconds are faded, so
 * a join never steps between two unrelated sample values (a click). Bytes go
 * to a temporary file beside the target, renamed over it only once complete
 * (`commit`); `discard` removes it, so an interrupted run leaves no
 * half-written file. The container follows the file's extension.
 */
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { createAudioEncoder, finalWavHeader, type AudioEncoder } from '../../audio/encoder.js';
import type { Container, OutputFormat } from '../../audio/format.js';
import { int16ToFloat } from '../../audio/pcm.js';

/** Length of the fade at each end of a piece. */
export const FADE_MS = 5;

/** The container of a file named `path` (`say` writes WAV, MP3 and raw files). */
export function containerFor(path: string): Exclude<Container, 'opus' | 'flac'> | null {
  const ext = extname(path).toLowerCase();
  if (ext === '.wav') return 'wav';
  if (ext === '.mp3') return 'mp3';
  if (ext === '.raw' || ext === '.pcm') return 'raw';
  return null;
}

/** Fades both ends of a piece in place (linear, FADE_MS each), so consecutive pieces meet at zero. */
export function fadeEdges(samples: Float32Array, sampleRate: number): Float32Array {
  const n = Math.min(Math.round((sampleRate * FADE_MS) / 1000), Math.floor(samples.length / 2));
  for (let i = 0; i < n; i++) {
    const gain = i / n;
    samples[i] *= gain;
    samples[samples.length - 1 - i] *= gain;
  }
  return samples;
}

export class AudioFile {
  private dataBytes = 0;
  private finished = false;

  private constructor(
    readonly path: string,
    readonly tempPath: string,
    private readonly file: FileHandle,
    private readonly format: OutputFormat,
    private readonly encoder: AudioEncoder,
  ) {}

  static async create(path: string, format: OutputFormat): Promise<AudioFile> {
    const tempPath = join(dirname(path), `.${basename(path)}.${process.pid}.partial`);
    const encoder = await createAudioEncoder(format, { streaming: true });
    const file = await open(tempPath, 'w');
    const audio = new AudioFile(path, tempPath, file, format, encoder);
    // The WAV header is rewritten with the real size at the end.
    if (format.container === 'wav') await file.write(finalWavHeader(format, 0));
    return audio;
  }

  /** Appends one piece of 16-bit little-endian mono PCM at the file's sample rate. */
  async append(pcm: Buffer): Promise<void> {
    const int16 = new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + (pcm.byteLength & ~1)));
    const samples = fadeEdges(int16ToFloat(int16), this.format.sampleRate);
    await this.write(await this.encoder.encode(samples));
  }

  /** Finishes the file and moves it to its path. */
  async commit(): Promise<void> {
    await this.finish();
    await rename(this.tempPath, this.path);
  }

  /** `keep`: finish what was written and keep it under the real path (`--keep-partial`); otherwise delete it. */
  async discard(keep = false): Promise<void> {
    if (keep) return this.commit();
    await this.file.close().catch(() => {});
    await rm(this.tempPath, { force: true });
  }

  private async write(bytes: Buffer): Promise<void> {
    if (!bytes.length) return;
    await this.file.write(bytes);
    this.dataBytes += bytes.length;
  }

  private async finish(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    await this.write(await this.encoder.end());
    if (this.format.container === 'wav') await this.file.write(finalWavHeader(this.format, this.dataBytes), 0, undefined, 0);
    await this.file.close();
  }
}
