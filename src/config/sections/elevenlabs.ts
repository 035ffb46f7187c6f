/**
 * @module config/sections/elevenlabs
 * The ElevenLabs dialect: the model and voice ids its clients send, its default model, contexts per socket.
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

/** ElevenLabs' premade voices that apps hardcode, by the built-in voice nearest in gender and accent. */
const ELEVENLABS_VOICES: Record<string, string> = {
  '21m00Tcm4TlvDq8ikWAM': 'sarah', // Rachel
  EXAVITQu4vr4xnSDxMaL: 'sarah', // Sarah (was Bella)
  '9BWtsMINqrJLrRacOk9x': 'sarah', // Aria
  FGY2WhTYpPnrIDTdsKH5: 'sarah', // Laura
  XrExE9yKIg1WjnnlVkGX: 'sarah', // Matilda
  cgSgspJ2msm6clMCkdW9: 'sarah', // Jessica
  MF3mGyEYCl7XYWbV9V6O: 'sarah', // Elli
  AZnzlk1XvdvUeBnXmlld: 'emma', // Domi
  XB0fDUnXU5powFXDhCwa: 'emma', // Charlotte
  pFZP5JQG7iQjIQuC4Bku: 'emma', // Lily
  Xb7hH8MSUJpSbSDYk0k2: 'emma', // Alice
  pNInz6obpgDQGcFmaJgB: 'michael', // Adam
  ErXwobaYiR6Ua3GkAiSt: 'michael', // Antoni
  TxGEqnHWrfWFTfGW9XjX: 'michael', // Josh
  VR6AewLTigWG4xSOukaG: 'michael', // Arnold
  nPczCjzI2devNBz1zQrb: 'michael', // Brian
  TX3LPaxmHKxFdv7VOQHJ: 'michael', // Liam
  cjVigY5qzO86Huf0OWal: 'michael', // Eric
  iP95p4xoKVk53GoZ742B: 'michael', // Chris
  bIHbv24MWmeRgasZH58o: 'michael', // Will (LiveKit's default)
  CwhRBWXzGAHq8TQ4Fs17: 'michael', // Roger
  JBFqnCBsd6RMkjVDRZzb: 'oliver', // George
  onwK4e9ZLuTAKqWW03F9: 'oliver', // Daniel
  N2lVS1w4EtoT3dr4eOWO: 'oliver', // Callum
  IKne3meq5aSn9XLyUdCD: 'oliver', // Charlie
  yoZ06aMxZJJ28mfd3POQ: 'jordan', // Sam
  SAz9YHcvj6GT2YYXdXww: 'jordan', // River
};

const ELEVENLABS_DEFAULTS = {
  modelAliases: {
    eleven_multilingual_v2: 'voicegate-1.0',
    eleven_flash_v2_5: 'voicegate-1.0',
    eleven_turbo_v2_5: 'voicegate-1.0',
    eleven_flash_v2: 'voicegate-1.0',
    eleven_turbo_v2: 'voicegate-1.0',
    eleven_monolingual_v1: 'voicegate-1.0',
    eleven_multilingual_v1: 'voicegate-1.0',
    eleven_v3: 'voicegate-1.0',
  },
  voiceAliases: ELEVENLABS_VOICES,
  defaultModel: 'voicegate-1.0',
  maxContexts: 32,
};

const elevenlabsSchema = z
  .object({
    /** ElevenLabs model ids an unchanged integration sends → model ids here. */
    modelAliases: z.record(z.string(), z.string()).default(ELEVENLABS_DEFAULTS.modelAliases),
    /** ElevenLabs voice ids → voice ids here. */
    voiceAliases: z.record(z.string(), z.string()).default(ELEVENLABS_DEFAULTS.voiceAliases),
    /** The model of a request that names none (ElevenLabs' own default is eleven_multilingual_v2). */
    defaultModel: z.string().min(1).default(ELEVENLABS_DEFAULTS.defaultModel),
    /** Contexts open at once on one `multi-stream-input` socket (ElevenLabs allows 5). */
    maxContexts: z.number().int().min(1).max(1024).default(ELEVENLABS_DEFAULTS.maxContexts),
  })
  .strict();

export const elevenlabsSection = defineSection('elevenlabs', elevenlabsSchema.default(ELEVENLABS_DEFAULTS));
