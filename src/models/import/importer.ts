/**
 * @module models/import/importer
 * Imports a model while the server runs: a Piper voice (`.onnx` with its
 * `.onnx.json`) or a sherpa-onnx archive (`.tar.bz2`), each made into a
 * sherpa-onnx model folder in a staging folder beside `<dataDir>/models/`,
 * checked there as the engine would check it (layout, file checks, the
 * eSpeak NG voice, a load in a child process), then moved into
 * `<dataDir>/models/<id>/` in one rename and registered as an engine and a
 * model of the same id, with its voices. A refused import leaves no file,
 * engine, model or voice behind. Each imported folder keeps a manifest
 * (`voicegate-model.json`), from which a restart registers it again and
 * which tells an imported model from a configured one: only imported ones
 * are deleted.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ApiError } from '../../errors/api-error.js';
import type { EngineRegistry } from '../../engines/registry.js';
import type { z } from 'zod';
import { engineConfigSchema, type EngineConfig } from '../../engines/engine-types.js';
import { ensureEspeakData } from '../../engines/sherpa/espeak-data.js';
import { CLONING_FAMILIES, detectLayout, LayoutError, sherpaConfig, type ModelLayout } from '../../engines/sherpa/layout.js';
import { probeModel } from '../../engines/sherpa/probe.js';
import { validateLayout } from '../../engines/sherpa/validate.js';
import type { Logger } from '../../log/logger.js';
import type { VoiceCatalogue } from '../../voices/catalogue.js';
import { BUILTIN_MODELS } from '../builtin.js';
import type { ModelCatalogue } from '../catalogue.js';
import type { ModelProfile } from '../profile.js';
import { unpackArchive } from './archive.js';
import { espeakVoiceExists } from './espeak-voice.js';
import { buildKokoroVoices } from './kokoro-voices.js';
import { checkPiperGraph, readPiperConfig, writePiperModel } from './piper.js';
import { ImportRefused } from './refusal.js';

/** What one import was given: files already on disk (in the staging folder's `upload/`, or the CLI's paths). */
export type ImportSource =
  | { kind: 'piper'; model: { path: string; name: string }; config: { path: string; name: string } | null }
  | { kind: 'archive'; archive: { path: string; name: string } }
  | { kind: 'voices'; voices: { path: string; name: string }; target: string };

/** The answer of an import: `POST /admin/models`' 201 body. */
export interface ImportedModel {
  id: string;
  engine: string;
  sample_rate: number;
  voices: string[];
  languages: string[];
}

export interface ImporterOptions {
  dataDir: string;
  maxUnpackedBytes: number;
  engines: EngineRegistry;
  models: ModelCatalogue;
  voices: VoiceCatalogue;
  logger: Logger;
  /** Longest the load check may take. */
  probeTimeoutMs?: number;
  /** Idle unload for imported models' engines (`modelImport.idleUnloadSeconds`), applied at each registration. */
  idleUnloadSeconds?: number;
}

/** The file in an imported model's folder that says it was imported, and how its engine is set up. */
export const MANIFEST = 'voicegate-model.json';

interface Manifest {
  id: string;
  importedAt: string;
  /** The engine entry, its `model` folder left out (it is the manifest's own folder). */
  engine: Omit<z.input<typeof engineConfigSchema>, 'model'>;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The id a file name gives: `en_US-amy-medium.onnx` → `en_US-amy-medium`. */
export function idFromFileName(name: string): string {
  return basename(name)
    .replace(/\.(tar\.bz2|tbz2?|onnx\.json|onnx|json|bin)$/i, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64);
}

/** Where imports and deletions made here are passed on to the other gateways (sharing.ts). */
export interface ImportAnnouncer {
  imported(id: string): Promise<void>;
  deleted(id: string): Promise<void>;
}

export class ModelImporter {
  /** Ids being imported or deleted right now. */
  private readonly busy = new Set<string>();
  private announcer: ImportAnnouncer | null = null;

  /** Passes each import and deletion made here on to the other gateways from now on. */
  shareWith(announcer: ImportAnnouncer): void {
    this.announcer = announcer;
  }

  constructor(private readonly options: ImporterOptions) {}

  get modelsDir(): string {
    return join(this.options.dataDir, 'models');
  }

  /** A new, empty staging folder beside the models' (the same file system, so the final move is one rename). */
  staging(): string {
    const dir = join(this.modelsDir, `.import-${randomBytes(6).toString('hex')}`);
    mkdirSync(join(dir, 'upload'), { recursive: true });
    return dir;
  }

  /** Whether `id` names an imported model. */
  isImported(id: string): boolean {
    return this.options.engines.isAdded(id) && this.options.models.get(id)?.engine === id;
  }

