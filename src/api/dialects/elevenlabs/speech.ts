/**
 * @module api/elevenlabs/speech
 * ElevenLabs' REST text-to-speech: `POST /v1/text-to-speech/{voice_id}`
 * (the whole clip), `/stream` (audio as it is made), `/with-timestamps` (one
 * JSON object with the audio and its character alignment) and
 * `/stream/with-timestamps` (the same, a JSON line per piece of audio, each
 * ending in `\n`, times counted from the start of the whole audio). The key
 * comes in `xi-api-key`. The same session, pipeline, billing and cost
 * headers as every dialect; `request-id` and `x-character-count` as
 * ElevenLabs sends them.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { jsonWithAudio } from '../../../http/audio-json.js';
import { presentedKey } from '../../../http/credentials.js';
import { postOnly } from '../../../http/json-body.js';
import { audioStream, serveSynthesis, type RouteRequest, type SynthesisRoute } from '../../../http/synthesis-route.js';
import type { WordTiming } from '../../../engines/engine.js';
import type { Services } from '../../../services.js';
import { CONTENT_TYPES, type OutputFormat } from '../../../audio/format.js';
import type { Endpoint } from '../../../synthesis/gate.js';
import { CharacterAligner, restAlignment, voiceSegments } from './alignment.js';
import { parseElevenLabsRequest, type ElevenLabsContext, type ElevenLabsInput } from './parse.js';
import { outputFormatQuerySchema, speechBodySchema, voicePathSchema } from './schema.js';
import { binaryContent, errorResponses, schemaRef } from '../../../http/route-schema.js';
import { TTS_ERROR_STATUSES } from '../../../http/synthesis-route.js';
import type { z } from 'zod';

/** The key as ElevenLabs' clients send it (`xi-api-key`), or as every dialect accepts it. */
export function elevenLabsKey(headers: IncomingHttpHeaders, url = ''): string | null {
  const header = headers['xi-api-key'];
  const value = Array.isArray(header) ? header[0] : header;
  if (typeof value === 'string' && value.trim()) return value.trim();
  return presentedKey(headers, url, false);
}

const PATHS = ['', '/stream', '/with-timestamps', '/stream/with-timestamps'] as const;

/**
 * The Content-Type of audio as ElevenLabs sends it: raw PCM is `audio/pcm` (LiveKit's plugin
 * refuses a body that is not `audio/*`), μ-law and A-law their `audio/` types, the rest as their
 * container's.
 */
export function audioType(format: OutputFormat): string {
  if (format.container !== 'raw') return CONTENT_TYPES[format.container];
  return format.encoding === 'pcm_mulaw' ? 'audio/basic' : format.encoding === 'pcm_alaw' ? 'audio/x-alaw-basic' : 'audio/pcm';
}

/** How a family of REST routes (speech, dialogue) reads its requests, and the endpoints it counts under. */
export interface ElevenLabsRoutes {
  decode(request: RouteRequest, options: { streaming: boolean; timestamps: boolean }, context: ElevenLabsContext): ElevenLabsInput;
  endpoints: { clip: Endpoint; stream: Endpoint };
  /** What the routes declare: the body, the path's parameters, and each path's summary and description. */
  schema: {
    body: z.ZodType;
    params?: z.ZodObject;
    /** The schema of a `/with-timestamps` answer (`components.schemas`). */
    timestamps: string;
    docs: Record<(typeof PATHS)[number], [summary: string, description: string]>;
  };
}

/** Every media type an ElevenLabs audio answer can have (`audioType`). */
const AUDIO_TYPES = ['audio/mpeg', 'audio/ogg', 'audio/wav', 'audio/pcm', 'audio/basic', 'audio/x-alaw-basic'];

/** The route schema of one of a family's paths. */
function routeSchema(path: (typeof PATHS)[number], routes: ElevenLabsRoutes) {
  const [summary, description] = routes.schema.docs[path];
  const timestamps = path.endsWith('/with-timestamps');
  return {
    tags: ['ElevenLabs'],
    summary,
    description: `${description} The key in \`xi-api-key\` (or as everywhere). Errors in ElevenLabs' shape.`,
    ...(routes.schema.params ? { params: routes.schema.params } : {}),
    querystring: outputFormatQuerySchema,
    body: routes.schema.body,
    response: {
      200: {
        description: timestamps
          ? path.startsWith('/stream')
            ? 'One JSON object per line (`application/json`, each line ending in `\\n`).'
            : 'One JSON object with the audio in base64 and its alignment.'
          : 'The audio, typed as ElevenLabs types it: `audio/pcm` for `pcm_*`, `audio/basic` for `ulaw_8000`, `audio/x-alaw-basic` for `alaw_8000`.',
        cost: true, spoken: true,
        headers: {
          'request-id': { description: 'The request id, as ElevenLabs sends it.', schema: { type: 'string' } },
          'x-character-count': { description: 'The characters charged.', schema: { type: 'string', pattern: '^\\d+$' } },
        },
        content: timestamps ? { 'application/json': { schema: schemaRef(routes.schema.timestamps) } } : binaryContent(...AUDIO_TYPES),
      },
      ...errorResponses('elevenlabs', TTS_ERROR_STATUSES),
    },
  };
}

