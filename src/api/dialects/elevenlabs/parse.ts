/**
 * @module api/elevenlabs/parse
 * Decodes ElevenLabs' text-to-speech requests into the neutral `SpeechInput`:
 * the voice from the path and the `output_format` from the query (both
 * through the configured aliases and format names), the body's `text`,
 * `model_id`, `voice_settings`, `language_code`, dictionaries and
 * `apply_text_normalization`, as the route's schema (`schema.ts`) has
 * validated them. An `output_format` the model does not serve on that path
 * (a clip, or a stream) is refused here with the names it does serve.
 * Settings an engine cannot honour (stability, similarity, style, speaker
 * boost, seed, neighbouring text) are checked for shape and accepted; unknown
 * fields and query parameters are ignored, as ElevenLabs does. A problem with
 * a field is reported with its location, so the error renderer can answer it
 * as ElevenLabs' 422 validation error.
 */
import type { Config } from '../../../config/schema.js';
import { ApiError } from '../../../errors/api-error.js';
import type { ModelCatalogue } from '../../../models/catalogue.js';
import { formatsServed, outputFormatProblem, type FormatRequest } from '../../../models/output-format.js';
import { dialogueTranscript, type DialogueTurn } from '../../../synthesis/dialogue.js';
import type { SpeechInput } from '../../../synthesis/speech-input.js';
import type { z } from 'zod';
import { dictionaryLocatorsSchema, textNormalizationSchema, voiceSettingsSchema, type DialogueBody, type SpeechBody } from './schema.js';

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

/** `value` as `schema` reads it, or the first problem as a field problem at `at` (the WebSocket's messages, which no route schema validates). */
function checked<T>(schema: z.ZodType<T>, value: unknown, at: readonly (string | number)[]): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw invalid(issue.message, ...at, ...issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part)));
}

/** `voice_settings` (`schema.ts`): `speed` (0.7–1.2, as ElevenLabs allows) becomes the generation speed; the rest are accepted. */
export function voiceSettings(value: unknown, at: string[]): { speed?: number } {
  const speed = checked(voiceSettingsSchema, value, at)?.speed;
  return speed === undefined || speed === null || speed === 1 ? {} : { speed };
}

/** `apply_text_normalization`: `off` turns the normaliser off, `on` turns it on, `auto` (or none) leaves the engine's setting. */
export function normalization(value: unknown, ...at: string[]): boolean | undefined {
  const mode = checked(textNormalizationSchema, value, at);
  return mode === 'on' || mode === 'off' ? mode === 'on' : undefined;
}

/** `pronunciation_dictionary_locators`: at most 3 of `{pronunciation_dictionary_id, version_id}`, Voicegate dictionary ids applied in order. */
export function dictionaries(value: unknown, ...at: string[]): string[] | undefined {
  return checked(dictionaryLocatorsSchema, value, at)?.map((locator) => locator.pronunciation_dictionary_id);
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

/** A REST request: `POST /v1/text-to-speech/{voice_id}[/stream][/with-timestamps]`, its body as the route's schema validated it. */
export function parseElevenLabsRequest(
  request: { body: Record<string, unknown>; params: Record<string, string>; query: Record<string, string | string[] | undefined> },
  options: { streaming: boolean; timestamps: boolean },
  context: ElevenLabsContext,
): ElevenLabsInput {
  const body = request.body as SpeechBody;
  const voice = request.params.voice_id;
  if (!voice) throw located(new ApiError('missing_voice_id'), 'path', 'voice_id');
  const speed = body.voice_settings?.speed;
  return {
    ...sharedFields(request, body, options, context),
    transcript: body.text,
    voiceId: voiceIdOf(voice, context),
    generationConfig: speed === undefined || speed === null || speed === 1 ? undefined : { speed },
  };
}

/** The fields speech and dialogue bodies share: model, output format (what the model serves on this path), language, dictionaries, normalisation. */
function sharedFields(
  request: { query: Record<string, string | string[] | undefined> },
  body: SpeechBody | DialogueBody,
  options: { streaming: boolean; timestamps: boolean },
  context: ElevenLabsContext,
): Omit<ElevenLabsInput, 'transcript' | 'voiceId' | 'generationConfig'> {
  const dicts = body.pronunciation_dictionary_locators?.map((locator) => locator.pronunciation_dictionary_id);
  const mode = body.apply_text_normalization;
  const modelNamed = modelNamedOf(body.model_id, context);
  const modelId = modelIdOf(body.model_id, context, 'body', 'model_id');
  const format = queryValue(request.query, 'output_format') || DEFAULT_OUTPUT_FORMAT;
  return {
    modelId,
    ...(modelNamed !== undefined ? { modelNamed } : {}),
    outputFormat: outputFormatFor(format, { id: modelId, named: modelNamed ?? modelId }, options.streaming, context),
    language: body.language_code ? body.language_code.toLowerCase() : null,
    streaming: options.streaming,
    wordTimestamps: options.timestamps,
    timestamps: options.timestamps,
    contextId: null,
    pronunciationDictId: null,
    ...(dicts ? { pronunciationDictIds: dicts } : {}),
    ...(mode === 'on' || mode === 'off' ? { normalize: mode === 'on' } : {}),
  };
}

/**
 * A dialogue: `POST /v1/text-to-dialogue[/stream][/with-timestamps]`, whose `inputs` are
 * `{text, voice_id}` turns (voice ids through the aliases), spoken in order. The other fields are
 * the speech body's; `settings` and the request-stitching fields are checked for shape (by the
 * route's schema) and accepted.
 */
export function parseElevenLabsDialogue(
  request: { body: Record<string, unknown>; query: Record<string, string | string[] | undefined> },
  options: { streaming: boolean; timestamps: boolean },
  context: ElevenLabsContext,
): ElevenLabsInput {
  const body = request.body as DialogueBody;
  const turns: DialogueTurn[] = body.inputs.map((input) => ({ transcript: input.text, voiceId: voiceIdOf(input.voice_id, context) }));
  return {
    ...sharedFields(request, body, options, context),
    transcript: dialogueTranscript(turns),
    voiceId: turns[0].voiceId,
    turns,
    generationConfig: undefined,
  };
}
