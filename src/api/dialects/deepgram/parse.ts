/**
 * @module api/deepgram/parse
 * Decodes Deepgram's Aura requests into the neutral `SpeechInput`: the
 * `model` query parameter (an Aura name) through the `deepgram.models`
 * table, or `aura-2-<voice_id>-<lang>` for any voice here; `encoding`,
 * `container`, `sample_rate` and `bit_rate` by Deepgram's table of
 * combinations (a combination it does not list is its 400 `Unsupported audio
 * format: …`); `speed`; the body's `text`. Other query parameters
 * (`tag`, `mip_opt_out`, `callback`) are ignored. Errors
 * carry Deepgram's `err_code` and `err_msg` (`errors.ts` renders them).
 */
import type { Config } from '../../../config/schema.js';
import { ApiError } from '../../../errors/api-error.js';
import type { FormatRequest } from '../../../models/output-format.js';
import type { SpeechInput } from '../../../synthesis/speech-input.js';

/** A refusal as Deepgram words it; `status` when it differs from the registry code's. */
export type DeepgramFault = ApiError & { deepgram: { err_code: string; err_msg: string; status?: number } };

export function deepgramFault(error: ApiError, errCode: string, errMsg: string, status?: number): DeepgramFault {
  return Object.assign(error, { deepgram: { err_code: errCode, err_msg: errMsg, ...(status === undefined ? {} : { status }) } });
}

export const DEFAULT_MODEL = 'aura-asteria-en';

export function unknownModel(name: string): DeepgramFault {
  return deepgramFault(new ApiError('model_not_found', { reason: `model ${name.slice(0, 100)} does not exist` }), 'Bad Request', 'Bad Request: No such model/version combination found.', 400);
}

function unsupported(message: string): DeepgramFault {
  return deepgramFault(new ApiError('invalid_output_format', { reason: `Unsupported audio format: ${message}` }), 'INVALID_QUERY_PARAMETER', `Unsupported audio format: ${message}`);
}

function badQuery(message: string): DeepgramFault {
  return deepgramFault(new ApiError('invalid_request', { reason: message }), 'INVALID_QUERY_PARAMETER', `Failed to deserialize query parameters: ${message}`);
}

type Query = Record<string, string | string[] | undefined> | URLSearchParams;

/** The first value of a query parameter. */
export function queryValue(query: Query, name: string): string | undefined {
  if (query instanceof URLSearchParams) return query.get(name) ?? undefined;
  const value = query[name];
  return Array.isArray(value) ? value[0] : value;
}

/** What an Aura name speaks with here. */
export interface AuraModel {
  name: string;
  modelId: string;
  voiceId: string;
}

/** Whether a voice here exists and its language (built-in voices are known without a lookup). */
export interface DeepgramContext {
  config: Config['deepgram'];
  builtinLanguage(voiceId: string): string | undefined;
}

const LANGUAGE = /^[a-z]{2,3}(-[a-z0-9]{2,8})*$/;

/**
 * An Aura name as a model and voice: from the table, else `aura-2-<voice_id>-<lang>` where
 * `<lang>` is the voice's primary language subtag or its whole tag (a built-in voice's is checked;
 * another's voice id is what precedes the last `-`, and resolving finds whether it exists).
 */
export function auraModel(name: string, context: DeepgramContext): AuraModel {
  const mapped = Object.hasOwn(context.config.models, name) ? context.config.models[name] : undefined;
  if (mapped) return { name, modelId: mapped.model, voiceId: mapped.voice };
  if (!name.startsWith('aura-2-')) throw unknownModel(name);
  const rest = name.slice('aura-2-'.length);
  for (let cut = rest.indexOf('-'); cut > 0; cut = rest.indexOf('-', cut + 1)) {
    const voice = rest.slice(0, cut);
    const lang = rest.slice(cut + 1);
    const language = context.builtinLanguage(voice);
    if (language !== undefined && (lang === language || lang === language.split('-')[0])) return { name, modelId: context.config.model, voiceId: voice };
  }
  const cut = rest.lastIndexOf('-');
  if (cut <= 0 || !LANGUAGE.test(rest.slice(cut + 1)) || context.builtinLanguage(rest.slice(0, cut)) !== undefined) throw unknownModel(name);
  return { name, modelId: context.config.model, voiceId: rest.slice(0, cut) };
}

