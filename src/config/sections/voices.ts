/**
 * @module config/sections/voices
 * Cloned voices: the largest clip, and the rate clips are kept at.
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

const VOICES_DEFAULTS = { maxClipBytes: 20 * 1024 * 1024, clipSampleRate: 24000 };

const voicesSchema = z
  .object({
    /** Largest clone upload accepted (413 beyond). */
    maxClipBytes: z.number().int().min(64 * 1024).default(VOICES_DEFAULTS.maxClipBytes),
    /** Cloned clips are stored mono at this rate. */
    clipSampleRate: z.number().int().min(8000).max(48000).default(VOICES_DEFAULTS.clipSampleRate),
  })
  .strict();

export const voicesSection = defineSection('voices', voicesSchema.default(VOICES_DEFAULTS));
