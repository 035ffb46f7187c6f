/**
 * @module engines/tone
 * Registers the `tone` engine type: a deterministic tone per character.
 */
import { z } from 'zod';
import { defineEngine } from '../registration.js';
import { ToneEngine } from './engine.js';

export const toneEngine = defineEngine({
  type: 'tone',
  configSchema: z
    .object({
      type: z.literal('tone'),
      sampleRate: z.number().int().min(8000).max(48000).default(24000),
      secondsPerChar: z.number().positive().default(0.06),
      chunkSeconds: z.number().positive().default(0.1),
    })
    .strict(),
  create: (id, { type: _type, ...config }) => new ToneEngine({ id, ...config }),
});