export type DeepgramEncoding = 'linear16' | 'mulaw' | 'alaw' | 'mp3' | 'opus' | 'flac' | 'aac';

interface EncodingRule {
  containers: readonly string[];
  sampleRates: readonly number[] | null;
  defaultRate: number;
  bitRates: readonly number[] | null;
}

/** Deepgram's table of combinations (`encoding` → its containers, rates and bit rates; the first container is the default). */
const RULES: Record<DeepgramEncoding, EncodingRule> = {
  linear16: { containers: ['wav', 'none'], sampleRates: [8000, 16000, 24000, 32000, 48000], defaultRate: 24000, bitRates: null },
  mulaw: { containers: ['wav', 'none'], sampleRates: [8000, 16000], defaultRate: 8000, bitRates: null },
  alaw: { containers: ['wav', 'none'], sampleRates: [8000, 16000], defaultRate: 8000, bitRates: null },
  mp3: { containers: [], sampleRates: null, defaultRate: 22050, bitRates: [32000, 48000] },
  opus: { containers: ['ogg'], sampleRates: null, defaultRate: 48000, bitRates: [32000, 64000, 96000, 128000, 192000] },
  flac: { containers: [], sampleRates: [8000, 16000, 22050, 32000, 48000], defaultRate: 48000, bitRates: null },
  aac: { containers: [], sampleRates: null, defaultRate: 22050, bitRates: null },
};

const PCM: Record<string, string> = { linear16: 'pcm_s16le', mulaw: 'pcm_mulaw', alaw: 'pcm_alaw' };

/** The output format Deepgram's query asks for, with its Content-Type. */
export interface DeepgramFormat {
  encoding: DeepgramEncoding;
  request: FormatRequest;
  contentType: string;
}

function integer(query: Query, name: string): number | undefined {
  const text = queryValue(query, name);
  if (text === undefined || text === '') return undefined;
  if (!/^\d{1,9}$/.test(text)) throw badQuery(`${name}: invalid digit found in string`);
  return Number(text);
}

/**
 * `encoding`, `container`, `sample_rate` and `bit_rate` checked against Deepgram's table: the
 * messages are Deepgram's six templates. `aac` is refused: no maintained AAC encoder runs here.
 * `streaming`: the socket, which takes the raw PCM encodings alone and no container.
 */