  /**
   * Checks, installs and registers a model from `source`, staged in `staging` (which is removed
   * afterwards, whatever happens). Throws an `ApiError`: `model_import_invalid`,
   * `model_import_too_large` or `model_exists`.
   */
  async import(staging: string, source: ImportSource, requestedId?: string): Promise<ImportedModel> {
    const id = requestedId ?? idFromFileName(source.kind === 'piper' ? source.model.name : source.kind === 'archive' ? source.archive.name : source.voices.name);
    try {
      if (!ID.test(id)) throw new ImportRefused(`the model id ${JSON.stringify(id)} must be 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit`);
      this.claim(id);
      try {
        const built = join(staging, 'model');
        mkdirSync(built, { recursive: true });
        if (source.kind === 'piper') this.buildPiper(built, id, source);
        else if (source.kind === 'voices') buildKokoroVoices(built, id, source.voices, source.target, this.options.engines);
        else await this.buildArchive(staging, built, source.archive);
        await this.verify(built);
        const dir = join(this.modelsDir, id);
        const engine = { type: 'sherpa-onnx' as const, numThreads: 1 };
        const manifest: Manifest = { id, importedAt: new Date().toISOString(), engine };
        writeFileSync(join(built, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
        renameSync(built, dir);
        let imported: ImportedModel;
        try {
          imported = await this.register(id, dir, manifest);
        } catch (err) {
          rmSync(dir, { recursive: true, force: true });
          throw new ImportRefused(`the model did not start: ${(err as Error).message}`);
        }
        // Served here already; the other gateways follow when they hear of it.
        await this.announcer?.imported(id).catch((err: unknown) => this.options.logger.warn({ model: id, err }, 'the imported model could not be shared with the other gateways'));
        return imported;
      } finally {
        this.busy.delete(id);
      }
    } catch (err) {
      if (err instanceof ImportRefused) throw err.toApiError();
      throw err;
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }

  /** Reserves `id` for this import, or refuses when a model, engine or folder has it. */
  private claim(id: string): void {
    const { engines, models } = this.options;
    if (this.busy.has(id) || models.get(id) || engines.get(id) || engines.configOf(id) || existsSync(join(this.modelsDir, id))) throw new ApiError('model_exists', { id });
    this.busy.add(id);
  }

  private buildPiper(dir: string, id: string, source: Extract<ImportSource, { kind: 'piper' }>): void {
    if (!source.config) throw new ImportRefused(`a Piper voice needs its \`.onnx.json\` beside \`${source.model.name}\` (the \`config\` part)`);
    const config = readPiperConfig(readFileSync(source.config.path, 'utf8'), source.config.name);
    const hasMetadata = checkPiperGraph(source.model.path, source.model.name, config, source.config.name);
    writePiperModel(dir, id, source.model.path, config, hasMetadata);
  }

  /** Unpacks the archive, then moves its model folder (its one top-level folder, as published) to `dir`. */
  private async buildArchive(staging: string, dir: string, archive: { path: string; name: string }): Promise<void> {
    const unpacked = join(staging, 'unpacked');
    mkdirSync(unpacked);
    await unpackArchive(archive.path, unpacked, this.options.maxUnpackedBytes);
    const entries = readdirSync(unpacked);
    const root = entries.length === 1 && statSync(join(unpacked, entries[0])).isDirectory() ? join(unpacked, entries[0]) : unpacked;
    rmSync(dir, { recursive: true, force: true });
    renameSync(root, dir);
    // A Piper pair packed as it was exported (no tokens.txt yet): converted as an uploaded pair is.
    const names = readdirSync(dir);
    const pair = names.find((n) => n.endsWith('.onnx') && names.includes(`${n}.json`));
    if (pair && !names.includes('tokens.txt')) {
      const base = pair.slice(0, -'.onnx'.length);
      const onnx = join(staging, pair);
      renameSync(join(dir, pair), onnx);
      const config = readPiperConfig(readFileSync(join(dir, `${pair}.json`), 'utf8'), `${pair}.json`);
      writePiperModel(dir, base, onnx, config, checkPiperGraph(onnx, pair, config, `${pair}.json`));
    }
  }

  /** The engine's own checks, and a load in a child process, on the staged folder. */
  private async verify(dir: string): Promise<void> {
    let layout: ModelLayout;
    try {
      layout = detectLayout(dir);
    } catch (err) {
      throw new ImportRefused(err instanceof LayoutError ? err.message : (err as Error).message);
    }
    if (!readdirSync(dir).some((n) => n.endsWith('.onnx'))) throw new ImportRefused('no `.onnx` graph was found: the archive is not in a published sherpa-onnx layout');
    if (CLONING_FAMILIES.has(layout.family)) throw new ImportRefused(`a ${layout.family} model clones voices; import it through the configuration (engines.<id>.model) instead`);
    if (!layout.files.dataDir) layout.files.dataDir = ensureEspeakData(join(this.options.dataDir, 'espeak-ng-data'));
    const problems = validateLayout(layout).map((p) => p.replaceAll(`${dir}/`, '').replaceAll(dir, 'the model folder'));
    if (problems.length) throw new ImportRefused(problems.join('; '));
    const voice = layout.metadata.voice;
    if (voice && layout.family !== 'matcha' && !espeakVoiceExists(layout.files.dataDir, voice)) {
      throw new ImportRefused(`the eSpeak NG voice ${JSON.stringify(voice)} the model speaks with does not exist in ${layout.files.dataDir === join(dir, 'espeak-ng-data') ? 'its espeak-ng-data' : "eSpeak NG's data"}`);
    }
    try {
      await probeModel(sherpaConfig(layout, { numThreads: 1 }), this.options.probeTimeoutMs);
    } catch (err) {
      throw new ImportRefused(`the graph does not load: ${(err as Error).message}`);
    }
  }

  /** Starts the engine of the folder `dir` and adds its model and voices. */
  private async register(id: string, dir: string, manifest: Manifest): Promise<ImportedModel> {
    const { engines, models, voices } = this.options;
    const idle = this.options.idleUnloadSeconds;
    const config = engineConfigSchema.parse({ ...manifest.engine, ...(idle !== undefined ? { idleUnloadSeconds: idle } : {}), model: dir });
    const engine = await engines.add(id, config);
    const own = engine.builtinVoices?.() ?? [];
    const languages = [...new Set(own.map((v) => v.language))];
    const base = BUILTIN_MODELS['voicegate-1.0'];
    const profile: ModelProfile = {
      ...base,
      id,
      name: id,
      description: `Imported ${String(engine.info().family ?? 'sherpa-onnx')} model (${own.length} voice${own.length === 1 ? '' : 's'}).`,
      engine: id,
      defaultVoice: own[0]?.id ?? null,
      languages,
    };
    voices.addBuiltin(own);
    models.add(profile);
    this.options.logger.info({ model: id, dir, sampleRate: engine.sampleRate, voices: own.length }, 'model imported');
    return { id, engine: id, sample_rate: engine.sampleRate, voices: own.map((v) => v.id), languages };
  }

  /**
   * Deletes imported model `id`: new requests get `model_not_found` at once, requests under way end
   * first (the engine's stop waits for them), then its folder goes. Built-in and configured models
   * are `model_not_removable`.
   */
  async remove(id: string, options: { announce?: boolean } = {}): Promise<void> {
    const { engines, models, voices } = this.options;
    if (!this.isImported(id)) {
      const model = models.get(id);
      if (model) throw new ApiError('model_not_removable', { id, what: BUILTIN_MODELS[id] ? 'built in' : 'defined in the configuration' });
      throw new ApiError('model_not_found', { reason: `model ${id} does not exist` });
    }
    if (this.busy.has(id)) throw new ApiError('model_exists', { id });
    this.busy.add(id);
    try {
      const own = engines.get(id)?.builtinVoices?.() ?? [];
      models.remove(id);
      voices.removeBuiltin(own.map((v) => v.id));
      await engines.remove(id);
      rmSync(join(this.modelsDir, id), { recursive: true, force: true });
      this.options.logger.info({ model: id }, 'imported model deleted');
      if (options.announce !== false) await this.announcer?.deleted(id).catch((err: unknown) => this.options.logger.warn({ model: id, err }, 'the deletion could not be passed on to the other gateways'));
    } finally {
      this.busy.delete(id);
    }
  }

  /** Registers the imported models found in `<dataDir>/models/` (at start); one that fails is logged and left out. */
  async loadInstalled(): Promise<void> {
    if (!existsSync(this.modelsDir)) return;
    for (const entry of readdirSync(this.modelsDir, { withFileTypes: true })) {
      if (entry.name.startsWith('.import-')) {
        rmSync(join(this.modelsDir, entry.name), { recursive: true, force: true }); // an import a crash cut short
        continue;
      }
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      await this.load(entry.name).catch((err: unknown) => this.options.logger.error({ model: entry.name, reason: (err as Error).message }, 'imported model could not start; it is not served'));
    }
  }

  /** Registers the imported model in `<dataDir>/models/<id>/`, when it has a manifest and is not registered yet. */
  async load(id: string): Promise<ImportedModel | null> {
    const dir = join(this.modelsDir, id);
    const path = join(dir, MANIFEST);
    if (!existsSync(path) || this.isImported(id)) return null;
    const manifest = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
    if (manifest.id !== id || this.options.models.get(id) || this.options.engines.get(id)) throw new Error(`model ${id} exists already, or its manifest names another id`);
    return this.register(id, dir, manifest);
  }
}
