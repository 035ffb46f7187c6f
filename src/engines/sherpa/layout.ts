/**
 * @module engines/sherpa/layout
 * Finds out what a model folder holds — the unpacked sherpa-onnx archive an
 * operator points `model` at — and turns it into sherpa-onnx's config: the
 * family (vits/Piper, kokoro, kitten, matcha with its vocoder, zipvoice,
 * pocket) from the ONNX metadata and the file names, and each file the
 * family needs. Anything detected can be overridden in config; paths there
 * are relative to the model folder.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { OfflineTtsConfig, OfflineTtsModelConfig } from 'sherpa-onnx-node';
import { readOnnxSummary } from './onnx-metadata.js';

export const FAMILIES = ['vits', 'kokoro', 'kitten', 'matcha', 'zipvoice', 'pocket'] as const;
export type Family = (typeof FAMILIES)[number];

/** Families that speak in the voice of a reference clip rather than a fixed speaker. */
export const CLONING_FAMILIES: ReadonlySet<Family> = new Set(['zipvoice', 'pocket']);

/** The files a family may use, by sherpa-onnx's config names. */
export const FILE_ROLES = [
  'model',
  'tokens',
  'dataDir',
  'lexicon',
  'voices',
  'acousticModel',
  'vocoder',
  'encoder',
  'decoder',
  'lmFlow',
  'lmMain',
  'textConditioner',
  'vocabJson',
  'tokenScoresJson',
] as const;
export type FileRole = (typeof FILE_ROLES)[number];
export type ModelFiles = Partial<Record<FileRole, string>>;

/** What each family cannot do without; `dataDir` is filled from the bundled eSpeak NG when absent. */
export const REQUIRED: Record<Family, FileRole[]> = {
  vits: ['model', 'tokens'],
  kokoro: ['model', 'voices', 'tokens'],
  kitten: ['model', 'voices', 'tokens'],
  matcha: ['acousticModel', 'vocoder', 'tokens'],
  // ZipVoice's phonemizer ends the process without a lexicon.
  zipvoice: ['encoder', 'decoder', 'vocoder', 'tokens', 'lexicon'],
  pocket: ['lmFlow', 'lmMain', 'encoder', 'decoder', 'textConditioner', 'vocabJson', 'tokenScoresJson'],
};

/** The ONNX files of a family whose metadata sherpa reads (and aborts without). */
export const WITH_METADATA: Record<Family, FileRole[]> = {
  vits: ['model'],
  kokoro: ['model'],
  kitten: ['model'],
  matcha: ['acousticModel'],
  zipvoice: [],
  pocket: [],
};

export interface LayoutOverrides {
  family?: Family;
  files?: ModelFiles;
  /** Kokoro's language (`en-us`, …) for multi-lingual voices. */
  lang?: string;
}

export interface ModelLayout {
  dir: string;
  family: Family;
  /** Absolute paths. */
  files: ModelFiles;
  /** The main model's ONNX metadata (empty when it could not be read). */
  metadata: Record<string, string>;
}

export class LayoutError extends Error {}

const onnxFiles = (names: string[]) => names.filter((n) => n.endsWith('.onnx')).sort(preferFullPrecision);

/** `model.onnx` before `model.int8.onnx`, then by name. */
function preferFullPrecision(a: string, b: string): number {
  const quantised = (n: string) => (/\.(int8|fp16|q8|uint8)\.onnx$/.test(n) ? 1 : 0);
  return quantised(a) - quantised(b) || a.localeCompare(b);
}

const first = (names: string[], pattern: RegExp) => names.find((n) => pattern.test(n));

/**
 * The lexicons a model is given: every `lexicon*.txt`, except that a multi-lingual Kokoro archive's
 * two English ones (`lexicon-us-en.txt`, `lexicon-gb-en.txt`) spell the same words, so only the
 * American one is loaded beside `lexicon-zh.txt`, as sherpa-onnx's own examples do.
 */
function lexicons(names: string[]): string[] {
  const all = names.filter((n) => /^lexicon.*\.txt$/.test(n)).sort();
  return all.includes('lexicon-us-en.txt') ? all.filter((n) => n !== 'lexicon-gb-en.txt') : all;
}

function familyOf(metadata: Record<string, string>): Family | undefined {
  const type = (metadata.model_type ?? '').toLowerCase();
  if (type.includes('kokoro')) return 'kokoro';
  if (type.includes('kitten')) return 'kitten';
  if (type.includes('matcha')) return 'matcha';
  if (type.includes('zipvoice')) return 'zipvoice';
  if (type.includes('vits') || metadata.comment === 'piper') return 'vits';
  return undefined;
}