export function deepgramFormat(query: Query, streaming: boolean): DeepgramFormat {
  const encoding = (queryValue(query, 'encoding') || (streaming ? 'linear16' : 'mp3')) as DeepgramEncoding;
  if (!Object.hasOwn(RULES, encoding) || (streaming && !(encoding in PCM))) {
    const allowed = streaming ? 'linear16, mulaw, alaw' : Object.keys(RULES).join(', ');
    throw badQuery(`encoding: unknown variant \`${encoding.slice(0, 40)}\`, expected one of ${allowed}`);
  }
  if (encoding === 'aac') throw unsupported('`encoding=aac` is not available on this server; use mp3, opus, flac, linear16, mulaw or alaw');
  const rule = RULES[encoding];
  const container = streaming ? undefined : queryValue(query, 'container') || undefined;
  if (container !== undefined) {
    if (rule.containers.length === 0) throw unsupported(`\`container\` is not applicable when \`encoding=${encoding}\``);
    if (!rule.containers.includes(container)) throw unsupported(`\`container=${container.slice(0, 40)}\` is invalid when \`encoding=${encoding}\``);
  }
  const sampleRate = integer(query, 'sample_rate');
  if (sampleRate !== undefined) {
    if (!rule.sampleRates) {
      if (sampleRate !== rule.defaultRate) throw unsupported(`\`sample_rate\` is not applicable when \`encoding=${encoding}\``);
    } else if (!rule.sampleRates.includes(sampleRate)) throw unsupported(`\`sample_rate\` must be ${rule.sampleRates.join(', ')} when \`encoding=${encoding}\``);
  }
  const bitRate = streaming ? undefined : integer(query, 'bit_rate');
  if (bitRate !== undefined) {
    if (!rule.bitRates) throw unsupported(`\`bit_rate\` is not applicable when \`encoding=${encoding}\``);
    if (!rule.bitRates.includes(bitRate)) throw unsupported(`\`bit_rate\` must be ${rule.bitRates.join(', ')} when \`encoding=${encoding}\``);
  }
  const rate = sampleRate ?? rule.defaultRate;
  switch (encoding) {
    case 'mp3':
      return { encoding, request: { container: 'mp3', sampleRate: 22050, bitRate: bitRate ?? 48000 }, contentType: 'audio/mpeg' };
    case 'opus':
      return { encoding, request: { container: 'opus', sampleRate: 48000, ...(bitRate === undefined ? {} : { bitRate }) }, contentType: 'audio/ogg;codecs=opus' };
    case 'flac':
      return { encoding, request: { container: 'flac', encoding: 'pcm_s16le', sampleRate: rate }, contentType: 'audio/flac' };
    default: {
      const raw = streaming || container === 'none';
      const types: Record<string, string> = { linear16: 'audio/l16', mulaw: 'audio/mulaw', alaw: 'audio/alaw' };
      return {
        encoding,
        request: { container: raw ? 'raw' : 'wav', encoding: PCM[encoding], sampleRate: rate },
        contentType: raw ? `${types[encoding]};rate=${rate}` : 'audio/wav',
      };
    }
  }
}

/** `speed`: a number; the model's range is checked when resolving. */
export function speedOf(query: Query): { speed: number } | undefined {
  const text = queryValue(query, 'speed');
  if (text === undefined || text === '') return undefined;
  const speed = Number(text);
  if (!Number.isFinite(speed)) throw badQuery('speed: invalid float literal');
  return speed === 1 ? undefined : { speed };
}

export interface DeepgramInput extends SpeechInput {
  aura: AuraModel;
  format: DeepgramFormat;
}

/** The query's model, format and speed: what REST and the socket (`socket`) share. Both stream their audio as it is made. */
export function deepgramSettings(query: Query, socket: boolean, context: DeepgramContext): Omit<DeepgramInput, 'transcript'> {
  const aura = auraModel(queryValue(query, 'model') || DEFAULT_MODEL, context);
  const format = deepgramFormat(query, socket);
  const speed = speedOf(query);
  return {
    aura,
    format,
    modelId: aura.modelId,
    modelNamed: aura.name,
    voiceId: aura.voiceId,
    outputFormat: format.request,
    generationConfig: speed,
    language: null,
    streaming: true,
    wordTimestamps: false,
    contextId: null,
    pronunciationDictId: null,
  };
}

/** A schema refusal of `POST /v1/speak`'s body (`text` absent or not a string), as Deepgram words it. */
export const PAYLOAD_ERROR = { err_code: 'PAYLOAD_ERROR', err_msg: 'Failed to deserialize JSON payload. Please specify exactly one of `text` or `url` in the JSON body.' };

/** `POST /v1/speak`: the query's settings, and `{"text"}` as the route's schema (`schema.ts`) validated it. */
export function parseDeepgramRequest(request: { body: { text: string }; query: Query }, context: DeepgramContext): DeepgramInput {
  return { ...deepgramSettings(request.query, false, context), transcript: request.body.text };
}
