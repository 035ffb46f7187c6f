/**
 * @module api/elevenlabs/dialogue
 * ElevenLabs' text-to-dialogue: `POST /v1/text-to-dialogue` (the whole
 * clip), `/stream`, `/with-timestamps` and `/stream/with-timestamps`, whose
 * `inputs` are `{text, voice_id}` turns spoken in order in one piece of
 * audio. Answered as the speech routes answer, the timestamped ones with
 * `voice_segments` beside the alignment: each turn's voice, time and
 * characters.
 */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';
import { parseElevenLabsDialogue } from './parse.js';
import { registerElevenLabsRoutes } from './speech.js';

export function registerElevenLabsDialogue(scope: FastifyInstance, services: Services): void {
  registerElevenLabsRoutes(scope, services, '/v1/text-to-dialogue', {
    decode: parseElevenLabsDialogue,
    endpoints: { clip: 'elevenlabs.dialogue', stream: 'elevenlabs.dialogue.stream' },
  });
}
