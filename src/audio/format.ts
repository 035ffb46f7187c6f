/** @module audio/format — output format vocabulary shared by the HTTP layer and the encoders. */

/** `opus` is Opus in an Ogg container (RFC 7845); `flac` is 16-bit FLAC. */
export type Container = 'raw' | 'wav' | 'mp3' | 'opus' | 'flac';
export type Encoding = 'pcm_s16le' | 'pcm_f32le' | 'pcm_mulaw' | 'pcm_alaw';

/**
 * A requested output format. `encoding` is required for raw/wav and absent for mp3 and opus;
 * `bitRate` (bits per second) only applies to mp3 and opus.
 */
export interface OutputFormat {
  container: Container;
  encoding?: Encoding;
  sampleRate: number;
  bitRate?: number;
}

export const CONTENT_TYPES: Record<Container, string> = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
  raw: 'application/octet-stream',
};

/** Bytes per mono sample of a PCM-style encoding. */
export function bytesPerSample(encoding: Encoding): number {
  switch (encoding) {
    case 'pcm_s16le':
      return 2;
    case 'pcm_f32le':
      return 4;
    case 'pcm_mulaw':
    case 'pcm_alaw':
      return 1;
    default:
      throw new Error(`unknown encoding: ${String(encoding)}`);
  }
}
