/**
 * @module config/sections/openai
 * The OpenAI dialect: the model and voice names its clients send.
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

const OPENAI_DEFAULTS = {
  modelAliases: { 'tts-1': 'omnivoice', 'tts-1-hd': 'omnivoice', 'gpt-4o-mini-tts': 'omnivoice' },
  voiceAliases: {
    alloy: 'jordan',
    ash: 'michael',
    ballad: 'oliver',
    cedar: 'michael',
    coral: 'emma',
    echo: 'oliver',
    fable: 'oliver',
    marin: 'sarah',
    nova: 'sarah',
    onyx: 'michael',
    sage: 'isla',
    shimmer: 'emma',
    verse: 'jordan',
  },
};

const openaiSchema = z
  .object({
    /** OpenAI model names an unchanged integration sends → model ids here. */
    modelAliases: z.record(z.string(), z.string()).default(OPENAI_DEFAULTS.modelAliases),
    /** OpenAI voice names → voice ids here. */
    voiceAliases: z.record(z.string(), z.string()).default(OPENAI_DEFAULTS.voiceAliases),
  })
  .strict();

export const openaiSection = defineSection('openai', openaiSchema.default(OPENAI_DEFAULTS));
