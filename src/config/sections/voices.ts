/**
 * @module config/sections/voices
 * Cloned and mixed voices: the largest clip, the rate clips are kept at and
 * the most voices a mix may have; dialogues: the pause between speakers and
 * the most turns one request may have.
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

const VOICES_DEFAULTS = { maxClipBytes: 20 * 1024 * 1024, clipSampleRate: 24000, maxMix: 4, dialogue: DIALOGUE_DEFAULTS };

const voicesSchema = z
  .object({
    /** Largest clone upload accepted (413 beyond). */
    maxClipBytes: z.number().int().min(64 * 1024).default(VOICES_DEFAULTS.maxClipBytes),
    /** Cloned clips are stored mono at this rate. */
    clipSampleRate: z.number().int().min(8000).max(48000).default(VOICES_DEFAULTS.clipSampleRate),
    dialogue: dialogueSchema.default(DIALOGUE_DEFAULTS),
    /** Most voices in a mix (`POST /voices/mix`, or inline `a(2)+b(1)`). */
    maxMix: z.number().int().min(1).max(16).default(VOICES_DEFAULTS.maxMix),
  })
  .strict();

export const voicesSection = defineSection('voices', voicesSchema.default(VOICES_DEFAULTS));
