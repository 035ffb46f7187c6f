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
import type { Services } from '../../../services.js';
import { parseElevenLabsDialogue } from './parse.js';
import { dialogueBodySchema } from './schema.js';
import { registerElevenLabsRoutes } from './speech.js';

export function registerElevenLabsDialogue(scope: FastifyInstance, services: Services): void {
  registerElevenLabsRoutes(scope, services, '/v1/text-to-dialogue', {
    decode: parseElevenLabsDialogue,
    endpoints: { clip: 'elevenlabs.dialogue', stream: 'elevenlabs.dialogue.stream' },
    schema: {
      body: dialogueBodySchema,
      timestamps: 'ElevenLabsDialogueTimestamps',
      docs: {
        '': ['Generate a dialogue (ElevenLabs-compatible)', 'Several speakers in one clip: each input’s text in its voice, in order, with the configured pause between turns.'],
        '/stream': ['Stream a dialogue (ElevenLabs-compatible)', 'The dialogue’s audio as it is made.'],
        '/with-timestamps': ['Dialogue with character timestamps (ElevenLabs-compatible)', 'One JSON object: the audio in base64, its alignment, and `voice_segments` (each turn’s voice, time and characters).'],
        '/stream/with-timestamps': [
          'Stream a dialogue with character timestamps (ElevenLabs-compatible)',
          'One JSON object per line (each ending in `\\n`): audio, the alignment of its words and their `voice_segments`, times from the start of the whole audio.',
        ],
      },
    },
  });
}
