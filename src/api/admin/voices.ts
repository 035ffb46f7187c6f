/**
 * @module api/admin-voices
 * The built-in voices for the operator, with the admin token: `GET
 * /admin/voices` lists them (the catalogue every organisation sees, cursor
 * paging) and `POST /admin/voices/{id}/preview` speaks one as a short WAV
 * clip. The admin token speaks for no organisation, so a preview is admitted
 * by the local gate: no organisation is charged and no key's limits apply.
 * That is why it is only a preview: a built-in voice (an organisation's
 * cloned voice is its own, heard with its key) saying a fixed sentence with
 * its name, in one fixed format; the client picks only the model.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { acceptJsonBodies } from '../../http/json-body.js';
import { serveSynthesis } from '../../http/synthesis-route.js';
import type { Services } from '../../services.js';
import { localGate } from '../../synthesis/gate.js';
import type { Voice } from '../../voices/voice.js';
import { parseCartesiaBody } from '../dialects/cartesia/parse.js';
import { cursorQuerySchema, pageByCursor } from '../resources/paging.js';
import { binaryContent, errorResponses, jsonContent } from '../../http/route-schema.js';
import { z } from 'zod';
import { voiceToJson } from '../resources/voices.js';

/** A preview's body holds a model id and nothing else. */
const PREVIEW_BODY_LIMIT = 1024;
const PREVIEW_FORMAT = { container: 'wav', encoding: 'pcm_s16le', sample_rate: 24000 };

type Preview = { Params: { id: string } };

/**
 * A preview's body: `model_id` and nothing else. The model is documented by shape and checked
 * where every synthesis checks it (`parseCartesiaBody`), with its messages.
 */
const previewBody = z.strictObject(
  { model_id: z.unknown().optional().meta({ type: 'string' }).describe('The model to speak with.') },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `a preview takes only model_id; got ${issue.keys.join(', ')}` : undefined) },
).meta({ required: ['model_id'] });
const PREVIEW = {
  tags: ['Admin'],
  summary: 'Preview a built-in voice',
  params: z.object({ id: z.string().describe('The voice id.') }),
  body: previewBody,
  response: {
    200: { description: 'A WAV clip (16-bit, 24 kHz) of the voice saying “Hello, this is <name>.” with the model given; charged to no organisation.', content: binaryContent('audio/wav') },
    ...errorResponses('native', [400, 401, 403, 404, 503]),
  },
};

export function registerAdminVoices(scope: FastifyInstance, services: Services): void {
  const builtIn = async () => (await services.voices.list(null)).filter((voice) => voice.ownerOrgId === null);

  const list = {
    tags: ['Admin'],
    summary: 'The built-in voices',
    querystring: cursorQuerySchema,
    response: { 200: { description: 'A page of the built-in voices every organisation sees.', content: jsonContent('VoiceList') }, ...errorResponses('native', [400, 401, 403]) },
  };
  scope.get<{ Querystring: Record<string, unknown> }>('/voices', { schema: list }, async (request) => {
    const page = pageByCursor(await builtIn(), request.query);
    return { data: page.data.map((voice) => voiceToJson(voice, null)), has_more: page.has_more };
  });

  scope.register(async (previews) => {
    acceptJsonBodies(previews, PREVIEW_BODY_LIMIT);
    // Admitted, spoken and counted as every synthesis, but by the gate that charges nobody.
    const uncharged: Services = { ...services, gate: localGate };
    const voices = new WeakMap<FastifyRequest, Voice>();
    previews.addHook<Preview>('preHandler', async (request) => {
      const voice = await services.voices.get(request.params.id, null);
      if (!voice || voice.ownerOrgId !== null) throw new ApiError('voice_not_found', { id: request.params.id });
      voices.set(request, voice);
    });
    previews.post<Preview>('/voices/:id/preview', { schema: PREVIEW, attachValidation: true }, (request, reply) =>
      serveSynthesis(uncharged, request, reply, {
        // The body as the route's schema validated it (only `model_id`; a refusal is thrown before decoding).
        decode: ({ body }) => {
          const voice = voices.get(request)!;
          return parseCartesiaBody({
            model_id: body.model_id,
            voice: { mode: 'id', id: voice.id },
            transcript: `Hello, this is ${voice.name}.`,
            output_format: PREVIEW_FORMAT,
          });
        },
        endpoint: () => 'admin.voice_preview',
        stream: () => {
          throw new Error('a preview is never streamed');
        },
      }),
    );
  });
}
