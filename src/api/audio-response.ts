/**
 * @module api/audio-response
 * The two ways an audio body leaves the server, shared by every dialect that
 * answers with audio (Cartesia /tts/bytes, OpenAI /v1/audio/speech): a whole
 * clip — generated, charged (all-or-nothing), then sent with its exact length
 * — or a progressive body relayed as the pipeline makes it.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { CONTENT_TYPES } from '../audio/format.js';
import type { Admission } from '../http/gate.js';
import { renderClip } from '../synthesis/pipeline.js';
import type { SynthesisRequest } from '../synthesis/request.js';
import type { OpenedStream } from './open-stream.js';

export async function sendClip(reply: FastifyReply, synthesis: SynthesisRequest, admission: Admission, signal: AbortSignal): Promise<FastifyReply> {
  const clip = await renderClip(synthesis, signal);
  const costHeaders = await admission.charge();
  return reply.headers(costHeaders).type(CONTENT_TYPES[synthesis.format.container]).header('content-length', clip.length).send(clip);
}

export function sendAudioStream(reply: FastifyReply, synthesis: SynthesisRequest, opened: OpenedStream): FastifyReply {
  async function* audio(): AsyncGenerator<Buffer> {
    for await (const piece of opened.pieces) yield piece.audio;
  }
  return reply.headers(opened.costHeaders).type(CONTENT_TYPES[synthesis.format.container]).send(Readable.from(audio(), { objectMode: false }));
}
