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
import { CONTENT_TYPES } from '../../audio/format.js';
import { captionFormat, captionLineChars, captions, type CaptionFormat } from '../../captions/render.js';
import { ApiError } from '../../errors/api-error.js';
import { jsonWithAudio } from '../../http/audio-json.js';
import { postOnly } from '../../http/json-body.js';
import { audioStream, serveSynthesis } from '../../http/synthesis-route.js';
import type { Services } from '../../services.js';
import { parseCartesiaBody } from './parse.js';

/** `captions` of the body: absent, or an object with `format` and `maxLineChars`. */
function captionOptions(value: unknown): { format: CaptionFormat; maxLineChars: number } {
  if (value === undefined || value === null) return { format: 'vtt', maxLineChars: captionLineChars(undefined) };
  if (typeof value !== 'object' || Array.isArray(value)) throw new ApiError('invalid_caption_options', { reason: 'captions must be an object: {"format": "vtt" | "srt", "maxLineChars": 20–80}' });
  const { format, maxLineChars } = value as Record<string, unknown>;
  return { format: captionFormat(format), maxLineChars: captionLineChars(maxLineChars) };
}

export function registerTtsCaptioned(scope: FastifyInstance, services: Services): void {
  postOnly(scope, '/tts/captioned');
  scope.post('/tts/captioned', (request, reply) => {
    let options = { format: 'vtt' as CaptionFormat, maxLineChars: 42 };
    return serveSynthesis(services, request, reply, {
      decode: ({ body }) => {
        const { captions: asked, ...rest } = body;
        if (rest.stream === true) throw new ApiError('invalid_request', { reason: 'captioned speech is one clip: leave out stream' });
        const input = parseCartesiaBody(rest);
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
