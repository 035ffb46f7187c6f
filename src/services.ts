/**
 * @module services
 * What request handlers are given: configuration, catalogues, engines and
 * the request gate. Built once by `app.ts`; handlers never construct these.
 */
import type { Config } from './config/schema.js';
import type { EngineRegistry } from './engines/registry.js';
import type { RequestGate } from './http/gate.js';
import type { Logger } from './log/logger.js';
import type { ModelCatalogue } from './models/catalogue.js';
import type { VoiceCatalogue } from './voices/catalogue.js';

export interface Services {
  config: Config;
  logger: Logger;
  models: ModelCatalogue;
  engines: EngineRegistry;
  voices: VoiceCatalogue;
  gate: RequestGate;
  version: string;
}
