/**
 * @module api/cartesia/normalize
 * `POST /tts/normalize`: the text the engine would be given for a request,
 * without speaking it — the transcript's tags or SSML read, the dictionary
 * and the normaliser applied in the language the request is read in
 * (`synthesis/language.ts`) — with the stretch of the transcript each part
 * of it came from, in code points. Resolved exactly as `/tts/bytes` resolves
 * (model, voice, dictionary, limits), so it answers what that request would
 * speak. Nothing is charged; the caller needs the `tts` scope, as for
 * `/tts/bytes` (an access token with the `tts` grant will do).
 */
import type { FastifyInstance } from 'fastify';
import { requireScope } from '../../../accounts/scopes.js';
import { DEFAULT_MODEL_IDS } from '../../../config/pull.js';
import { ApiError } from '../../../errors/api-error.js';
import type { FormatRequest } from '../../../models/output-format.js';
import type { ModelProfile } from '../../../models/profile.js';
import { authenticateRequest } from '../../../http/credentials.js';
import { decodeJsonObject, postOnly } from '../../../http/json-body.js';
import { errorResponses, jsonContent } from '../../../http/route-schema.js';
import type { Services } from '../../../services.js';
import { resolveSpeech } from '../../../synthesis/resolve.js';
import type { SpeechInput } from '../../../synthesis/speech-input.js';
import { MappedText } from '../../../synthesis/text-map.js';
import { voiceIdOf } from './parse.js';
import { normalizeBodySchema, type NormalizeBody } from './schema.js';

const SCHEMA = {
  tags: ['Speech'],
  summary: 'The text an engine would be given for a request, without speaking it',
  description:
    'Resolved as `/tts/bytes` resolves (model, voice, dictionary, limits, the language: the request’s, else the voice’s), then answered with the normalised text and where each part came from. Not charged.',
  body: normalizeBodySchema,
  response: {
    200: { description: 'The normalised text and its spans.', content: jsonContent('NormalizeResponse') },
    ...errorResponses('native', [400, 401, 403, 404, 413, 415, 503]),
  },
};

export interface NormalizeSpan {
  text_from: number;
  text_to: number;
  source_from: number;
  source_to: number;
}

/** Code-point offsets of a string's UTF-16 offsets: `at[i]` is the code point index of UTF-16 index `i`. */
function codePointIndex(text: string): Uint32Array {
  const at = new Uint32Array(text.length + 1);
  let points = 0;
  for (let i = 0; i < text.length; i++) {
    at[i] = points;
    const code = text.charCodeAt(i);
    // The second half of a surrogate pair is the same code point as the first.
    if (!(code >= 0xdc00 && code <= 0xdfff && i > 0 && text.charCodeAt(i - 1) >= 0xd800 && text.charCodeAt(i - 1) <= 0xdbff)) points++;
    else at[i] = points - 1;
  }
  at[text.length] = points;
  return at;
}

/** A format `model` makes whole clips in (PCM where it can). */
function anyFormat(model: ModelProfile): FormatRequest {
  const rules = model.clip;
  const container = rules.containers.find((c) => c === 'raw' || c === 'wav') ?? rules.containers[0];
  const pcm = container === 'raw' || container === 'wav';
  return { container, sampleRate: rules.sampleRates[0], ...(pcm ? { encoding: rules.defaultEncoding ?? rules.encodings[0] } : {}) };
}

/**
 * A voice to resolve with when none is named and the model has no default: a built-in one its engine
 * speaks, in the language asked for when there is one (else in the model's first language).
 */
async function someVoice(services: Services, model: ModelProfile, language: string | null, orgId: string | null): Promise<string | null> {
  const engine = services.engines.get(model.engine);
  if (!engine) return null;
  const wanted = (language ?? model.languages[0] ?? 'en').toLowerCase().replace(/_/gu, '-').split('-')[0];
  const voices = (await services.voices.list(orgId)).filter((voice) => !voice.mix && voice.ownerOrgId === null && engine.supportsVoice(voice));
  return (voices.find((voice) => voice.language.toLowerCase().split('-')[0] === wanted) ?? voices[0])?.id ?? null;
}

export function registerTtsNormalize(scope: FastifyInstance, services: Services): void {
  postOnly(scope, '/tts/normalize');
  scope.post('/tts/normalize', { schema: SCHEMA, attachValidation: true, config: { auth: 'key', token: true } }, async (request) => {
    const caller = await authenticateRequest(services.gate, request, { token: 'tts' });
    requireScope(caller, 'tts');
    decodeJsonObject(request.body);
    // The route schema's refusal (validated with `attachValidation`), answered once the caller is known.
    if (request.validationError) throw request.validationError;
    const body = request.body as NormalizeBody;
    const models = services.models;
    const model = body.model_id ? models.get(body.model_id) : (DEFAULT_MODEL_IDS.map((id) => models.get(id)).find(Boolean) ?? models.list()[0]);
    if (!model) throw new ApiError('model_not_found', { reason: `model ${body.model_id} does not exist; available: ${models.list().map((m) => m.id).join(', ')}` });
    const voiceId = body.voice ? voiceIdOf(body.voice) : (model.defaultVoice ?? (await someVoice(services, model, body.language ?? null, caller.orgId)));
    if (!voiceId) throw new ApiError('missing_voice', { reason: '' });
    const input: SpeechInput = {
      modelId: model.id,
      transcript: body.transcript,
      voiceId,
      // No audio is made: any format the model offers will do for resolving.
      outputFormat: anyFormat(model),
      generationConfig: undefined,
      language: body.language ?? null,
      streaming: false,
      wordTimestamps: false,
      contextId: null,
      pronunciationDictId: body.pronunciation_dict_id ?? null,
      ...(body.transcript_type ? { transcriptType: body.transcript_type } : {}),
    };
    const synthesis = await resolveSpeech(input, { services, requestId: String(request.id), orgId: caller.orgId });
    // The text segments as one text: the engine is given them one after another.
    const joined = new MappedText();
    for (const segment of synthesis.segments) {
      if (segment.kind !== 'text') continue;
      if (joined.text && !/\s$/u.test(joined.text) && !/^\s/u.test(segment.text)) joined.insert(' ');
      joined.append(segment.source);
    }
    const textAt = codePointIndex(joined.text);
    const sourceAt = codePointIndex(body.transcript);
    const spans: NormalizeSpan[] = joined.runs().map((run) => ({
      text_from: textAt[run.from],
      text_to: textAt[run.to],
      source_from: sourceAt[Math.min(run.sourceFrom, body.transcript.length)],
      source_to: sourceAt[Math.min(run.sourceTo, body.transcript.length)],
    }));
    return { text: joined.text, language: synthesis.spokenLanguage ?? synthesis.language ?? model.languages[0] ?? 'en', spans };
  });
}
