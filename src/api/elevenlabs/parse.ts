/**
 * @module api/elevenlabs/parse
 * Decodes ElevenLabs' text-to-speech requests into the neutral `SpeechInput`:
 * the voice from the path and the `output_format` from the query (both
 * through the configured aliases and format names), the body's `text`,
 * `model_id`, `voice_settings`, `language_code`, dictionaries and
 * `apply_text_normalization`. An `output_format` the model does not serve on
 * that path (a clip, or a stream) is refused with the names it does serve.
 * Settings an engine cannot honour (stability,
 * similarity, style, speaker boost, seed, neighbouring text) are checked for
 * shape and accepted; unknown fields and query parameters are ignored, as
 * ElevenLabs does. A problem with a field is reported with its location, so
 * the error renderer can answer it as ElevenLabs' 422 validation error.
 */
import type { Config } from '../../config/schema.js';
import { ApiError } from '../../errors/api-error.js';
import type { ModelCatalogue } from '../../models/catalogue.js';
import { formatsServed, outputFormatProblem, type FormatRequest } from '../../models/output-format.js';
import { dialogueTranscript, type DialogueTurn } from '../../synthesis/dialogue.js';
import type { SpeechInput } from '../../synthesis/speech-input.js';

/** A field problem, with where it is (`['body', 'text']`): ElevenLabs answers these 422. */
export type Located = ApiError & { loc: (string | number)[] };

export function located(error: ApiError, ...loc: (string | number)[]): Located {
  return Object.assign(error, { loc });
}

function invalid(reason: string, ...loc: (string | number)[]): Located {
  return located(new ApiError('invalid_request', { reason }), ...loc);
}

export const DEFAULT_OUTPUT_FORMAT = 'mp3_44100_128';

/**
 * An ElevenLabs `output_format` name as Voicegate's neutral output format: `mp3_<rate>_<kbps>`,
 * `pcm_<rate>` (raw 16-bit little-endian mono), `ulaw_8000`, `alaw_8000`, `opus_48000_<kbps>` (Ogg
 * Opus) and `wav_<rate>`. What the model offers is checked when the request is resolved.
 */
export function outputFormatOf(name: string): FormatRequest {
  const match = /^(mp3|pcm|ulaw|alaw|opus|wav)_(\d{4,5})(?:_(\d{2,3}))?$/.exec(name);
  const problem = () => located(new ApiError('invalid_output_format', { reason: `output_format ${JSON.stringify(name.slice(0, 40))} is not one of mp3_22050_32, mp3_44100_{32,64,96,128,192}, pcm_{8000,16000,22050,24000,44100,48000}, ulaw_8000, alaw_8000, opus_48000_{32,64,96,128,192}, wav_{8000,…,48000}` }), 'query', 'output_format');
  if (!match) throw problem();
  const [, kind, rateText, kbps] = match;
  const rate = Number(rateText);
  const compressed = kind === 'mp3' || kind === 'opus';
  if (compressed !== (kbps !== undefined)) throw problem();
  switch (kind) {
    case 'mp3':
      return { container: 'mp3', sampleRate: rate, bitRate: Number(kbps) * 1000 };
    case 'opus':
      return { container: 'opus', sampleRate: rate, bitRate: Number(kbps) * 1000 };
    case 'pcm':
      return { container: 'raw', encoding: 'pcm_s16le', sampleRate: rate };
    case 'wav':
      return { container: 'wav', encoding: 'pcm_s16le', sampleRate: rate };
    case 'ulaw':
      return { container: 'raw', encoding: 'pcm_mulaw', sampleRate: rate };
    default:
      return { container: 'raw', encoding: 'pcm_alaw', sampleRate: rate };
  }
}

const RATES = [8000, 16000, 22050, 24000, 44100, 48000];
const KBPS = [32, 64, 96, 128, 192];

/** Every `output_format` the dialect offers, in the order a refusal lists them. */
export const ELEVENLABS_OUTPUT_FORMATS: Readonly<Record<string, FormatRequest>> = Object.fromEntries(
  [
    'mp3_22050_32',
    ...KBPS.map((kbps) => `mp3_44100_${kbps}`),
    ...RATES.map((rate) => `pcm_${rate}`),
    'ulaw_8000',
    'alaw_8000',
    ...RATES.map((rate) => `wav_${rate}`),
    ...KBPS.map((kbps) => `opus_48000_${kbps}`),
  ].map((name) => [name, outputFormatOf(name)]),
);

/** Format names written short, as ElevenLabs' docs do: `pcm_{8000,16000}, ulaw_8000 or wav_16000`. */
export function formatNames(names: readonly string[]): string {
  const groups = new Map<string, string[]>();
  for (const name of names) {
    const cut = name.lastIndexOf('_');
    const [head, tail] = [name.slice(0, cut), name.slice(cut + 1)];
    groups.set(head, [...(groups.get(head) ?? []), tail]);
  }
  const parts = [...groups].map(([head, tails]) => (tails.length === 1 ? `${head}_${tails[0]}` : `${head}_{${tails.join(',')}}`));
  return parts.length < 2 ? parts.join('') : `${parts.slice(0, -1).join(', ')} or ${parts.at(-1)}`;
}

