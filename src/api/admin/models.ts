/**
 * @module api/admin-models
 * `POST /admin/models` and `DELETE /admin/models/{id}` (the admin token):
 * importing a model while the server runs, and deleting an imported one
 * (`models/import/`). The import is multipart: `id` (optional, sent first),
 * then `model` (a Piper `.onnx`) with `config` (its `.onnx.json`), or
 * `archive` (a sherpa-onnx `.tar.bz2`), or `voices` (a Kokoro voices file)
 * with `target` (the installed Kokoro model it is added to). Each file is streamed to the import's
 * staging folder within `modelImport.maxUploadBytes`; nothing is registered
 * until every check has passed.
 */
import { createWriteStream, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import type { ImportSource, ModelImporter } from '../../models/import/importer.js';
import type { Services } from '../../services.js';
import { declareAdminRoutes } from '../route-auth.js';
import { z } from 'zod';
import { component, errorResponses, jsonContent } from '../../http/route-schema.js';

const FILE_PARTS = ['model', 'config', 'archive', 'voices'] as const;
type FilePart = (typeof FILE_PARTS)[number];

const invalid = (reason: string) => new ApiError('model_import_invalid', { reason });
const GIB = 1024 ** 3;
const bytes = (n: number) => (n >= GIB && n % GIB === 0 ? `${n / GIB} GiB` : `${n.toLocaleString('en-US')} bytes`);

/** Reads the parts into `<staging>/upload/`; the files by part name with the names they were sent as. */
async function readParts(request: FastifyRequest, staging: string, maxBytes: number): Promise<{ id?: string; target?: string; files: Partial<Record<FilePart, { path: string; name: string }>> }> {
  const files: Partial<Record<FilePart, { path: string; name: string }>> = {};
  let id: string | undefined;
  let target: string | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        const name = part.fieldname as FilePart;
        if (!FILE_PARTS.includes(name) || files[name]) {
          part.file.resume();
          throw invalid(`unexpected file part ${JSON.stringify(part.fieldname)}; send model with config (a Piper voice), archive (a sherpa-onnx .tar.bz2), or voices with target (Kokoro)`);
        }
        const path = join(staging, 'upload', name);
        await pipeline(part.file, createWriteStream(path));
        if (part.file.truncated) throw new ApiError('model_import_too_large', { reason: `${part.filename} is over ${bytes(maxBytes)} (modelImport.maxUploadBytes)` });
        files[name] = { path, name: part.filename || name };
      } else if (part.fieldname === 'id') {
        if (typeof part.value !== 'string' || part.value === '') throw invalid('id must be a non-empty text part');
        id = part.value;
      } else if (part.fieldname === 'target') {
        if (typeof part.value !== 'string' || part.value === '') throw invalid('target must name an installed Kokoro model');
        target = part.value;
      } else throw invalid(`unexpected part ${JSON.stringify(part.fieldname)}`);
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw new ApiError('model_import_too_large', { reason: `an uploaded file is over ${bytes(maxBytes)} (modelImport.maxUploadBytes)` });
    if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT') throw invalid('too many parts: send id, then model with config, or archive');
    if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') throw new ApiError('unsupported_media_type', { reason: 'send multipart/form-data with model and config, or archive' });
    if (err instanceof ApiError) throw err;
    throw invalid(`the multipart body could not be read: ${err instanceof Error ? err.message.slice(0, 200) : 'malformed'}`);
  }
  return { ...(id !== undefined ? { id } : {}), ...(target !== undefined ? { target } : {}), files };
}

/** What the parts make: a Piper pair or an archive, never both. */
function sourceOf(files: Partial<Record<FilePart, { path: string; name: string }>>, target: string | undefined): ImportSource {
  if (files.voices) {
    if (files.archive || files.model || files.config) throw invalid('send voices with target alone');
    if (!target) throw invalid('voices needs target: the installed Kokoro model they are added to');
    return { kind: 'voices', voices: files.voices, target };
  }
  if (files.archive) {
    if (files.model || files.config) throw invalid('send either archive, or model with config, not both');
    return { kind: 'archive', archive: files.archive };
  }
  if (files.model) return { kind: 'piper', model: files.model, config: files.config ?? null };
  if (files.config) throw invalid(`\`${files.config.name}\` came without its \`.onnx\` (the model part)`);
  throw invalid('no model was sent: send model (a Piper .onnx) with config (its .onnx.json), or archive (a sherpa-onnx .tar.bz2)');
}

const importParts = component(
  'ModelImport',
  z
    .object({
      id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/).optional().describe('The model id; sent first. Without it, from the file name (`en_US-amy-medium.onnx` → `en_US-amy-medium`).'),
      model: z.string().meta({ format: 'binary' }).optional().describe('A Piper voice’s `.onnx`, exactly as Piper exports it; with `config`.'),
      config: z.string().meta({ format: 'binary' }).optional().describe('Its `.onnx.json`.'),
      archive: z.string().meta({ format: 'binary' }).optional().describe('Or a sherpa-onnx model archive (`.tar.bz2`) in a published layout.'),
      voices: z.string().meta({ format: 'binary' }).optional().describe('Or a Kokoro voices file (float32, 510 × 256 per voice); with `target`.'),
      target: z.string().optional().describe('The installed Kokoro model (its engine id) the voices are added to.'),
    })
    .describe('The multipart parts of `POST /admin/models`: `model` with `config`, `archive`, or `voices` with `target`; each file within `modelImport.maxUploadBytes`.'),
);

const importedModel = component(
  'ImportedModel',
  z.object({
    id: z.string(),
    engine: z.string().describe('The engine serving it (the same id).'),
    sample_rate: z.int().describe('The model’s native rate in Hz.'),
    voices: z.array(z.string()).describe('Its voices’ ids (a single-speaker model’s one voice has the model’s id).'),
    languages: z.array(z.string()),
  }),
);

const TAGS = ['Admin'];
const IMPORT = {
  tags: TAGS,
  summary: 'Import a model',
  response: { 201: { description: 'The model, registered and serving: speech may name it at once.', content: jsonContent(importedModel) }, ...errorResponses('native', [400, 401, 403, 409, 413, 415, 503]) },
};
const DELETE = {
  tags: TAGS,
  summary: 'Delete an imported model',
  params: z.object({ id: z.string().describe('The model id.') }),
  response: {
    204: { description: 'Deleted, once its requests under way had ended; speech naming it gets 404 `model_not_found`.' },
    ...errorResponses('native', [401, 403, 404, 409, 503]),
  },
};

export function registerAdminModels(app: FastifyInstance, services: Services, importer: ModelImporter): void {
  const maxBytes = services.config.modelImport.maxUploadBytes;
  app.register(
    async (scope) => {
      declareAdminRoutes(scope);
      await scope.register(multipart, { limits: { fileSize: maxBytes, files: 2, fields: 4, fieldSize: 1024, parts: 6 } });
      scope.post('/models', { schema: IMPORT, config: { multipart: importParts } }, async (request, reply) => {
        const staging = importer.staging();
        let imported;
        try {
          const { id, target, files } = await readParts(request, staging, maxBytes);
          imported = await importer.import(staging, sourceOf(files, target), id);
        } finally {
          // The importer removes it too; a refusal while reading the parts leaves it to this.
          rmSync(staging, { recursive: true, force: true });
        }
        return reply.code(201).send(imported);
      });
      scope.delete<{ Params: { id: string } }>('/models/:id', { schema: DELETE }, async (request, reply) => {
        await importer.remove(request.params.id);
        return reply.code(204).send();
      });
    },
    { prefix: '/admin' },
  );
}
