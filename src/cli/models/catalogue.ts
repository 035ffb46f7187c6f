/**
 * @module cli/models/catalogue
 * The voices `voicegate models pull` knows by name: the official sherpa-onnx
 * model archives (GitHub release assets of k2-fsa/sherpa-onnx, tag
 * `tts-models`). Sizes are the archives' approximate download sizes; a
 * SHA-256 is listed only where it is known, otherwise a pull trusts TLS and
 * the engine's own file checks.
 */

export interface CatalogueEntry {
  name: string;
  family: 'vits' | 'kokoro' | 'kitten' | 'matcha';
  language: string;
  sampleRate: number;
  speakers: number;
  /** Approximate archive size in bytes. */
  size: number;
  licence: string;
  description: string;
  sha256?: string;
}

export const DEFAULT_BASE_URL = 'https://github.com/k2-fsa/sherpa-onnx/releases/download/tts-models';

const MB = 1_000_000;

export const CATALOGUE: readonly CatalogueEntry[] = [
  { name: 'vits-piper-en_US-lessac-medium', family: 'vits', language: 'en-US', sampleRate: 22050, speakers: 1, size: 64 * MB, licence: 'MIT', description: 'Piper, US English, female, medium quality' },
  { name: 'vits-piper-en_US-amy-low', family: 'vits', language: 'en-US', sampleRate: 16000, speakers: 1, size: 63 * MB, licence: 'MIT', description: 'Piper, US English, female, low quality (fast)' },
  { name: 'vits-piper-en_US-ryan-medium', family: 'vits', language: 'en-US', sampleRate: 22050, speakers: 1, size: 64 * MB, licence: 'see the voice model card (rhasspy/piper-voices)', description: 'Piper, US English, male, medium quality' },
  { name: 'vits-piper-en_GB-alan-medium', family: 'vits', language: 'en-GB', sampleRate: 22050, speakers: 1, size: 64 * MB, licence: 'see the voice model card (rhasspy/piper-voices)', description: 'Piper, British English, male, medium quality' },
  { name: 'kokoro-en-v0_19', family: 'kokoro', language: 'en', sampleRate: 24000, speakers: 11, size: 330 * MB, licence: 'Apache-2.0', description: 'Kokoro 82M, English, 11 voices' },
  { name: 'kitten-nano-en-v0_1-fp16', family: 'kitten', language: 'en', sampleRate: 24000, speakers: 8, size: 24 * MB, licence: 'Apache-2.0', description: 'KittenTTS nano, English, 8 voices (small and fast)' },
];

export function findEntry(name: string): CatalogueEntry | undefined {
  return CATALOGUE.find((entry) => entry.name === name);
}

/** Where an archive is fetched from: `<base>/<name>.tar.bz2`. */
export function archiveUrl(name: string, baseUrl = DEFAULT_BASE_URL): string {
  return `${baseUrl.replace(/\/+$/, '')}/${name}.tar.bz2`;
}
