/**
 * @module app
 * Assembles a server from configuration: engines bound to models, the model
 * and voice catalogues, the request gate and the HTTP server with its routes
 * (`routes.ts`); starts engines before listening and drains requests in
 * flight on close.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { AccessTokens } from './accounts/access-tokens.js';
import { AccountsAdmin } from './accounts/admin.js';
import { bootstrapAccounts, type Bootstrap } from './accounts/bootstrap.js';
import { recordFailures } from './accounts/failures.js';
import { AccountsGate } from './accounts/gate.js';
import { ChargeJournal } from './accounts/charge-journal.js';
import { StoreOutage } from './accounts/store-outage.js';
import { resolveTokenSecret } from './accounts/token-secret.js';
import { Activity } from './concurrency/activity.js';
import type { ChangeBus } from './cluster/change-bus.js';
import { openChangeBus } from './cluster/open.js';
import { GatewayRoster } from './cluster/roster.js';
import type { Config } from './config/schema.js';
import type { Engine } from './engines/engine.js';
import { EngineRegistry } from './engines/registry.js';
import { join, resolve } from 'node:path';
import { AudioCache } from './cache/audio-cache.js';
import { SharedTier } from './cache/shared-tier.js';
import type { SynthesisCache } from './synthesis/services.js';
import { FileBlobStorage, type BlobStorage } from './cache/blob-storage.js';
import { LOCAL_ORG_ID, localGate, type RequestGate } from './synthesis/gate.js';
import { HttpConnections } from './http/connections.js';
import { buildHttpServer } from './http/server.js';
import { JobService } from './jobs/service.js';
import { gatewayState } from './api/admin/engines.js';
import { describeStorage, openJobStorage } from './storage/open.js';
import { jobToJson } from './api/resources/jobs.js';
import { checkWebhookUrl } from './webhooks/url-guard.js';
import { WebhookDeliverer } from './webhooks/deliverer.js';
import { resolveWebhookSecret } from './webhooks/signature.js';
import { jobWebhookOutbox } from './jobs/webhook-outbox.js';
import type { LimitCounters } from './limits/counters.js';
import { openLimits } from './limits/open.js';
import type { Logger } from './log/logger.js';
import { logSynthesis } from './request-log/synthesis-log.js';
import { Metrics } from './metrics/metrics.js';
import { startTracing } from './tracing/tracing.js';
import { MetricsServer } from './api/service/metrics.js';
import { buildModelCatalogue } from './models/catalogue.js';
import { ModelImporter } from './models/import/importer.js';
import { ModelSharing } from './models/import/sharing.js';
import { registerRoutes } from './routes.js';
import { WyomingListener } from './api/dialects/wyoming/listener.js';
import { advertise, type Advertisement } from './api/dialects/wyoming/zeroconf.js';
import { warmUp } from './warm-up.js';
import type { AccountsServices, Services } from './services.js';
import { openStore } from './store/open.js';
import type { Store } from './store/store.js';
import { NAMED_VOICES } from './voices/builtin.js';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { alertOutbox, UsageAlerts } from './accounts/alerts.js';
import { diagnostics, type SynthesisCharged } from './synthesis/diagnostics.js';
import { jobDiagnostics, type JobEnded } from './jobs/diagnostics.js';
import { VoiceCatalogue } from './voices/catalogue.js';

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

export interface App {
  http: FastifyInstance;
  services: Services;
  /** Starts the engines, then listens; resolves with the bound address. */
  listen(): Promise<string>;
  /** Set after `listen()` when this start created the first organisation and its key. */
  bootstrap: Bootstrap | null;
  /** Set after `listen()` when metrics have a port of their own (`metrics.port`): the URL of `/metrics` there. */
  metricsUrl: string | null;
  /** Set after `listen()` when the Wyoming listener is on (`wyoming.port`): where it listens. */
  wyomingAddress: { host: string; port: number } | null;
  /**
   * Marks the server as leaving: `/readyz` answers 503 from now on, while requests are still served,
   * each with `Connection: close`; keep-alive connections idle for at least `idleMs` (1 s) are
   * closed at once, the others as their answers end. WebSockets close with 1001 once their turn
   * has ended and they have been quiet for `idleMs`. A closed connection counts until its client
   * has closed it too, having read every byte (`http/connections.ts`).
   */
  drain(idleMs?: number): void;
  /** What a drain still waits for: HTTP connections (busy, closing, idle) and WebSockets. */
  progress(): { http: { open: number; busy: number; closing: number }; websockets: number };
  /** Stops accepting, lets requests in flight finish and their clients read them (up to the grace period), stops engines. */
  close(): Promise<void>;
}

