/**
 * @module api/models
 * `GET /models` and `GET /models/{id}`: each model's contract (limits,
 * formats, settings, price multiplier) and the engine that serves it, so
 * nobody mistakes which engine is behind a model id.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ANY_ROUTE_ERRORS, errorResponses, jsonContent } from '../../http/route-schema.js';
import { ApiError } from '../../errors/api-error.js';
import type { FormatRules, ModelProfile } from '../../models/profile.js';
import type { Services } from '../../services.js';

function formats(rules: FormatRules) {
  return {
    containers: rules.containers,
    encodings: rules.encodings,
    sample_rates: rules.sampleRates,
    default_encoding: rules.defaultEncoding ?? null,
    mp3_bit_rates: rules.mp3BitRates,
    default_mp3_bit_rate: rules.defaultMp3BitRate ?? null,
    opus_bit_rates: rules.opusBitRates ?? [],
    default_opus_bit_rate: rules.defaultOpusBitRate ?? null,
  };
}

function upstreamCounts(upstreams: unknown): { healthy: number; total: number } | null {
  if (!upstreams || typeof upstreams !== 'object') return null;
  const { healthy, total } = upstreams as { healthy: number; total: number };
  return { healthy, total };
}

export function describeModel(model: ModelProfile, services: Services) {
  const engine = services.engines.get(model.engine);
  const info = engine?.info();
  return {
    id: model.id,
    object: 'model',
    name: model.name,
    description: model.description,
    engine: {
      id: model.engine,
      type: info?.type ?? null,
      native_sample_rate: info?.sampleRate ?? null,
      ready: info?.ready ?? false,
      /** Why the engine is not serving, when it could not start (a bad model file, a missing folder). */
      error: (info?.error as string | undefined) ?? null,
      /** Remote engines: how many of the pool's inference servers pass their health probes. */
      // Counts only: server addresses are the operator's (they are in /metrics, behind the admin token).
      upstreams: upstreamCounts(info?.upstreams),
    },
    max_transcript_chars: model.maxTranscriptChars,
    formats: { bytes: formats(model.clip), stream: formats(model.stream) },
    credit_multiplier: model.creditMultiplier,
    generation_config: { speed: model.speed, volume: model.volume },
    streaming: model.streaming,
    default_voice: model.defaultVoice,
    languages: model.languages,
  };
}

export function registerModels(app: FastifyInstance, services: Services): void {
  const list = { tags: ['Models'], summary: 'List models', response: { 200: { description: 'Every model.', content: jsonContent('ModelList') }, ...errorResponses('native', ANY_ROUTE_ERRORS) } };
  app.get('/models', { schema: list }, async () => ({ data: services.models.list().map((m) => describeModel(m, services)) }));
  const one = {
    tags: ['Models'],
    summary: 'Get a model',
    params: z.object({ id: z.string().max(256).describe('The model id (at most 256 characters).') }),
    response: { 200: { description: 'The model.', content: jsonContent('Model') }, ...errorResponses('native', [...ANY_ROUTE_ERRORS, 404, 414]) },
  };
  app.get<{ Params: { id: string } }>('/models/:id', { schema: one }, async (request) => {
    const model = services.models.get(request.params.id);
    if (!model) throw new ApiError('model_not_found', { reason: `model ${request.params.id} does not exist` });
    return describeModel(model, services);
  });
}
