/**
 * @module services
 * What request handlers are given: configuration, catalogues, engines and
 * the request gate. Built once by `app.ts`; handlers never construct these.
 */
import type { AccessTokens } from './accounts/access-tokens.js';
import type { AccountsAdmin } from './accounts/admin.js';
import type { LimitCounters } from './limits/counters.js';
import type { PricingConfig } from './accounts/pricing.js';
import type { Activity } from './concurrency/activity.js';
import type { Config } from './config/schema.js';
import type { EngineRegistry } from './engines/registry.js';
import type { RequestGate } from './http/gate.js';
import type { Logger } from './log/logger.js';
import type { Metrics } from './metrics/metrics.js';
import type { ModelCatalogue } from './models/catalogue.js';
import type { Store } from './store/store.js';
import type { VoiceCatalogue } from './voices/catalogue.js';

/** Present when accounts are enabled. */
export interface AccountsServices {
  store: Store;
  admin: AccountsAdmin;
  limits: LimitCounters;
  pricing: PricingConfig;
  /** Signs and verifies access tokens (`POST /access-token`). */
  tokens: AccessTokens;
}

export interface Services {
  config: Config;
  logger: Logger;
  models: ModelCatalogue;
  engines: EngineRegistry;
  voices: VoiceCatalogue;
  /** Persistent state: organisations, keys, ledger, cloned voices, dictionaries. */
  store: Store;
  gate: RequestGate;
  accounts: AccountsServices | null;
  version: string;
  /** Tells this server's diagnostics events from another's in the same process (tests run several). */
  instanceId: string;
  /** Syntheses in flight and open WebSocket connections, from this server's diagnostics events. */
  activity: Activity;
  /** This server's Prometheus metrics; null when `metrics.enabled` is off. */
  metrics: Metrics | null;
}
