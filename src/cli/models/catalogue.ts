/**
 * @module cli/models/catalogue
 * The voices `voicegate models pull` knows by name: the official sherpa-onnx
 * model archives (GitHub release assets of k2-fsa/sherpa-onnx, tag
 * `tts-models`, as its export workflows pack them). Sizes are the archives'
 * approximate download sizes (they only size the progress bar). sherpa-onnx
 * publishes no checksums for these archives, so no entry carries a SHA-256:
 * a pull trusts TLS and the engine's own file checks, and an operator who
 * has a digest passes it with `--sha256`.
 */

export interface CatalogueEntry {
  name: string;
  family: 'vits' | 'kokoro' | 'kitten' | 'matcha';
  /** The language its voices speak (BCP 47), or `multilingual` with `languages`. */
  language: string;
  /** A multilingual model's languages. */
  languages?: readonly string[];
  sampleRate: number;
  speakers: number;
  /** Approximate archive size in bytes. */
  size: number;
  licence: string;
  description: string;
  /** Published by the archive's maker; none of the current archives has one. */
  sha256?: string;
  /** The archive's top-level files and folders (below its one folder), as its export workflow packs them. */
  files?: readonly string[];
}

export const DEFAULT_BASE_URL = 'https://github.com/k2-fsa/sherpa-onnx/releases/download/tts-models';

const MB = 1_000_000;

/** Kokoro v1's languages (the first letter of a speaker's name, see engines/sherpa/kokoro). */
const KOKORO_V1_LANGUAGES = ['en-US', 'en-GB', 'es', 'fr', 'hi', 'it', 'ja', 'pt-BR', 'zh'] as const;

/** The files of a multi-lingual Kokoro archive (sherpa-onnx `.github/workflows/export-kokoro.yaml`). */
export const KOKORO_MULTI_LANG_FILES = [
  'LICENSE',
  'README.md',
  'espeak-ng-data',
  'voices.bin',
  'tokens.txt',
  'lexicon-gb-en.txt',
  'lexicon-us-en.txt',
  'lexicon-zh.txt',
  'dict',
  'date-zh.fst',
  'number-zh.fst',
  'phone-zh.fst',
] as const;

const kokoro = (name: string, onnx: string, speakers: number, size: number, description: string): CatalogueEntry => ({
  name,
  family: 'kokoro',
  language: 'multilingual',
  languages: speakers > 53 ? ['en-US', 'en-GB', 'zh'] : KOKORO_V1_LANGUAGES,
  sampleRate: 24000,
  speakers,
  size,
  licence: 'Apache-2.0',
  description,
  files: [...KOKORO_MULTI_LANG_FILES, onnx],
});

const kittenFiles = (onnx: string) => ['LICENSE', 'README.md', 'espeak-ng-data', onnx, 'voices.bin', 'tokens.txt'];
const kitten = (name: string, onnx: string, size: number, description: string): CatalogueEntry => ({
  name,
  family: 'kitten',
  language: 'en-US',
  sampleRate: 24000,
  speakers: 8,
  size,
  licence: 'Apache-2.0',
  description,
  files: kittenFiles(onnx),
});

/** A Piper voice as sherpa-onnx packs it: `<voice>.onnx`, `tokens.txt`, `espeak-ng-data/` and the model card. */
const piper = (voice: string, language: string, size: number, licence: string, description: string, sampleRate = 22050): CatalogueEntry => ({
  name: `vits-piper-${voice}`,
  family: 'vits',
  language,
  sampleRate,
  speakers: 1,
  size,
  licence,
  description,
  files: [`${voice}.onnx`, `${voice}.onnx.json`, 'tokens.txt', 'espeak-ng-data', 'MODEL_CARD'],
});

const CARD = 'see the voice model card (rhasspy/piper-voices)';

