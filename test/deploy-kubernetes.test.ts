/**
 * @module test/deploy-kubernetes
 * The Kubernetes manifests under `deploy/kubernetes/`: the base and every
 * overlay are rendered with `kubectl kustomize`, every document is validated
 * against the Kubernetes OpenAPI schemas (`kubernetes-models`; the
 * prometheus-operator's ServiceMonitor and PrometheusRule, CRDs those
 * schemas do not include, against schemas of the fields used here), and the invariants a deployment
 * depends on are checked: probes on the right paths and port, the drain fits
 * in the termination grace period, every ConfigMap and Secret reference
 * resolves, the gateways' config file and environment load as Voicegate reads
 * them, and the Service, autoscaler, disruption budget, scrape configuration
 * and GPU pool point at the pods they are meant for. Skipped, with a message,
 * where kubectl is not installed.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import { buildModelCatalogue } from '../src/models/catalogue.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const kustomizations = join(root, 'deploy', 'kubernetes');
/** The base and every overlay: a new overlay is tested without being listed here. */
const targets = ['base', ...readdirSync(join(kustomizations, 'overlays')).sort().map((name) => `overlays/${name}`)];

const execFileAsync = promisify(execFile);
const kubectlCheck = spawnSync('kubectl', ['kustomize', '--help'], { encoding: 'utf8', timeout: 20_000 });
const skip = kubectlCheck.status === 0 ? false : 'kubectl (with kustomize) is not on PATH, so the Kubernetes manifests cannot be rendered here';
// Under CI the manifests are always checked: a missing kubectl fails rather than skips.
if (skip && process.env.CI) throw new Error(skip);
const TIMEOUT = 60_000;

const GATEWAY = 'voicegate';
const GPU = 'nvidia.com/gpu';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

const renders = new Map<string, Promise<Manifest[]>>();

/** `kubectl kustomize <target>`, parsed; rendered once per target. */
function render(target: string): Promise<Manifest[]> {
  let rendered = renders.get(target);
  if (!rendered) {
    rendered = execFileAsync('kubectl', ['kustomize', join(kustomizations, target)], { maxBuffer: 16 * 1024 * 1024, timeout: 30_000 }).then(({ stdout }) =>
      parseAllDocuments(stdout).map((document) => {
        assert.deepEqual(document.errors, [], `${target}: YAML errors`);
        return document.toJS() as Manifest;
      }),
    );
    renders.set(target, rendered);
  }
  return rendered;
}

// ---------------------------------------------------------------------------
// Schemas

/** The prometheus-operator's duration pattern (monitoring.coreos.com/v1 Duration). */
const duration = { type: 'string', pattern: '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$' };
const stringMap = { type: 'object', additionalProperties: { type: 'string' } };

/**
 * ServiceMonitor (monitoring.coreos.com/v1): the required fields and the
 * types of the fields these manifests use, as the CRD declares them; any
 * other field is refused, so a misspelt one cannot pass unnoticed.
 */
const serviceMonitorSchema = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  properties: {
    apiVersion: { const: 'monitoring.coreos.com/v1' },
    kind: { const: 'ServiceMonitor' },
    metadata: {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string', minLength: 1 }, namespace: { type: 'string' }, labels: stringMap, annotations: stringMap },
    },
    spec: {
      type: 'object',
      required: ['selector', 'endpoints'],
      additionalProperties: false,
      properties: {
        jobLabel: { type: 'string' },
        selector: {
          type: 'object',
          additionalProperties: false,
          properties: { matchLabels: stringMap, matchExpressions: { type: 'array' } },
        },
        namespaceSelector: {
          type: 'object',
          additionalProperties: false,
          properties: { any: { type: 'boolean' }, matchNames: { type: 'array', items: { type: 'string' } } },
        },
        endpoints: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            additionalProperties: false,
            anyOf: [{ required: ['port'] }, { required: ['targetPort'] }],
            properties: {
              port: { type: 'string', minLength: 1 },
              targetPort: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
              path: { type: 'string', pattern: '^/' },
              scheme: { enum: ['http', 'https', 'HTTP', 'HTTPS'] },
              interval: duration,
              scrapeTimeout: duration,
              honorLabels: { type: 'boolean' },
            },
          },
        },
      },
    },
  },
};

