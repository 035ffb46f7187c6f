/**
 * @module services
 * What request handlers are given: configuration, catalogues, engines and
 * the request gate. Built once by `app.ts`; handlers never construct these.
 */
import type { AccessTokens } from './accounts/access-tokens.js';
import type { AccountsAdmin } from './accounts/admin.js';
import type { UsageAlerts } from './accounts/alerts.js';
import type { ChargeJournal } from './accounts/charge-journal.js';
import type { StoreOutage } from './accounts/store-outage.js';
import type { LimitCounters } from './limits/counters.js';
import type { PricingConfig } from './accounts/pricing.js';
import type { Activity } from './concurrency/activity.js';
import type { Config } from './config/schema.js';
import type { Metrics } from './metrics/metrics.js';
import type { JobService } from './jobs/service.js';
import type { Store } from './store/store.js';
import type { SynthesisServices } from './synthesis/services.js';
import type { GatewayRoster } from './cluster/roster.js';
import type { ModelImporter } from './models/import/importer.js';

/** Present when accounts are enabled. */
export interface AccountsServices {
  store: Store;
  admin: AccountsAdmin;
  limits: LimitCounters;
  pricing: PricingConfig;
  /** Signs and verifies access tokens (`POST /access-token`). */
  tokens: AccessTokens;
  /** Usage alerts, looked at after charges. */
  alerts: UsageAlerts;
  /** The webhook URL guard (alerts' URLs pass it as job webhooks' do). */
  checkWebhookUrl: (url: string) => Promise<unknown>;
  /** Charges waiting for the store on this gateway's disk (`accounts/charge-journal.ts`). */
  journal: ChargeJournal;
  /** Whether the store answers, as the accounts see it (`/readyz`'s `store`). */
  outage: StoreOutage;
}

/** The synthesis services (catalogues, engines, store, gate, logger, instance id) and the rest a server's handlers use. */
export interface Services extends SynthesisServices {
  config: Config;
  accounts: AccountsServices | null;
  version: string;
  /** Syntheses in flight and open WebSocket connections, from this server's diagnostics events. */
  activity: Activity;
  /** This server's Prometheus metrics; null when `metrics.enabled` is off. */
  metrics: Metrics | null;
  /** Long-form jobs; null when `jobs.enabled` is off. */
  jobs: JobService | null;
  /** Every gateway's card in Redis (engines, cache, status); absent without shared limit counters. */
  roster?: GatewayRoster | null;
  /** Models imported while the server runs (`POST /admin/models`); absent in servers built without it. */
  modelImports?: ModelImporter | null;
  /** The Wyoming listener's state, for `/readyz` and the metrics; absent or null when it is off. */
  wyoming?: { status(): { listening: boolean; port: number | null; connections: number } } | null;
}
