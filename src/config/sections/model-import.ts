/**
 * @module config/sections/model-import
 * Models imported through the admin API or `voicegate models import`: the
 * largest upload taken and the most an archive may unpack to, counted while
 * it unpacks so an archive bomb stops early; and the idle unload of their
 * engines.
 */
import { z } from 'zod';
import { defineSection } from '../section.js';

const GIB = 1024 * 1024 * 1024;
const MODEL_IMPORT_DEFAULTS = { maxUploadBytes: GIB, maxUnpackedBytes: 4 * GIB };

const modelImportSchema = z
  .object({
    /** Largest file one import may upload (413 `model_import_too_large` beyond). */
    maxUploadBytes: z.number().int().min(1024).default(MODEL_IMPORT_DEFAULTS.maxUploadBytes),
    /** Most bytes an archive may unpack to, all members together (413 `model_import_too_large` beyond). */
    maxUnpackedBytes: z.number().int().min(1024).default(MODEL_IMPORT_DEFAULTS.maxUnpackedBytes),
    /** Idle unload for every imported model's engine (sherpa-onnx `idleUnloadSeconds`); unset: they stay loaded. */
    idleUnloadSeconds: z.number().int().min(1).max(86_400).optional(),
  })
  .strict();

export const modelImportSection = defineSection('modelImport', modelImportSchema.default(MODEL_IMPORT_DEFAULTS), {
  VOICEGATE_MODEL_IMPORT_MAX_UPLOAD_BYTES: ['maxUploadBytes', 'number'],
  VOICEGATE_MODEL_IMPORT_MAX_UNPACKED_BYTES: ['maxUnpackedBytes', 'number'],
  VOICEGATE_MODEL_IMPORT_IDLE_UNLOAD_SECONDS: ['idleUnloadSeconds', 'number'],
});
