/**
 * @module config/sections/voices
 * Cloned voices: the largest clip, and the rate clips are kept at; dialogues: the pause between
 * speakers and the most turns one request may have.
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

const DIALOGUE_DEFAULTS = { pauseMs: 300, maxTurns: 100 };

const dialogueSchema = z
  .object({
    /** Silence between two turns of a dialogue (`/tts/dialogue`, `/v1/text-to-dialogue`). */
    pauseMs: z.number().int().min(0).max(10_000).default(DIALOGUE_DEFAULTS.pauseMs),
    /** More turns than this in one request: 400 `too_many_dialogue_turns` (a job takes more). */
    maxTurns: z.number().int().min(1).max(10_000).default(DIALOGUE_DEFAULTS.maxTurns),
  })
  .strict();

const VOICES_DEFAULTS = { maxClipBytes: 20 * 1024 * 1024, clipSampleRate: 24000, dialogue: DIALOGUE_DEFAULTS };

const voicesSchema = z
  .object({
    /** Largest clone upload accepted (413 beyond). */
    maxClipBytes: z.number().int().min(64 * 1024).default(VOICES_DEFAULTS.maxClipBytes),
    /** Cloned clips are stored mono at this rate. */
    clipSampleRate: z.number().int().min(8000).max(48000).default(VOICES_DEFAULTS.clipSampleRate),
    dialogue: dialogueSchema.default(DIALOGUE_DEFAULTS),
  })
  .strict();

export const voicesSection = defineSection('voices', voicesSchema.default(VOICES_DEFAULTS));