/** PrometheusRule (monitoring.coreos.com/v1): groups of alerting or recording rules, as the CRD declares them. */
const prometheusRuleSchema = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  properties: {
    apiVersion: { const: 'monitoring.coreos.com/v1' },
    kind: { const: 'PrometheusRule' },
    metadata: serviceMonitorSchema.properties.metadata,
    spec: {
      type: 'object',
      additionalProperties: false,
      properties: {
        groups: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name'],
            additionalProperties: false,
            properties: {
              name: { type: 'string', minLength: 1 },
              interval: duration,
              rules: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['expr'],
                  additionalProperties: false,
                  oneOf: [{ required: ['alert'] }, { required: ['record'] }],
                  properties: {
                    alert: { type: 'string' },
                    record: { type: 'string' },
                    expr: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
                    for: duration,
                    labels: stringMap,
                    annotations: stringMap,
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};

const ajv = new Ajv2020({ allErrors: true });
const customSchemas: Record<string, ReturnType<typeof ajv.compile>> = {
  'monitoring.coreos.com/v1/ServiceMonitor': ajv.compile(serviceMonitorSchema),
  'monitoring.coreos.com/v1/PrometheusRule': ajv.compile(prometheusRuleSchema),
};

/**
 * kustomize folds a long base64 value of a generated Secret over several
 * lines; the API server's decoder (Go's encoding/base64) skips the line
 * breaks, the schema's "byte" format does not, so they are removed first.
 */
function asSent(document: Manifest): Manifest {
  if (document.kind !== 'Secret' || !document.data) return document;
  const data = Object.fromEntries(Object.entries(document.data as Record<string, string>).map(([key, value]) => [key, value.replace(/[\r\n]/g, '')]));
  return { ...document, data };
}

/** Validates one document: a CRD against its schema above, anything else with kubernetes-models' class for its apiVersion and kind. */
async function validate(document: Manifest): Promise<void> {
  const id = `${document.apiVersion}/${document.kind}`;
  const where = `${document.kind} ${document.metadata?.name}`;
  const custom = customSchemas[id];
  if (custom) {
    assert.ok(custom(document), `${where}: ${ajv.errorsText(custom.errors)}`);
    return;
  }
  let module: Record<string, unknown>;
  try {
    module = (await import(`kubernetes-models/${id}`)) as Record<string, unknown>;
  } catch {
    assert.fail(`${where}: no schema for ${id} in kubernetes-models, and none of our own`);
  }
  const Model = module[document.kind] as new (data: unknown) => { validate(): void };
  assert.doesNotThrow(() => new Model(asSent(document)).validate(), `${where} does not match the schema of ${id}`);
}

// ---------------------------------------------------------------------------
// Reading the rendered objects

function ofKind<T>(documents: Manifest[], kind: string): (T & Manifest)[] {
  return documents.filter((document) => document.kind === kind) as (T & Manifest)[];
}

function named<T extends Manifest>(documents: T[], name: string, what: string): T {
  const found = documents.find((document) => document.metadata.name === name);
  assert.ok(found, `no ${what} named ${name}`);
  return found;
}

function podSpec(deployment: IDeployment): IPodSpec {
  const spec = deployment.spec?.template.spec;
  assert.ok(spec, `Deployment ${deployment.metadata?.name} has no pod spec`);
  return spec;
}

function podLabels(deployment: IDeployment): Record<string, string> {
  return deployment.spec?.template.metadata?.labels ?? {};
}

/** A matchLabels-style selector (non-empty) selects these labels. */
function selects(selector: Record<string, string> | undefined, labels: Record<string, string>): boolean {
  const pairs = Object.entries(selector ?? {});
  return pairs.length > 0 && pairs.every(([key, value]) => labels[key] === value);
}

function gatewayOf(documents: Manifest[]): { deployment: IDeployment & Manifest; container: IContainer } {
  const deployment = named(ofKind<IDeployment>(documents, 'Deployment'), GATEWAY, 'Deployment');
  const container = podSpec(deployment).containers.find((candidate) => candidate.name === GATEWAY);
  assert.ok(container, `the gateway Deployment has no container named ${GATEWAY}`);
  return { deployment, container };
}

/** The container port a probe or a Service's targetPort names (by name or number). */
function containerPort(container: IContainer, port: string | number | undefined): number {
  if (typeof port === 'number') {
    assert.ok(container.ports?.some((declared) => declared.containerPort === port), `port ${port} is not declared by container ${container.name}`);
    return port;
  }
  const declared = container.ports?.find((candidate) => candidate.name === port);
  assert.ok(declared, `container ${container.name} has no port named ${port}`);
  return declared.containerPort;
}

function secretData(secret: ISecret): Record<string, string> {
  const decoded: Record<string, string> = { ...(secret.stringData ?? {}) };
  for (const [key, value] of Object.entries(secret.data ?? {})) decoded[key] = Buffer.from(value, 'base64').toString('utf8');
  return decoded;
}

/** Every ConfigMap and Secret in the render, by kind and name, with its keys and values. */
function sources(documents: Manifest[]): Map<string, Record<string, string>> {
  const byName = new Map<string, Record<string, string>>();
  for (const map of ofKind<IConfigMap>(documents, 'ConfigMap')) byName.set(`ConfigMap/${map.metadata.name}`, { ...(map.data ?? {}) });
  for (const secret of ofKind<ISecret>(documents, 'Secret')) byName.set(`Secret/${secret.metadata.name}`, secretData(secret));
  return byName;
}

function lookUp(found: Map<string, Record<string, string>>, kind: 'ConfigMap' | 'Secret', name: string | undefined, key: string | undefined, where: string): string | undefined {
  const source = found.get(`${kind}/${name}`);
  assert.ok(source, `${where}: ${kind} ${name} is not rendered`);
  if (key === undefined) return undefined;
  assert.ok(Object.hasOwn(source, key), `${where}: ${kind} ${name} has no key ${key}`);
  return source[key];
}

/**
 * The container's environment as the kubelet builds it (envFrom, then env;
 * optional references to what is absent are left out), failing on any
 * reference to a ConfigMap, Secret or key that is not rendered.
 */
function environment(container: IContainer, documents: Manifest[]): Record<string, string> {
  const found = sources(documents);
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const [kind, ref] = from.configMapRef ? (['ConfigMap', from.configMapRef] as const) : (['Secret', from.secretRef] as const);
    assert.ok(ref, `container ${container.name}: an envFrom entry names nothing`);
    if (ref.optional && !found.has(`${kind}/${ref.name}`)) continue;
    lookUp(found, kind, ref.name, undefined, `container ${container.name} envFrom`);
    for (const [key, value] of Object.entries(found.get(`${kind}/${ref.name}`)!)) env[`${from.prefix ?? ''}${key}`] = value;
  }
  for (const variable of container.env ?? []) {
    const where = `container ${container.name} env ${variable.name}`;
    const secret = variable.valueFrom?.secretKeyRef;
    const config = variable.valueFrom?.configMapKeyRef;
    if (secret) {
      if (secret.optional && !Object.hasOwn(found.get(`Secret/${secret.name}`) ?? {}, secret.key)) continue;
      env[variable.name] = lookUp(found, 'Secret', secret.name, secret.key, where)!;
    } else if (config) {
      if (config.optional && !Object.hasOwn(found.get(`ConfigMap/${config.name}`) ?? {}, config.key)) continue;
      env[variable.name] = lookUp(found, 'ConfigMap', config.name, config.key, where)!;
    } else if (variable.value !== undefined) {
      env[variable.name] = variable.value;
    }
  }
  return env;
}

/** The ConfigMap or Secret file a path inside the container reads, through its volume mounts. */
function mountedFile(spec: IPodSpec, container: IContainer, path: string, documents: Manifest[]): string {
  const found = sources(documents);
  for (const mount of container.volumeMounts ?? []) {
    const relative = posix.relative(mount.mountPath, path);
    if (relative.startsWith('..') || relative === '') continue;
    const volume = spec.volumes?.find((candidate) => candidate.name === mount.name);
    const [kind, name, items] = volume?.configMap
      ? (['ConfigMap', volume.configMap.name, volume.configMap.items] as const)
      : volume?.secret
        ? (['Secret', volume.secret.secretName, volume.secret.items] as const)
        : [undefined, undefined, undefined];
    assert.ok(kind, `${path} is under the mount ${mount.mountPath}, which is not a ConfigMap or Secret`);
    const subPath = mount.subPath ? posix.join(mount.subPath, relative) : relative;
    const key = items ? items.find((item) => item.path === subPath)?.key : subPath;
    assert.ok(key, `${path}: volume ${mount.name} has no item at ${subPath}`);
    return lookUp(found, kind, name, key, `${path} (volume ${mount.name})`)!;
  }
  assert.fail(`nothing is mounted at ${path}`);
}

/** The gateway's environment, and the config file VOICEGATE_CONFIG names as the container sees it. */
function gatewayFile(documents: Manifest[]): { env: Record<string, string>; file: string } {
  const { deployment, container } = gatewayOf(documents);
  const env = environment(container, documents);
  assert.ok(env.VOICEGATE_CONFIG, 'VOICEGATE_CONFIG is not set');
  return { env, file: mountedFile(podSpec(deployment), container, env.VOICEGATE_CONFIG, documents) };
}

/**
 * Loads the gateway's configuration as Voicegate does at start: its config
 * file (the ConfigMap behind VOICEGATE_CONFIG) and its environment, then
 * builds the model catalogue on its engines.
 */
function gatewayConfig(documents: Manifest[]): { config: Config; env: Record<string, string> } {
  const { env, file } = gatewayFile(documents);
  const dir = mkdtempSync(join(tmpdir(), 'voicegate-k8s-'));
  try {
    writeFileSync(join(dir, 'voicegate.json'), file);
    const config = loadConfig({ file: join(dir, 'voicegate.json'), env });
    buildModelCatalogue(config.models, new Set(Object.keys(config.engines)));
    return { config, env };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPU quantity in cores ("2", "1500m"). */
function cores(quantity: string | number | undefined): number {
  assert.ok(quantity !== undefined, 'no CPU quantity');
  const text = String(quantity);
  return text.endsWith('m') ? Number(text.slice(0, -1)) / 1000 : Number(text);
}

function probe(container: IContainer, which: 'readinessProbe' | 'livenessProbe' | 'startupProbe'): { path: string | undefined; port: number } {
  const found: IProbe | undefined = container[which];
  assert.ok(found?.httpGet, `container ${container.name} has no HTTP ${which}`);
  return { path: found.httpGet.path, port: containerPort(container, found.httpGet.port) };
}

function gpus(container: IContainer): number {
  return Number(container.resources?.limits?.[GPU] ?? 0);
}

// ---------------------------------------------------------------------------

for (const target of targets) {
  describe(`deploy/kubernetes/${target}`, () => {
    test('renders, and every document is valid against the Kubernetes schemas', { skip, timeout: TIMEOUT }, async () => {
      const documents = await render(target);
      assert.ok(documents.length > 0, 'nothing rendered');
      for (const document of documents) await validate(document);
      const { container } = gatewayOf(documents);
      assert.match(container.image ?? '', /^voicegate:|\/voicegate:/, 'the gateway runs the voicegate image');
    });

    test('every ConfigMap and Secret a workload references is rendered, with the keys it names', { skip, timeout: TIMEOUT }, async () => {
      const documents = await render(target);
      const found = sources(documents);
      for (const deployment of ofKind<IDeployment>(documents, 'Deployment')) {
        const spec = podSpec(deployment);
        for (const container of [...(spec.initContainers ?? []), ...spec.containers]) environment(container, documents);
        for (const volume of spec.volumes ?? []) {
          const where = `Deployment ${deployment.metadata.name} volume ${volume.name}`;
          if (volume.configMap && !volume.configMap.optional) {
            for (const item of volume.configMap.items ?? [{ key: undefined }]) lookUp(found, 'ConfigMap', volume.configMap.name, item.key, where);
          }
          if (volume.secret && !volume.secret.optional) {
            for (const item of volume.secret.items ?? [{ key: undefined }]) lookUp(found, 'Secret', volume.secret.secretName, item.key, where);
          }
        }
      }
    });

    test('every container: probes, resources and a locked-down security context', { skip, timeout: TIMEOUT }, async () => {
      for (const deployment of ofKind<IDeployment>(await render(target), 'Deployment')) {
        const spec = podSpec(deployment);
        assert.equal(spec.automountServiceAccountToken, false, `${deployment.metadata.name}: no API token is mounted`);
        for (const container of spec.containers) {
          const where = `${deployment.metadata.name}/${container.name}`;
          probe(container, 'readinessProbe');
          probe(container, 'livenessProbe');
          const { requests, limits } = container.resources ?? {};
          assert.ok(requests?.cpu && requests.memory, `${where}: CPU and memory requests`);
          assert.ok(limits?.memory, `${where}: a memory limit`);
          if (gpus(container)) assert.equal(String(requests[GPU]), String(limits[GPU]), `${where}: GPU request equals its limit`);
          assert.equal(container.securityContext?.allowPrivilegeEscalation, false, `${where}: allowPrivilegeEscalation false`);
          assert.ok(container.securityContext?.capabilities?.drop?.includes('ALL'), `${where}: drops ALL capabilities`);
          const seccomp = container.securityContext?.seccompProfile ?? spec.securityContext?.seccompProfile;
          assert.equal(seccomp?.type, 'RuntimeDefault', `${where}: seccomp RuntimeDefault`);
        }
      }
    });

    test('the gateway: probes on /readyz and /healthz of its HTTP port, non-root, read-only, sized, drains within the grace period', { skip, timeout: TIMEOUT }, async () => {
      const documents = await render(target);
      const { deployment, container } = gatewayOf(documents);
      const spec = podSpec(deployment);
      const env = environment(container, documents);
      const httpPort = Number(env.VOICEGATE_PORT);
      assert.equal(containerPort(container, 'http'), httpPort, 'the port named http is VOICEGATE_PORT');
      assert.equal(env.VOICEGATE_HOST, '0.0.0.0', 'listens on every interface');
      assert.deepEqual(probe(container, 'readinessProbe'), { path: '/readyz', port: httpPort });
      assert.deepEqual(probe(container, 'livenessProbe'), { path: '/healthz', port: httpPort });
      if (container.startupProbe) assert.deepEqual(probe(container, 'startupProbe'), { path: '/healthz', port: httpPort });

      assert.equal(spec.securityContext?.runAsNonRoot, true, 'runAsNonRoot');
      assert.equal(spec.securityContext?.runAsUser, 10001, 'runs as the image user 10001');
      assert.equal(container.securityContext?.readOnlyRootFilesystem, true, 'read-only root filesystem');
      const writable = (path: string) => {
        const mount = container.volumeMounts?.find((candidate) => candidate.mountPath === path);
        assert.ok(mount && !mount.readOnly, `${path} is a writable mount`);
        const volume = spec.volumes?.find((candidate) => candidate.name === mount.name);
        assert.ok(volume?.emptyDir || volume?.persistentVolumeClaim || volume?.ephemeral, `${path} is an emptyDir or a volume claim`);
      };
      writable('/tmp');
      writable(env.VOICEGATE_DATA_DIR);

      const { requests, limits } = container.resources ?? {};
      assert.ok(limits?.cpu, 'a CPU limit');
      assert.equal(Number(env.VOICEGATE_ESPEAK_WORKERS), Math.floor(cores(requests?.cpu)), 'one eSpeak worker per requested core');

      // Kubernetes would put VOICEGATE_PORT=tcp://… into the environment for a Service named voicegate.
      assert.equal(spec.enableServiceLinks, false, 'enableServiceLinks is false');

      const drainMs = Number(env.VOICEGATE_DRAIN_DELAY_MS);
      const graceMs = Number(env.VOICEGATE_SHUTDOWN_GRACE_MS);
      assert.ok(drainMs > 0 && graceMs > 0, 'VOICEGATE_DRAIN_DELAY_MS and VOICEGATE_SHUTDOWN_GRACE_MS are set');
      const period = spec.terminationGracePeriodSeconds ?? 30;
      assert.ok(period >= (drainMs + graceMs) / 1000 + 5, `terminationGracePeriodSeconds ${period} covers the drain (${drainMs} ms) and the grace (${graceMs} ms) with a margin`);
      assert.equal(container.lifecycle?.preStop, undefined, 'no preStop: the drain delay does its work');
    });

    test("the gateway's config file and environment load as Voicegate reads them", { skip, timeout: TIMEOUT }, async () => {
      const documents = await render(target);
      const { container } = gatewayOf(documents);
      const { config } = gatewayConfig(documents);
      assert.equal(config.server.port, containerPort(container, 'http'));
      assert.equal(config.metrics.enabled, true);
      assert.equal(config.metrics.port, containerPort(container, 'metrics'), 'VOICEGATE_METRICS_PORT is the port named metrics');
      assert.equal(config.metrics.host, '0.0.0.0');
      assert.ok(config.store.databaseUrl, 'PostgreSQL: the gateways share their accounts');
      assert.ok(config.redis.url, 'Redis: the gateways share their limits');
      assert.ok(config.accounts.tokenSecret, 'the token secret is set, the same on every gateway');
    });

    test('the Service, autoscaler, disruption budget and scrape configuration point at the gateway pods', { skip, timeout: TIMEOUT }, async () => {
      const documents = await render(target);
      const { deployment, container } = gatewayOf(documents);
      const labels = podLabels(deployment);
      const others = ofKind<IDeployment>(documents, 'Deployment').filter((other) => other !== deployment);

      const services = ofKind<IService>(documents, 'Service').filter((service) => selects(service.spec?.selector, labels));
      assert.deepEqual(services.map((service) => service.metadata.name), [GATEWAY], 'one Service selects the gateway pods');
      const [service] = services;
      for (const other of others) assert.ok(!selects(service.spec?.selector, podLabels(other)), `the gateway Service also selects ${other.metadata.name}`);
      const servicePort = (name: string) => {
        const port = service.spec?.ports?.find((candidate) => candidate.name === name);
        assert.ok(port, `the Service has a port named ${name}`);
        return { port: port.port, target: containerPort(container, port.targetPort ?? port.port) };
      };
      assert.deepEqual(servicePort('http'), { port: 8080, target: containerPort(container, 'http') });
      assert.deepEqual(servicePort('metrics'), { port: 9464, target: containerPort(container, 'metrics') });

      const deployments = ofKind<IDeployment>(documents, 'Deployment');
      const autoscalers = ofKind<IHorizontalPodAutoscaler>(documents, 'HorizontalPodAutoscaler');
      for (const autoscaler of autoscalers) {
        const ref = autoscaler.spec?.scaleTargetRef;
        assert.ok(ref?.kind === 'Deployment' && ref.apiVersion === 'apps/v1', `HPA ${autoscaler.metadata.name} scales an apps/v1 Deployment`);
        named(deployments, ref.name, `Deployment (HPA ${autoscaler.metadata.name})`);
      }
      const autoscaler = autoscalers.find((candidate) => candidate.spec?.scaleTargetRef.name === GATEWAY);
      assert.ok(autoscaler?.spec, 'an HPA scales the gateway');
      const minReplicas = autoscaler.spec.minReplicas ?? 1;
      assert.ok(minReplicas >= 2 && autoscaler.spec.maxReplicas >= minReplicas, 'at least two gateways');
      assert.ok(
        autoscaler.spec.metrics?.some((metric) => metric.resource?.name === 'cpu' && metric.resource.target.type === 'Utilization'),
        'scaled on CPU utilisation',
      );
      assert.equal(deployment.spec?.replicas, undefined, 'the Deployment leaves the replica count to the HPA');

      const budgets = ofKind<IPodDisruptionBudget>(documents, 'PodDisruptionBudget').filter((budget) => selects(budget.spec?.selector?.matchLabels, labels));
      assert.equal(budgets.length, 1, 'one PodDisruptionBudget selects the gateway pods');
      for (const other of others) assert.ok(!selects(budgets[0].spec?.selector?.matchLabels, podLabels(other)), `the gateway PDB also selects ${other.metadata.name}`);
      assert.ok(Number(budgets[0].spec?.maxUnavailable ?? minReplicas) < minReplicas, 'a voluntary disruption leaves a gateway serving');

      const annotations = deployment.spec?.template.metadata?.annotations ?? {};
      assert.equal(annotations['prometheus.io/scrape'], 'true');
      assert.equal(annotations['prometheus.io/port'], String(containerPort(container, 'metrics')));
      assert.equal(annotations['prometheus.io/path'], '/metrics');
      const monitors = documents.filter((document) => document.kind === 'ServiceMonitor');
      if (target === 'overlays/prometheus-operator') {
        assert.equal(monitors.length, 1, 'the overlay adds a ServiceMonitor');
        assert.equal(documents.filter((document) => document.kind === 'PrometheusRule').length, 1, 'and the alert rules');
      }
      for (const monitor of monitors) {
        const spec = monitor.spec as { selector: { matchLabels?: Record<string, string> }; endpoints: { port?: string; path?: string }[] };
        assert.ok(selects(spec.selector.matchLabels, service.metadata.labels ?? {}), 'the ServiceMonitor selects the gateway Service');
        for (const endpoint of spec.endpoints) {
          assert.deepEqual(servicePort(endpoint.port ?? ''), servicePort('metrics'), 'the ServiceMonitor scrapes the metrics port');
          assert.equal(endpoint.path, '/metrics');
        }
      }
    });
  });
}

test('deploy/kubernetes/base: the Secret holds placeholders only, at hosts that never resolve', { skip, timeout: TIMEOUT }, async () => {
  const secrets = ofKind<ISecret>(await render('base'), 'Secret');
  assert.equal(secrets.length, 1);
  for (const [key, value] of Object.entries(secretData(secrets[0]))) {
    assert.match(value, /CHANGE_ME/, `${key} is a placeholder`);
    if (key.endsWith('_URL')) assert.match(new URL(value).hostname, /\.invalid$/, `${key} points at a .invalid host`);
  }
});

test('deploy/kubernetes/base: jobs on exactly when a bucket is named, from the optional Secret voicegate-storage', { skip, timeout: TIMEOUT }, async () => {
  const documents = await render('base');
  assert.equal(gatewayConfig(documents).config.jobs.enabled, false, 'no bucket in the base: jobs off, each pod having a data directory of its own');
  const { container } = gatewayOf(documents);
  assert.ok(container.envFrom?.some((from) => from.secretRef?.name === 'voicegate-storage' && from.secretRef.optional === true));
  // The operator's Secret, as it would be rendered beside the base: jobs turn on, on the bucket, with no volume.
  const storage = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'voicegate-storage' }, stringData: { VOICEGATE_STORAGE_URL: 's3://books-audio/voicegate', AWS_REGION: 'eu-west-1' } };
  const { config } = gatewayConfig([...documents, storage]);
  assert.equal(config.jobs.enabled, true);
  assert.deepEqual([config.storage.kind, config.storage.bucket, config.storage.prefix], ['s3', 'books-audio', 'voicegate']);
});

test('deploy/kubernetes/overlays/s3-web-identity: jobs on a bucket with the pods’ own role, no key and no volume', { skip, timeout: TIMEOUT }, async () => {
  const documents = await render('overlays/s3-web-identity');
  const { config, env } = gatewayConfig(documents);
  assert.equal(config.jobs.enabled, true);
  assert.equal(config.storage.kind, 's3');
  assert.ok(env.AWS_REGION);
  assert.ok(!Object.keys(env).some((name) => name.startsWith('AWS_ACCESS_KEY') || name.startsWith('AWS_SECRET')), 'no access key: the role is the credential');
  const account = documents.find((d) => d.kind === 'ServiceAccount')!;
  assert.match((account.metadata.annotations ?? {})['eks.amazonaws.com/role-arn'] ?? '', /^arn:aws:iam::\d{12}:role\//);
  const { deployment } = gatewayOf(documents);
  const pod = podSpec(deployment);
  assert.equal(pod.serviceAccountName, account.metadata.name);
  assert.ok(!(pod.volumes ?? []).some((volume) => volume.persistentVolumeClaim), 'no volume is needed');
});

test('deploy/kubernetes/overlays/shared-jobs: jobs on, on one ReadWriteMany volume every gateway mounts', { skip, timeout: TIMEOUT }, async () => {
  const env = (documents: any[]) => documents.find((d) => d.kind === 'ConfigMap' && d.metadata.name.startsWith('voicegate-env')).data;
  assert.equal(env(await render('base')).VOICEGATE_JOBS, 'auto');
  const documents: any[] = await render('overlays/shared-jobs');
  assert.equal(env(documents).VOICEGATE_JOBS, 'on');
  const claim = documents.find((d) => d.kind === 'PersistentVolumeClaim');
  assert.deepEqual(claim.spec.accessModes, ['ReadWriteMany']);
  const pod = documents.find((d) => d.kind === 'Deployment').spec.template.spec;
  assert.ok(pod.volumes.some((v: any) => v.name === 'jobs' && v.persistentVolumeClaim?.claimName === claim.metadata.name));
  const gateway = pod.containers.find((c: any) => c.name === 'voicegate');
  assert.ok(gateway.volumeMounts.some((m: any) => m.name === 'jobs' && m.mountPath === env(documents).VOICEGATE_JOBS_DIR));
  assert.ok(gateway.env.some((e: any) => e.name === 'VOICEGATE_WEBHOOK_SECRET'));
});

test('deploy/kubernetes/overlays/gpu-pool: a GPU inference pool behind a Service, bound in the gateways’ engine config', { skip, timeout: TIMEOUT }, async () => {
  const documents = await render('overlays/gpu-pool');
  const pool = ofKind<IDeployment>(documents, 'Deployment').filter((deployment) => podSpec(deployment).containers.some((container) => gpus(container) >= 1));
  assert.equal(pool.length, 1, 'one Deployment requests nvidia.com/gpu');
  const [deployment] = pool;
  const spec = podSpec(deployment);
  const server = spec.containers.find((container) => gpus(container) >= 1)!;
  assert.ok(Object.keys(spec.nodeSelector ?? {}).length > 0, 'scheduled on GPU nodes (nodeSelector)');
  assert.ok(spec.tolerations?.some((toleration) => toleration.key === GPU), 'tolerates the GPU nodes’ taint');

  const services = ofKind<IService>(documents, 'Service').filter((service) => selects(service.spec?.selector, podLabels(deployment)));
  assert.equal(services.length, 1, 'one Service selects the GPU pods');
  const [service] = services;
  assert.ok(!selects(service.spec?.selector, podLabels(gatewayOf(documents).deployment)), 'the GPU Service does not select gateways');

  const { config } = gatewayConfig(documents);
  // The Service's DNS names: the short one from the same namespace, the qualified ones from anywhere.
  const { name, namespace } = service.metadata;
  const names = new Set([name, ...(namespace ? [`${name}.${namespace}`, `${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`] : [])]);
  const bound = Object.entries(config.engines).flatMap(([id, engine]) => {
    if (engine.type !== 'openai-upstream' && engine.type !== 'cartesia-upstream') return [];
    return engine.upstreams.map((upstream) => ({ id, engine, url: new URL(upstream.url) })).filter(({ url }) => names.has(url.hostname));
  });
  assert.equal(bound.length, 1, `one upstream engine names the Service ${service.metadata.name}`);
  const [{ id, engine, url }] = bound;
  const port = service.spec?.ports?.find((candidate) => candidate.port === Number(url.port));
  assert.ok(port, `the Service has the port ${url.port} the engine dials`);
  assert.equal(containerPort(server, port.targetPort ?? port.port), containerPort(server, 'http'), 'the Service port reaches the server');
  assert.ok('healthPath' in engine);
  assert.equal(engine.healthPath, probe(server, 'readinessProbe').path, 'the engine probes the path the server’s readiness probe uses');
  const catalogue = buildModelCatalogue(config.models, new Set(Object.keys(config.engines)));
  assert.ok(catalogue.list().some((model) => model.engine === id), `a model is bound to the engine ${id}`);

  const baseFile = JSON.parse(gatewayFile(await render('base')).file) as Record<string, unknown>;
  const file = JSON.parse(gatewayFile(documents).file) as Record<string, unknown>;
  for (const [key, value] of Object.entries(baseFile)) assert.deepEqual(file[key], value, `the overlay's config file keeps the base's ${key}`);
});
