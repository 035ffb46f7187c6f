/**
 * @module api/openai/speech
 * `POST /v1/audio/speech`, the OpenAI dialect: its own parser into the
 * neutral request (`parse.ts`), then the same session, pipeline, billing and
 * cost headers as /tts/bytes. `stream_format: "sse"` frames audio as
 * `speech.audio.delta` events and ends with `speech.audio.done` and usage;
 * with Voicegate's `timestamps: true`, `speech.word_timestamps` events carry
 * the words of each piece (OpenAI's SDK passes over event types it does not
 * know).
 * Errors use OpenAI's nested shape.
 */
import type { FastifyInstance } from 'fastify';
import { installErrorRenderer } from '../../../http/errors.js';
import { binaryContent, errorResponses, schemaRef } from '../../../http/route-schema.js';
import { postOnly } from '../../../http/json-body.js';
import { TTS_ERROR_STATUSES, audioStream, serveSynthesis } from '../../../http/synthesis-route.js';
import type { Services } from '../../../services.js';
import { SSE_HEADERS, jsonWithAudio, sseFrameWithAudio } from '../../../http/audio-json.js';
import { openAIError } from './errors.js';
import { parseOpenAIBody } from './parse.js';
import { openAISpeechBody, type OpenAISpeechBody } from './schema.js';


const OPENAI_SPEECH_ROUTE = {
  tags: ['OpenAI'],
  summary: 'Generate speech (OpenAI-compatible)',
  description: 'OpenAI’s body, translated to the native request: the same validation, billing and cost headers as `/tts/bytes`. Errors use OpenAI’s shape.',
  body: openAISpeechBody,
  response: {
    200: {
      description: 'The audio (mp3, Ogg Opus, wav or raw pcm), or with `stream_format: "sse"` an event stream of `OpenAIStreamEvent`s.',
      cost: true, spoken: true,
      content: { ...binaryContent('audio/mpeg', 'audio/ogg', 'audio/wav', 'application/octet-stream'), 'text/event-stream': { schema: schemaRef('OpenAIStreamEvent') } },
    },
    ...errorResponses('openai', TTS_ERROR_STATUSES),
  },
};

const round = (seconds: number) => Math.round(seconds * 1000) / 1000;

function sse(event: Record<string, unknown>): string {
  return `data: ${jsonWithAudio(event, 'audio')}\n\n`;
}

export function registerOpenAISpeech(scope: FastifyInstance, services: Services): void {
  installErrorRenderer(scope, services.config.server.bodyLimitBytes, (error, _request, thrown) => ({ body: openAIError(error, (thrown as { param?: string }).param) }));
  postOnly(scope, '/v1/audio/speech');
  const context = { models: services.models, aliases: services.config.openai };
  scope.post('/v1/audio/speech', { schema: OPENAI_SPEECH_ROUTE, attachValidation: true, config: { auth: 'key', token: true } }, (request, reply) =>
    serveSynthesis(services, request, reply, {
      // The body as the route's schema validated it (a refusal is thrown before decoding).
      decode: ({ body }) => parseOpenAIBody(body as OpenAISpeechBody, context),
      endpoint: (input) => (input.streaming ? 'openai.speech.stream' : 'openai.speech'),
      stream: (input, synthesis) => {
        if (!input.sse) return audioStream(synthesis);
        let bytes = 0;
        return {
          contentType: 'text/event-stream; charset=utf-8',
          headers: SSE_HEADERS,
          framing: {
            piece(piece) {
              const frames: (string | Buffer)[] = [];
              if (piece.audio.length > 0) {
                bytes += piece.audio.length;
                frames.push(sseFrameWithAudio({ type: 'speech.audio.delta', audio: piece.audio.toString('base64') }, 'audio'));
              }
              const words = synthesis.wordTimestamps ? (piece.words ?? []) : [];
              if (words.length > 0) frames.push(sse({ type: 'speech.word_timestamps', words: words.map((w) => w.word), start: words.map((w) => round(w.start)), end: words.map((w) => round(w.end)) }));
              return frames;
            },
            done() {
              // Usage in OpenAI's fields: characters in, audio samples out.
              const output = Math.round(bytes / 2);
              return [sse({ type: 'speech.audio.done', usage: { input_tokens: synthesis.characters, output_tokens: output, total_tokens: synthesis.characters + output } })];
            },
            error: (error) => [sse({ type: 'error', ...openAIError(error) })],
          },
        };
      },
    }),
  );
}
