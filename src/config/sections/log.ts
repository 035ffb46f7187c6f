/**
 * @module config/sections/log
 * The log's level.
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

export const logSection = defineSection(
  'log',
  z
    .object({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info') })
    .strict()
    .default({ level: 'info' }),
  { VOICEGATE_LOG_LEVEL: ['level', 'string'] },
);