export interface AppOptions {
  gate?: RequestGate;
  /** Replaces the configured store (tests wrap the real one to inject faults). */
  store?: Store;
  /** Replaces the configured limit counters. */
  limits?: LimitCounters;
  /** Engines to use instead of the configured ones of the same id (tests bind a model to an engine of their own). */
  engines?: Record<string, Engine>;
  /** Wraps the configured storage of long-form jobs (tests slow it down or make it fail). */
  jobStorage?: (storage: BlobStorage) => BlobStorage;
}

export async function createApp(config: Config, logger: Logger, options: AppOptions = {}): Promise<App> {
  const models = buildModelCatalogue(config.models, new Set(Object.keys(config.engines)));
  const engines = new EngineRegistry(config.engines, models.boundEngines(), { logger, dataDir: config.dataDir }, options.engines);
  const store =
    options.store ??
    (await openStore(config, (err, waitedMs) => logger.warn({ err: err.message, waitedMs, giveUpAfterMs: config.store.startupWaitMs }, 'waiting for the database')));
  const voices = new VoiceCatalogue(NAMED_VOICES, store, undefined, config.voices.maxMix);
  let accounts: AccountsServices | null = null;
  let alertWebhooks: WebhookDeliverer | null = null;
  let changes: ChangeBus | null = null;
  let gate = options.gate ?? localGate;
  if (config.accounts.enabled) {
    const pricing = { usdPerMillionCredits: config.accounts.usdPerMillionCredits, costHeaderAliasPrefix: config.accounts.costHeaderAliasPrefix };
    const limits = options.limits ?? openLimits(config, logger);
    const admin = new AccountsAdmin(store, config.accounts);
    const tokens = new AccessTokens(resolveTokenSecret(config.accounts.tokenSecret, config.dataDir));
    const alerts = new UsageAlerts(store, logger, { fired: () => alertWebhooks?.kick() });
    // Charges the store cannot take while it is away wait here, on this gateway's disk, until it answers.
    const journal = new ChargeJournal(join(config.dataDir, 'charge-journal.sqlite'), store.ledger, logger);
    const outage = new StoreOutage(config.accounts.outageMaxSeconds * 1000, logger);
    accounts = { store, admin, limits, pricing, tokens, alerts, journal, outage, checkWebhookUrl: (url) => checkWebhookUrl(url, config.jobs.webhooks) };
    // Every change reaches every server's caches at once through the bus (Redis when configured); else the CLI's within their lifetime.
    const bus = (changes = openChangeBus(config, logger));
    admin.onChange((change) => void bus.publish(change).catch((err) => logger.warn({ err }, 'could not announce an account change to other servers')));
    if (options.gate) gate = options.gate;
    else {
      const accountsGate = new AccountsGate(store, limits, pricing, logger, config.accounts.reservationTtlMs, tokens, journal, outage);
      bus.subscribe((change) => accountsGate.invalidate(change));
      bus.onMissed(() => accountsGate.forgetAll());
      gate = accountsGate;
    }
  }
  const cache: SynthesisCache | null = config.cache.enabled
    ? {
        store: new AudioCache({
          memoryBytes: config.cache.memoryBytes,
          diskBytes: config.cache.diskBytes,
          maxEntryBytes: config.cache.maxEntryBytes,
          blobs: config.cache.diskBytes > 0 ? new FileBlobStorage(resolve(config.cache.dir ?? join(config.dataDir, 'cache'))) : null,
          shared:
            config.cache.shared && config.redis.url
              ? new SharedTier({
                  url: config.redis.url,
                  keyPrefix: config.redis.keyPrefix,
                  timeoutMs: config.cache.sharedTimeoutMs,
                  maxEntryBytes: config.cache.sharedMaxEntryBytes,
                  ttlSeconds: config.cache.sharedTtlSeconds,
                  logger,
                })
              : null,
          logger,
        }),
        billHits: config.cache.billHits,
        shareAcrossOrganisations: config.cache.shareAcrossOrganisations,
        version: VERSION,
      }
    : null;
  // A purge asked of any server reaches this one's memory and disk tiers (the one asked also purges the shared tier).
  changes?.subscribe((change) => {
    if (change.purge) void cache?.store.purge(change.purge, { local: true }).catch((err) => logger.warn({ err }, 'audio cache purge from another server failed'));
  });
  const instanceId = randomUUID();
  const activity = new Activity(instanceId);
  const metrics = config.metrics.enabled
    ? new Metrics({
        instanceId,
        version: VERSION,
        engines,
        models,
        activity,
        store,
        limits: accounts?.limits,
        cache: cache?.store ?? null,
        jobs: config.jobs.enabled ? store.jobs : null,
        journal: accounts?.journal ?? null,
        storeState: accounts ? () => accounts!.outage.state : null,
        held: accounts && store.ledger.held ? () => store.ledger.held!() : null,
        // Read at scrape time, once the server below exists.
        lifecycle: { draining: () => draining || closing, connections: () => connections.counts(), ...(config.wyoming.port !== null ? { wyoming: () => services.wyoming?.status() ?? null } : {}) },
      })
    : null;
  const metricsServer = metrics && config.metrics.port !== null ? new MetricsServer(metrics) : null;
  const services: Services = { config, logger, models, engines, voices, store, gate, accounts, version: VERSION, instanceId, activity, metrics, cache, jobs: null, dialogue: { pauseSeconds: config.voices.dialogue.pauseMs / 1000, maxTurns: config.voices.dialogue.maxTurns } };
  const webhookOptions = { ...config.jobs.webhooks };
  const webhookSecret = resolveWebhookSecret(config.jobs.webhooks.secret, config.dataDir);
  const webhooks = config.jobs.enabled
    ? new WebhookDeliverer({
        outbox: jobWebhookOutbox(store.jobs, (job) => JSON.stringify({ type: `job.${job.status}`, data: jobToJson(job, services) })),
        kind: 'job',
        instance: instanceId,
        secret: webhookSecret,
        options: webhookOptions,
        logger,
        pollMs: config.jobs.pollMs,
      })
    : null;
  // Usage alerts' webhooks: the same signing, guard and retries, from the alerts' own outbox.
  alertWebhooks = accounts
    ? new WebhookDeliverer({ outbox: alertOutbox(store), kind: 'alert', instance: instanceId, secret: webhookSecret, options: webhookOptions, logger, pollMs: config.jobs.pollMs, concurrency: 1 })
    : null;
  const stopAlerts = accounts ? watchCharges(instanceId, accounts.alerts) : () => {};
  const jobsDir = config.jobs.dir ?? join(config.dataDir, 'jobs');
  const opened = config.jobs.enabled ? openJobStorage(config.storage, jobsDir) : null;
  const jobBlobs = opened && options.jobStorage ? options.jobStorage(opened) : opened;
  if (jobBlobs) logger.info({ storage: describeStorage(config.storage, jobsDir) }, 'job storage');
  const jobs = jobBlobs
    ? new JobService({
        config: config.jobs,
        services,
        blobs: jobBlobs,
        logger,
        checkWebhookUrl: (url) => checkWebhookUrl(url, webhookOptions),
        webhookDue: () => webhooks?.kick(),
      })
    : null;
  services.jobs = jobs;
  let ownModelBus: ChangeBus | null = null;
  const modelImports = (services.modelImports = new ModelImporter({
    dataDir: config.dataDir,
    maxUnpackedBytes: config.modelImport.maxUnpackedBytes,
    idleUnloadSeconds: config.modelImport.idleUnloadSeconds,
    engines,
    models,
    voices,
    logger,
  }));
  // With Redis (several gateways) and job storage, an import reaches every gateway: the files through the storage, the news on the bus.
  const modelBus = config.redis.url && jobBlobs ? (changes ?? (ownModelBus = openChangeBus(config, logger))) : null;
  const modelSharing = modelBus ? new ModelSharing(modelImports, jobBlobs!, (change) => modelBus.publish({ model: change }), config.modelImport.maxUnpackedBytes, logger) : null;
  if (modelBus && modelSharing) {
    modelImports.shareWith(modelSharing);
    modelBus.subscribe((change) => {
      if (change.model) void modelSharing.heard(change.model).catch((err: unknown) => logger.error({ change: change.model, reason: (err as Error).message }, 'a model change from another gateway could not be applied'));
    });
  }
  const stopLogging = logSynthesis(logger, instanceId);
  // Failed requests beside the ledger (accounts on: without them nothing is charged, so there is no usage to set them against).
  const stopRecordingFailures = accounts ? recordFailures(store.usage, logger, instanceId) : async () => {};
  let closing = false;
  let draining = false;
  const http = buildHttpServer(services, () => closing, () => draining || closing);
  const connections = new HttpConnections(http.server, config.server.shutdownGraceMs);
  const tracing = startTracing({ instanceId, version: VERSION, server: http.server, models, logger });
  const websockets = registerRoutes(http, services, () => closing, () => draining);
  const wyoming =
    config.wyoming.port !== null
      ? new WyomingListener(
          services,
          {
            host: config.wyoming.host ?? config.server.host,
            port: config.wyoming.port,
            maxConnections: config.wyoming.maxConnections,
            idleTimeoutMs: config.wyoming.idleTimeoutMs,
            shutdownGraceMs: config.server.shutdownGraceMs,
          },
          logger,
        )
      : null;
  services.wyoming = wyoming;
  let zeroconf: Advertisement | null = null;
  // With the limit counters shared in Redis, each gateway's card lets any gateway's console show them all.
  const gatewayId = accounts?.limits.gatewayId;
  const roster = (services.roster =
    gatewayId && config.redis.url ? new GatewayRoster({ url: config.redis.url, keyPrefix: config.redis.keyPrefix, timeoutMs: config.redis.timeoutMs, logger }) : null);

  const app: App = {
    http,
    services,
    bootstrap: null,
    metricsUrl: null,
    wyomingAddress: null,
    async listen() {
      if (accounts) {
        app.bootstrap = await bootstrapAccounts(accounts.store, accounts.admin, config.accounts);
        // Charges a previous run journaled (it was killed during an outage) reach the store before this
        // server reports ready; what the store does not take yet is replayed in the background.
        await accounts.journal.replay();
        accounts.journal.start();
      }
      else if (!(await store.orgs.get(LOCAL_ORG_ID))) {
        // Without accounts everything belongs to one implicit organisation (voices, dictionaries).
        await store.orgs.create({ id: LOCAL_ORG_ID, name: 'local', limits: { maxConcurrent: null, rateLimit: null } }).catch(async (err: unknown) => {
          // Another server sharing the store may have created it a moment ago.
          if (!(await store.orgs.get(LOCAL_ORG_ID))) throw err;
        });
      }
      await Promise.all([engines.start(), cache?.store.open()]);
      voices.addBuiltin(engines.builtinVoices());
      // Models imported before this start (models/import), served again without being imported again.
      await modelImports.loadInstalled();
      await modelSharing?.fetchMissing().catch((err: unknown) => logger.error({ reason: (err as Error).message }, 'the shared storage could not be read for imported models'));
      // Before listening: the first callers meet warm code (warm-up.ts); nothing outside can reach it yet.
      if (config.server.warmUp) await warmUp(services, logger);
      jobs?.start();
      webhooks?.start();
      alertWebhooks?.start();
      await tracing.ready;
      // Before the HTTP port, so a server that reports ready serves Wyoming too.
      if (wyoming) {
        app.wyomingAddress = await wyoming.listen();
        logger.info(app.wyomingAddress, 'wyoming listening');
        if (config.wyoming.zeroconf) zeroconf = await advertise({ name: config.wyoming.zeroconfName, port: app.wyomingAddress.port, logger });
      }
      const address = await http.listen({ host: config.server.host, port: config.server.port });
      roster?.start(gatewayId!, () => ({ ...gatewayState(services, () => closing || draining), cache: cache?.store.stats() ?? null }));
      if (metricsServer) {
        app.metricsUrl = await metricsServer.listen(config.metrics.host ?? config.server.host, config.metrics.port!);
        logger.info({ url: app.metricsUrl }, 'metrics listening');
      }
      return address;
    },
    drain(idleMs = 1000) {
      draining = true;
      const closed = connections.drain(idleMs);
      void websockets.drain(idleMs);
      wyoming?.drain();
      logger.info({ closed, ...connections.counts() }, 'draining: idle keep-alive connections closed, the others answered with Connection: close; WebSockets close with 1001 after their turn');
    },
    progress() {
      return { http: connections.counts(), websockets: websockets.open, ...(wyoming ? { wyoming: wyoming.status().connections } : {}) };
    },
    async close() {
      closing = true;
      const force = setTimeout(() => http.server.closeAllConnections(), config.server.shutdownGraceMs);
      force.unref();
      try {
        await Promise.all([http.close(), metricsServer?.close(), wyoming?.close(), zeroconf?.close()]);
      } finally {
        clearTimeout(force);
        // Runs stop before the engines they use; their leases are handed back for another server to resume.
        stopAlerts();
        await Promise.all([jobs?.stop(), webhooks?.stop(), accounts?.alerts.stop()]);
        jobBlobs?.close?.();
        await alertWebhooks?.stop();
        await engines.stop();
        // Entries being written to disk are finished, so a restart finds them whole.
        await cache?.store.settled();
        await Promise.all([accounts?.limits.close(), changes?.close(), ownModelBus?.close(), cache?.store.close(), roster?.close(), stopRecordingFailures()]);
        // A last try at what waits in the journal; what the store still does not take stays on disk for the next start.
        await accounts?.journal.replay().catch(() => 0);
        await accounts?.journal.close();
        await store.close();
        stopLogging();
        await tracing.stop();
        metrics?.stop();
        activity.stop();
      }
    },
  };
  return app;
}

/** This server's charges (a request's or WebSocket turn's, and a job's at its end) have the organisation's usage alerts looked at. */
function watchCharges(instanceId: string, alerts: UsageAlerts): () => void {
  const onCharged = (message: unknown) => {
    const event = message as SynthesisCharged;
    if (event.instance === instanceId) alerts.charged(event.orgId);
  };
  const onJobEnd = (message: unknown) => {
    const event = message as JobEnded;
    if (event.instance === instanceId && event.status === 'succeeded') alerts.charged(event.orgId);
  };
  subscribe(diagnostics.charged.name as string, onCharged);
  subscribe(jobDiagnostics.end.name as string, onJobEnd);
  return () => {
    unsubscribe(diagnostics.charged.name as string, onCharged);
    unsubscribe(jobDiagnostics.end.name as string, onJobEnd);
  };
}