function metadataOf(path: string | undefined): Record<string, string> {
  if (!path || !existsSync(path)) return {};
  try {
    return readOnnxSummary(path).metadata;
  } catch {
    return {}; // reported by validation, which reads it again
  }
}

/** Detects the family and files of the model folder `dir`, then applies the overrides. */
export function detectLayout(dir: string, overrides: LayoutOverrides = {}): ModelLayout {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new LayoutError(`the model folder ${root} does not exist`);
  const names = readdirSync(root);
  const onnx = onnxFiles(names);
  const at = (name: string | undefined) => (name === undefined ? undefined : join(root, name));
  const detected: ModelFiles = {
    tokens: at(first(names, /^tokens\.txt$/)),
    dataDir: at(names.includes('espeak-ng-data') ? 'espeak-ng-data' : undefined),
    lexicon: lexicons(names).map((n) => join(root, n)).join(',') || undefined,
    voices: at(first(names, /^voices.*\.bin$/)),
    vocoder: at(first(onnx, /vocos|hifigan|vocoder/i)),
    lmFlow: at(first(onnx, /^lm_flow/)),
    lmMain: at(first(onnx, /^lm_main/)),
    textConditioner: at(first(onnx, /^text_conditioner/)),
    vocabJson: at(first(names, /^vocab\.json$/)),
    tokenScoresJson: at(first(names, /^token_scores\.json$/)),
  };
  const acoustic = onnx.filter((n) => !/vocos|hifigan|vocoder/i.test(n));
  const main = at(first(acoustic, /^model\.onnx$/) ?? acoustic[0]);
  const explicit = resolveFiles(root, overrides.files ?? {});
  const metadata = metadataOf(explicit.model ?? explicit.acousticModel ?? main);

  let family = overrides.family;
  if (!family) {
    if (detected.lmFlow && detected.lmMain) family = 'pocket';
    else if (first(onnx, /encoder/) && first(onnx, /decoder/)) family = 'zipvoice';
    else family = familyOf(metadata) ?? (detected.vocoder ? 'matcha' : detected.voices ? (/kitten/i.test(root) ? 'kitten' : 'kokoro') : 'vits');
  }
  const files: ModelFiles = { ...detected };
  if (family === 'matcha') files.acousticModel = main;
  else if (family === 'zipvoice' || family === 'pocket') {
    files.encoder = at(first(onnx, /^(text_)?encoder/) ?? first(onnx, /encoder/));
    files.decoder = at(first(onnx, /^(fm_)?decoder/) ?? first(onnx, /decoder/));
  } else files.model = main;
  Object.assign(files, explicit);
  return { dir: root, family, files, metadata };
}

function resolveFiles(root: string, files: ModelFiles): ModelFiles {
  const out: ModelFiles = {};
  for (const [role, path] of Object.entries(files) as [FileRole, string][]) {
    out[role] = role === 'lexicon' ? path.split(',').map((p) => (isAbsolute(p) ? p : join(root, p))).join(',') : isAbsolute(path) ? path : join(root, path);
  }
  return out;
}

/** sherpa-onnx's config for the layout. */
export function sherpaConfig(layout: ModelLayout, options: { numThreads: number; lang?: string; provider?: string }): OfflineTtsConfig {
  const f = layout.files;
  const model: OfflineTtsModelConfig = { numThreads: options.numThreads, provider: options.provider ?? 'cpu', debug: false };
  const dataDir = f.dataDir ?? '';
  const lexicon = f.lexicon ?? '';
  switch (layout.family) {
    case 'vits':
      model.vits = { model: f.model!, tokens: f.tokens!, dataDir, lexicon };
      break;
    case 'kokoro':
      model.kokoro = { model: f.model!, voices: f.voices!, tokens: f.tokens!, dataDir, lexicon, ...(options.lang ? { lang: options.lang } : {}) };
      break;
    case 'kitten':
      model.kitten = { model: f.model!, voices: f.voices!, tokens: f.tokens!, dataDir };
      break;
    case 'matcha':
      model.matcha = { acousticModel: f.acousticModel!, vocoder: f.vocoder!, tokens: f.tokens!, dataDir, lexicon };
      break;
    case 'zipvoice':
      model.zipvoice = { encoder: f.encoder!, decoder: f.decoder!, vocoder: f.vocoder!, tokens: f.tokens!, dataDir, lexicon };
      break;
    case 'pocket':
      model.pocket = {
        lmFlow: f.lmFlow!,
        lmMain: f.lmMain!,
        encoder: f.encoder!,
        decoder: f.decoder!,
        textConditioner: f.textConditioner!,
        vocabJson: f.vocabJson!,
        tokenScoresJson: f.tokenScoresJson!,
      };
      break;
  }
  // One sentence per generation step, so each sentence's audio goes out as soon as it is made.
  return { model, maxNumSentences: 1 };
}