/**
 * An `output_format` name as a request the model (when it exists) serves on this path; one it does
 * not is refused with the names it does. `named` is the model as the client named it.
 */
export function outputFormatFor(name: string, model: { id: string; named: string }, streaming: boolean, context: ElevenLabsContext): FormatRequest {
  const requested = outputFormatOf(name);
  const profile = context.models.get(model.id);
  if (!profile || !outputFormatProblem(requested, profile, streaming)) return requested;
  const served = formatsServed(ELEVENLABS_OUTPUT_FORMATS, profile, streaming);
  const path = streaming ? ' when streaming' : '';
  const use = served.length ? `use ${formatNames(served)}` : "it serves none of ElevenLabs' formats there";
  throw new ApiError('invalid_output_format', { reason: `output_format ${name} is not available for ${model.named}${path}; ${use}` });
}

/** The first value of a query parameter. */
export function queryValue(query: Record<string, string | string[] | undefined> | URLSearchParams, name: string): string | undefined {
  if (query instanceof URLSearchParams) return query.get(name) ?? undefined;
  const value = query[name];
  return Array.isArray(value) ? value[0] : value;
}

export interface ElevenLabsContext {
  aliases: Config['elevenlabs'];
  models: Pick<ModelCatalogue, 'get'>;
}

/** `voice_settings`: each setting's shape checked; `speed` (0.7–1.2, as ElevenLabs allows) becomes the generation speed. */
export function voiceSettings(value: unknown, at: string[]): { speed?: number } {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('voice_settings must be an object or null', ...at);
  const fields = value as Record<string, unknown>;
  for (const name of ['stability', 'similarity_boost', 'style'] as const) {
    const v = fields[name];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) throw invalid(`voice_settings.${name} must be a number from 0 to 1`, ...at, name);
  }
  const boost = fields.use_speaker_boost;
  if (boost !== undefined && boost !== null && typeof boost !== 'boolean') throw invalid('voice_settings.use_speaker_boost must be a boolean', ...at, 'use_speaker_boost');
  const speed = fields.speed;
  if (speed === undefined || speed === null) return {};
  if (typeof speed !== 'number' || !(speed >= 0.7 && speed <= 1.2)) throw invalid('voice_settings.speed must be a number from 0.7 to 1.2', ...at, 'speed');
  return speed === 1 ? {} : { speed };
}

/** `apply_text_normalization`: `off` turns the normaliser off, `on` turns it on, `auto` (or none) leaves the engine's setting. */
export function normalization(value: unknown, ...at: string[]): boolean | undefined {
  if (value === undefined || value === null || value === 'auto') return undefined;
  if (value === 'on' || value === 'off') return value === 'on';
  throw invalid('apply_text_normalization must be auto, on or off', ...at);
}

/** `pronunciation_dictionary_locators`: at most 3 of `{pronunciation_dictionary_id, version_id}`, Voicegate dictionary ids applied in order. */
export function dictionaries(value: unknown, ...at: string[]): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length > 3) throw invalid('pronunciation_dictionary_locators must be a list of at most 3 locators', ...at);
  return value.map((locator, i) => {
    const id = (locator as Record<string, unknown> | null)?.pronunciation_dictionary_id;
    if (typeof id !== 'string' || !id) throw invalid('each locator needs a pronunciation_dictionary_id', ...at, String(i), 'pronunciation_dictionary_id');
    return id;
  });
}

function optionalString(body: Record<string, unknown>, name: string, max: number): void {
  const v = body[name];
  if (v !== undefined && v !== null && (typeof v !== 'string' || v.length > max)) throw invalid(`${name} must be a string of at most ${max} characters`, 'body', name);
}

/** The model id a request names (through the aliases), or the configured default. */
export function modelIdOf(value: unknown, context: ElevenLabsContext, ...at: string[]): string {
  if (value === undefined || value === null || value === '') return context.aliases.defaultModel;
  if (typeof value !== 'string') throw invalid('model_id must be a string', ...at);
  return context.aliases.modelAliases[value] ?? value;
}

/** The model id a request names, when an alias turns it into another (`modelIdOf`); undefined otherwise. */
export function modelNamedOf(value: unknown, context: ElevenLabsContext): string | undefined {
  return typeof value === 'string' && Object.hasOwn(context.aliases.modelAliases, value) && context.aliases.modelAliases[value] !== value ? value : undefined;
}

export function voiceIdOf(id: string, context: ElevenLabsContext): string {
  return context.aliases.voiceAliases[id] ?? id;
}

export interface ElevenLabsInput extends SpeechInput {
  /** The alignment of the audio is wanted (`/with-timestamps`). */
  timestamps: boolean;
}

