/**
 * @module api/cartesia/captioned
 * `POST /tts/captioned`: the `/tts/bytes` body plus `captions: {format,
 * maxLineChars}`, answered as one JSON object with the whole clip (base64),
 * its content type, its captions (SRT or WebVTT, `captions/`) and its word
 * timestamps in seconds. It is a `/tts/bytes` clip through the same session
 * (resolve, admission, clip billing), with its word timings: billed as
 * `/tts/bytes` is, under the same endpoint.
 */
import type { FastifyInstance } from 'fastify';
import { CONTENT_TYPES } from '../../../audio/format.js';
import { captionFormat, captionLineChars, captions, type CaptionFormat } from '../../../captions/render.js';
import { jsonWithAudio } from '../../../http/audio-json.js';
import { postOnly } from '../../../http/json-body.js';
import { errorResponses, jsonContent } from '../../../http/route-schema.js';
import { TTS_ERROR_STATUSES, audioStream, serveSynthesis } from '../../../http/synthesis-route.js';
import type { Services } from '../../../services.js';
import { cartesiaInput } from './parse.js';
import { captionedBodySchema, type CaptionedBody } from './schema.js';

const SCHEMA = {
  tags: ['Speech'],
  summary: 'Generate speech with its captions (SRT or WebVTT) and word timestamps',
  description:
    'The `/tts/bytes` body plus `captions`; one JSON object with the whole clip in base64, its captions and its words. Charged exactly as `/tts/bytes` for the same body. See docs/api.md#captions for the cue rules.',
  body: captionedBodySchema,
  response: {
    200: { description: 'The clip, its captions and its word timestamps.', cost: true, spoken: true, content: jsonContent('CaptionedSpeech') },
    ...errorResponses('native', TTS_ERROR_STATUSES),
  },
};

/** `captions` of the validated body: its format and line width, checked as a job's captions are (`captions/render.ts`). */
function captionOptions(value: CaptionedBody['captions']): { format: CaptionFormat; maxLineChars: number } {
  return { format: captionFormat(value?.format), maxLineChars: captionLineChars(value?.maxLineChars) };
}

export function registerTtsCaptioned(scope: FastifyInstance, services: Services): void {
  postOnly(scope, '/tts/captioned');
  scope.post('/tts/captioned', { schema: SCHEMA, attachValidation: true, config: { auth: 'key', token: true } }, (request, reply) => {
    let options = { format: 'vtt' as CaptionFormat, maxLineChars: 42 };
    return serveSynthesis(services, request, reply, {
      // The body as the route's schema validated it (a refusal is thrown before decoding).
      decode: ({ body }) => {
        const { captions: asked, ...rest } = body as CaptionedBody;
        const input = cartesiaInput(rest);
        options = captionOptions(asked);
        return { ...input, wordTimestamps: true };
      },
      endpoint: () => 'tts.bytes',
      stream: (_input, synthesis) => audioStream(synthesis),
      clip: {
        timings: true,
        answer(_input, synthesis, clip) {
          const round = (t: number) => Math.round(t * 1000) / 1000;
          const words = clip.words;
          const body = jsonWithAudio(
            {
              audio: clip.audio.toString('base64'),
              content_type: CONTENT_TYPES[synthesis.format.container],
              captions: captions(words, options.format, { maxLineChars: options.maxLineChars, duration: clip.seconds }),
              words: { words: words.map((w) => w.word), start: words.map((w) => round(w.start)), end: words.map((w) => round(w.end)) },
            },
            'audio',
          );
          return { contentType: 'application/json; charset=utf-8', body };
        },
      },
    });
  });
}