export const CATALOGUE: readonly CatalogueEntry[] = [
  piper('en_US-lessac-medium', 'en-US', 64 * MB, 'MIT', 'Piper, US English, female, medium quality'),
  piper('en_US-amy-low', 'en-US', 63 * MB, 'MIT', 'Piper, US English, female, low quality (fast)', 16000),
  piper('en_US-ryan-medium', 'en-US', 64 * MB, CARD, 'Piper, US English, male, medium quality'),
  piper('en_GB-alan-medium', 'en-GB', 64 * MB, CARD, 'Piper, British English, male, medium quality'),
  piper('de_DE-thorsten-medium', 'de-DE', 64 * MB, 'CC0-1.0 (Thorsten dataset)', 'Piper, German, male, medium quality'),
  piper('fr_FR-siwis-medium', 'fr-FR', 64 * MB, 'CC-BY-4.0 (SIWIS dataset)', 'Piper, French, female, medium quality'),
  piper('es_ES-davefx-medium', 'es-ES', 64 * MB, CARD, 'Piper, Spanish (Spain), male, medium quality'),
  piper('es_MX-ald-medium', 'es-MX', 64 * MB, CARD, 'Piper, Spanish (Mexico), male, medium quality'),
  piper('it_IT-paola-medium', 'it-IT', 64 * MB, CARD, 'Piper, Italian, female, medium quality'),
  piper('it_IT-riccardo-x_low', 'it-IT', 29 * MB, CARD, 'Piper, Italian, male, extra-low quality (fastest)', 16000),
  piper('pt_BR-faber-medium', 'pt-BR', 64 * MB, CARD, 'Piper, Brazilian Portuguese, male, medium quality'),
  piper('pt_PT-tugao-medium', 'pt-PT', 64 * MB, CARD, 'Piper, European Portuguese, male, medium quality'),
  piper('nl_NL-mls-medium', 'nl-NL', 64 * MB, 'CC-BY-4.0 (Multilingual LibriSpeech)', 'Piper, Dutch, medium quality'),
  piper('nl_BE-nathalie-medium', 'nl-BE', 64 * MB, CARD, 'Piper, Flemish Dutch, female, medium quality'),
  { name: 'kokoro-en-v0_19', family: 'kokoro', language: 'en-US', sampleRate: 24000, speakers: 11, size: 330 * MB, licence: 'Apache-2.0', description: 'Kokoro 82M v0.19, English, 11 voices', files: ['LICENSE', 'README.md', 'espeak-ng-data', 'model.onnx', 'voices.bin', 'tokens.txt'] },
  kokoro('kokoro-multi-lang-v1_0', 'model.onnx', 53, 333 * MB, 'Kokoro 82M v1.0, 53 voices in 9 languages'),
  kokoro('kokoro-int8-multi-lang-v1_0', 'model.int8.onnx', 53, 140 * MB, 'Kokoro 82M v1.0, int8 (smaller, faster, a little rougher)'),
  kokoro('kokoro-multi-lang-v1_1', 'model.onnx', 103, 390 * MB, 'Kokoro 82M v1.1-zh, 103 voices, Chinese and English'),
  kokoro('kokoro-int8-multi-lang-v1_1', 'model.int8.onnx', 103, 170 * MB, 'Kokoro 82M v1.1-zh, int8 (smaller, faster, a little rougher)'),
  kitten('kitten-nano-en-v0_1-fp16', 'model.fp16.onnx', 24 * MB, 'KittenTTS nano v0.1, English, 8 voices (small and fast)'),
  kitten('kitten-nano-en-v0_2-fp16', 'model.fp16.onnx', 24 * MB, 'KittenTTS nano v0.2, English, 8 voices'),
  kitten('kitten-mini-en-v0_1-fp16', 'model.fp16.onnx', 80 * MB, 'KittenTTS mini v0.1, English, 8 voices'),
  kitten('kitten-nano-en-v0_8-fp32', 'model.fp32.onnx', 60 * MB, 'KittenTTS nano v0.8, English, 8 voices'),
  kitten('kitten-nano-en-v0_8-int8', 'model.int8.onnx', 30 * MB, 'KittenTTS nano v0.8, int8, English, 8 voices (smallest)'),
  kitten('kitten-micro-en-v0_8', 'model.onnx', 45 * MB, 'KittenTTS micro v0.8, English, 8 voices'),
  kitten('kitten-mini-en-v0_8', 'model.onnx', 85 * MB, 'KittenTTS mini v0.8, English, 8 voices'),
];

export function findEntry(name: string): CatalogueEntry | undefined {
  return CATALOGUE.find((entry) => entry.name === name);
}

/** The group an entry is listed under by `models list --available`: its base language, or `multilingual`. */
export function languageGroup(entry: CatalogueEntry): string {
  return entry.languages ? 'multilingual' : entry.language.split('-')[0];
}

/** Where an archive is fetched from: `<base>/<name>.tar.bz2`. */
export function archiveUrl(name: string, baseUrl = DEFAULT_BASE_URL): string {
  return `${baseUrl.replace(/\/+$/, '')}/${name}.tar.bz2`;
}