/** The alignment of `words` as the REST answers carry it; a dialogue's with its `voice_segments`. */
function timed(characters: CharacterAligner, words: readonly WordTiming[], dialogue: boolean) {
  const times = characters.next(words);
  const alignment = restAlignment(times);
  const normalized = restAlignment(times.normalized);
  return dialogue ? { alignment, normalized_alignment: normalized, voice_segments: voiceSegments(words, times) } : { alignment, normalized_alignment: normalized };
}

function route(path: (typeof PATHS)[number], context: ElevenLabsContext, routes: ElevenLabsRoutes): SynthesisRoute<ElevenLabsInput> {
  const streaming = path.startsWith('/stream');
  const timestamps = path.endsWith('/with-timestamps');
  const endpoint: Endpoint = streaming ? routes.endpoints.stream : routes.endpoints.clip;
  return {
    credential: (headers) => elevenLabsKey(headers),
    decode: (request) => routes.decode(request, { streaming, timestamps }, context),
    endpoint: () => endpoint,
    headers: (_input, synthesis) => ({ 'request-id': synthesis.requestId, 'x-character-count': String(synthesis.characters) }),
    // A whole clip is its audio bytes, typed as ElevenLabs types them; with timestamps, one JSON
    // object with them and its alignment.
    clip: {
      timings: timestamps,
      answer(_input, synthesis, clip) {
        if (!timestamps) return { contentType: audioType(synthesis.format), body: clip.audio };
        const body = jsonWithAudio({ audio_base64: clip.audio.toString('base64'), ...timed(new CharacterAligner(), clip.words, synthesis.speakers !== undefined) }, 'audio_base64');
        return { contentType: 'application/json; charset=utf-8', body };
      },
    },
    stream(_input, synthesis) {
      if (!timestamps) return { ...audioStream(synthesis), contentType: audioType(synthesis.format) };
      const characters = new CharacterAligner();
      return {
        contentType: 'application/json; charset=utf-8',
        framing: {
          piece(piece) {
            const dialogue = synthesis.speakers !== undefined;
            const words = piece.words && piece.words.length > 0 ? timed(characters, piece.words, dialogue) : null;
            if (piece.audio.length === 0 && !words) return [];
            const none = dialogue ? { alignment: null, normalized_alignment: null, voice_segments: [] } : { alignment: null, normalized_alignment: null };
            return [`${jsonWithAudio({ audio_base64: piece.audio.toString('base64'), ...(words ?? none) }, 'audio_base64')}\n`];
          },
          done: () => [],
          // A failure after the first line can only cut the stream: the SDK reads lines, not events.
          error: () => null,
        },
      };
    },
  };
}

const SPEECH: ElevenLabsRoutes = {
  decode: parseElevenLabsRequest,
  endpoints: { clip: 'elevenlabs.tts', stream: 'elevenlabs.tts.stream' },
  schema: {
    body: speechBodySchema,
    params: voicePathSchema,
    timestamps: 'ElevenLabsTimestamps',
    docs: {
      '': ['Generate speech (ElevenLabs-compatible)', 'The whole clip.'],
      '/stream': ['Stream speech (ElevenLabs-compatible)', 'The audio as it is made.'],
      '/with-timestamps': ['Speech with character timestamps (ElevenLabs-compatible)', 'One JSON object: the audio in base64 and its alignment.'],
      '/stream/with-timestamps': ['Stream speech with character timestamps (ElevenLabs-compatible)', 'One JSON object per line (each ending in `\\n`), times from the start of the whole audio.'],
    },
  },
};

export function registerElevenLabsSpeech(scope: FastifyInstance, services: Services): void {
  registerElevenLabsRoutes(scope, services, '/v1/text-to-speech/:voice_id', SPEECH);
}

/** `base` and its `/stream`, `/with-timestamps` and `/stream/with-timestamps`, each read and answered as `routes` says. */
export function registerElevenLabsRoutes(scope: FastifyInstance, services: Services, base: string, routes: ElevenLabsRoutes): void {
  const context: ElevenLabsContext = { aliases: services.config.elevenlabs, models: services.models };
  for (const path of PATHS) {
    const url = `${base}${path}`;
    const answer = route(path, context, routes);
    postOnly(scope, url);
    scope.post(url, { schema: routeSchema(path, routes), attachValidation: true, config: { auth: 'key', token: true, credentials: ['xiApiKey'] } }, (request, reply) =>
      serveSynthesis(services, request, reply, answer),
    );
  }
}
