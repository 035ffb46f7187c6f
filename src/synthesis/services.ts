/**
 * @module synthesis/services
 * What a synthesis needs from the server that runs it: the catalogues, engines and store it
 * resolves against, the gate it is admitted and charged through, a logger, and the id its
 * diagnostics events carry. A server's `Services` (src/services.ts) extend these, so the server
 * hands its own; a synthesis that no HTTP request carries needs no more than these.
 */
import type { AudioCache } from '../cache/audio-cache.js';
import type { EngineRegistry } from '../engines/registry.js';
import type { Logger } from '../log/logger.js';
import type { ModelCatalogue } from '../models/catalogue.js';
import type { Store } from '../store/store.js';
import type { VoiceCatalogue } from '../voices/catalogue.js';
import type { DialogueSettings } from './dialogue.js';
import type { RequestGate } from './gate.js';

export interface SynthesisServices {
  logger: Logger;
  models: ModelCatalogue;
  engines: EngineRegistry;
  voices: VoiceCatalogue;
  /** Persistent state: organisations, keys, ledger, cloned voices, dictionaries. */
  store: Store;
  gate: RequestGate;
  /** Tells this server's diagnostics events from another's in the same process (tests run several). */
  instanceId: string;
  /** The audio cache and how it is used; null or absent: no cache. */
  cache?: SynthesisCache | null;
  /** How dialogues are made (`voices.dialogue`); absent: the defaults. */
  dialogue?: DialogueSettings;
}

export interface SynthesisCache {
  store: AudioCache;
  /** Hits are charged like misses; false: a hit is charged 0 credits. */
  billHits: boolean;
  /** Entries of built-in voices are shared by every organisation (never those of cloned voices). */
  shareAcrossOrganisations: boolean;
  /** The server's version: part of every key, so audio made by an older release is not served by a newer one. */
  version: string;
}