/** A REST request: `POST /v1/text-to-speech/{voice_id}[/stream][/with-timestamps]`. */
export function parseElevenLabsRequest(
  request: { body: Record<string, unknown>; params: Record<string, string>; query: Record<string, string | string[] | undefined> },
  options: { streaming: boolean; timestamps: boolean },
  context: ElevenLabsContext,
): ElevenLabsInput {
  const { body } = request;
  const text = body.text;
  if (typeof text !== 'string' || text.length === 0) throw located(new ApiError('missing_transcript'), 'body', 'text');
  const voice = request.params.voice_id;
  if (!voice) throw located(new ApiError('missing_voice_id'), 'path', 'voice_id');
  for (const name of ['previous_text', 'next_text']) optionalString(body, name, 10_000);
  const speed = voiceSettings(body.voice_settings, ['body', 'voice_settings']);
  return {
    ...sharedFields(request, options, context),
    transcript: text,
    voiceId: voiceIdOf(voice, context),
    generationConfig: speed.speed === undefined ? undefined : speed,
  };
}

/** The fields speech and dialogue bodies share, each checked where it stands: model, output format, language, seed, dictionaries, normalisation. */
function sharedFields(
  request: { body: Record<string, unknown>; query: Record<string, string | string[] | undefined> },
  options: { streaming: boolean; timestamps: boolean },
  context: ElevenLabsContext,
): Omit<ElevenLabsInput, 'transcript' | 'voiceId' | 'generationConfig'> {
  const { body } = request;
  const language = body.language_code;
  if (language !== undefined && language !== null && (typeof language !== 'string' || !/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(language))) {
    throw invalid('language_code must be a language code such as en or pt-BR', 'body', 'language_code');
  }
  const seed = body.seed;
  if (seed !== undefined && seed !== null && !(Number.isInteger(seed) && (seed as number) >= 0 && (seed as number) <= 4294967295)) {
    throw invalid('seed must be an integer from 0 to 4294967295', 'body', 'seed');
  }
  const dicts = dictionaries(body.pronunciation_dictionary_locators, 'body', 'pronunciation_dictionary_locators');
  const normalize = normalization(body.apply_text_normalization, 'body', 'apply_text_normalization');
  const modelNamed = modelNamedOf(body.model_id, context);
  const modelId = modelIdOf(body.model_id, context, 'body', 'model_id');
  const format = queryValue(request.query, 'output_format') || DEFAULT_OUTPUT_FORMAT;
  return {
    modelId,
    ...(modelNamed !== undefined ? { modelNamed } : {}),
    outputFormat: outputFormatFor(format, { id: modelId, named: modelNamed ?? modelId }, options.streaming, context),
    language: typeof language === 'string' ? language.toLowerCase() : null,
    streaming: options.streaming,
    wordTimestamps: options.timestamps,
    timestamps: options.timestamps,
    contextId: null,
    pronunciationDictId: null,
    ...(dicts ? { pronunciationDictIds: dicts } : {}),
    ...(normalize === undefined ? {} : { normalize }),
  };
}

/** `settings` of a dialogue: `stability` and `similarity`, each checked for shape (0 to 1) and accepted. */
function dialogueSettings(value: unknown): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('settings must be an object or null', 'body', 'settings');
  for (const name of ['stability', 'similarity'] as const) {
    const v = (value as Record<string, unknown>)[name];
    if (v !== undefined && v !== null && (typeof v !== 'number' || !(v >= 0 && v <= 1))) throw invalid(`settings.${name} must be a number from 0 to 1`, 'body', 'settings', name);
  }
}

/**
 * A dialogue: `POST /v1/text-to-dialogue[/stream][/with-timestamps]`, whose `inputs` are
 * `{text, voice_id}` turns (voice ids through the aliases), spoken in order. The other fields are
 * the speech body's; `settings` and the request-stitching fields are checked for shape and accepted.
 */
export function parseElevenLabsDialogue(
  request: { body: Record<string, unknown>; query: Record<string, string | string[] | undefined> },
  options: { streaming: boolean; timestamps: boolean },
  context: ElevenLabsContext,
): ElevenLabsInput {
  const { body } = request;
  const inputs = body.inputs;
  if (!Array.isArray(inputs) || inputs.length === 0) throw invalid('inputs must be a non-empty list of {text, voice_id}', 'body', 'inputs');
  const turns: DialogueTurn[] = inputs.map((input: unknown, index) => {
    const fields = (typeof input === 'object' && input !== null && !Array.isArray(input) ? input : {}) as Record<string, unknown>;
    if (typeof fields.text !== 'string') throw invalid('each input needs its text, a string', 'body', 'inputs', index, 'text');
    if (!fields.text.trim()) throw located(new ApiError('empty_dialogue_turn', { index }), 'body', 'inputs', index, 'text');
    if (typeof fields.voice_id !== 'string' || !fields.voice_id) throw located(new ApiError('missing_voice_id'), 'body', 'inputs', index, 'voice_id');
    return { transcript: fields.text, voiceId: voiceIdOf(fields.voice_id, context) };
  });
  for (const name of ['previous_text', 'future_text']) optionalString(body, name, 100);
  dialogueSettings(body.settings);
  return {
    ...sharedFields(request, options, context),
    transcript: dialogueTranscript(turns),
    voiceId: turns[0].voiceId,
    turns,
    generationConfig: undefined,
  };
}
