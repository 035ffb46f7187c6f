/**
 * @module engines/sherpa/sherpa-onnx-node
 * Types for the parts of `sherpa-onnx-node` (CommonJS, shipped without
 * declarations) that the engine uses: the offline TTS config per model
 * family, and `OfflineTts` with its sentence-by-sentence generation.
 */
declare module 'sherpa-onnx-node' {
  export interface VitsConfig {
    model: string;
    tokens: string;
    dataDir?: string;
    lexicon?: string;
    noiseScale?: number;
    noiseScaleW?: number;
    lengthScale?: number;
  }
  export interface KokoroConfig {
    model: string;
    voices: string;
    tokens: string;
    dataDir?: string;
    lexicon?: string;
    lang?: string;
    lengthScale?: number;
  }
  export interface KittenConfig {
    model: string;
    voices: string;
    tokens: string;
    dataDir?: string;
    lengthScale?: number;
  }
  export interface MatchaConfig {
    acousticModel: string;
    vocoder: string;
    tokens: string;
    dataDir?: string;
    lexicon?: string;
    noiseScale?: number;
    lengthScale?: number;
  }
  export interface ZipvoiceConfig {
    tokens: string;
    encoder: string;
    decoder: string;
    vocoder: string;
    dataDir?: string;
    lexicon?: string;
  }
  export interface PocketConfig {
    lmFlow: string;
    lmMain: string;
    encoder: string;
    decoder: string;
    textConditioner: string;
    vocabJson: string;
    tokenScoresJson: string;
  }
  export interface OfflineTtsModelConfig {
    vits?: VitsConfig;
    kokoro?: KokoroConfig;
    kitten?: KittenConfig;
    matcha?: MatchaConfig;
    zipvoice?: ZipvoiceConfig;
    pocket?: PocketConfig;
    numThreads?: number;
    provider?: string;
    debug?: boolean | number;
  }
  export interface OfflineTtsConfig {
    model: OfflineTtsModelConfig;
    maxNumSentences?: number;
    silenceScale?: number;
    ruleFsts?: string;
    ruleFars?: string;
  }
  export interface GenerationConfig {
    silenceScale?: number;
    speed?: number;
    sid?: number;
    numSteps?: number;
    referenceAudio?: Float32Array;
    referenceSampleRate?: number;
    referenceText?: string;
    extra?: Record<string, number | string>;
  }
  export interface TtsRequest {
    text: string;
    sid: number;
    speed: number;
    enableExternalBuffer?: boolean;
    generationConfig?: GenerationConfig;
  }
  export interface GeneratedAudio {
    samples: Float32Array;
    sampleRate: number;
  }
  export interface Progress {
    /** This sentence's samples. */
    samples: Float32Array;
    /** 0…1, how much of the text is done. */
    progress: number;
  }
  export class OfflineTts {
    constructor(config: OfflineTtsConfig);
    static createAsync(config: OfflineTtsConfig): Promise<OfflineTts>;
    readonly sampleRate: number;
    readonly numSpeakers: number;
    generate(request: TtsRequest & { callback?: (progress: Progress) => number }): GeneratedAudio;
    /** `onProgress` runs once per sentence; returning 0 or false cancels. */
    generateAsync(request: TtsRequest & { onProgress?: (progress: Progress) => number | boolean | void }): Promise<GeneratedAudio>;
  }
  const sherpa: { OfflineTts: typeof OfflineTts };
  export default sherpa;
}
