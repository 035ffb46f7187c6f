/**
 * @module test/operations.prometheus
 * The shipped dashboard and alert rules against a real Prometheus (Debian's
 * `prometheus` package, started here on an ephemeral port with a temporary
 * config and storage): `promtool check rules` and `promtool test rules` pass
 * on `deploy/prometheus/`; Prometheus scrapes a real gateway (accounts,
 * Redis limits, the audio cache, jobs, and a second Voicegate as an upstream
 * engine) under a short load, and every query of
 * `deploy/grafana/voicegate.json` then returns a value, while every metric
 * the dashboard or the alerts name is one the gateway exports. The
 * Kubernetes PrometheusRule holds the same rules as `alerts.yaml`.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { closedPort, eventually, testPrefix, TEST_REDIS_URL } from './helpers/redis.js';
import { enginesWithPeer } from './helpers/peer-engine.js';
import { startServer, type TestServer } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const deploy = (path: string) => join(root, 'deploy', path);
const T = { timeout: 180_000 };

function run(command: string, args: string[]): { status: number | null; output: string } {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 60_000 });
  if (result.error) throw new Error(`${command} could not run (.ci/run installs Debian's prometheus package): ${result.error.message}`);
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

interface Dashboard {
  panels: { title: string; type: string; targets?: { expr: string }[] }[];
}

const dashboard = JSON.parse(readFileSync(deploy('grafana/voicegate.json'), 'utf8')) as Dashboard;
const alerts = parse(readFileSync(deploy('prometheus/alerts.yaml'), 'utf8')) as { groups: { name: string; rules: { alert: string; expr: string }[] }[] };
const queries = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));

/** A query as Grafana sends it: every gateway, and a rate window. */
function asSent(expr: string): string {
  // Windows longer than the test: its load counts however slowly a busy machine runs it.
  return expr.replaceAll('$__rate_interval', '10m').replaceAll('$__range', '10m').replaceAll('$instance', '.*');
}

/** The metric names an expression reads (identifiers followed by a selector or a range, less functions and keywords). */
function metricNames(expr: string): string[] {
  const names = new Set<string>();
  for (const match of expr.matchAll(/\b([a-z_:][a-z0-9_:]*)\s*(\{|\[|\)|\s*(==|>|<|>=|<=|!=|\*|\/|\+|-|and|or|unless|$))/g)) {
    const name = match[1];
    if (name.startsWith('voicegate_') || name === 'up') names.add(name);
  }
  return [...names];
}

describe('the dashboard and alert rules', () => {
  test('promtool checks the rules and their unit tests pass: each alert fires on its series and stays quiet on a healthy twin', T, () => {
    const checked = run('promtool', ['check', 'rules', deploy('prometheus/alerts.yaml')]);
    assert.equal(checked.status, 0, checked.output);
    // Every rule of the file, as written (its count follows the file).
    assert.match(checked.output, new RegExp(`SUCCESS: ${alerts.groups.flatMap((group) => group.rules).length} rules found`));
    const tested = run('promtool', ['test', 'rules', deploy('prometheus/alerts.test.yaml')]);
    assert.equal(tested.status, 0, tested.output);
    const unitTests = readFileSync(deploy('prometheus/alerts.test.yaml'), 'utf8');
    for (const rule of alerts.groups.flatMap((group) => group.rules)) assert.ok(unitTests.includes(`alertname: ${rule.alert}`), `${rule.alert} has a unit test`);
  });

  test('the Kubernetes PrometheusRule holds the same rules', () => {
    const rule = parse(readFileSync(deploy('kubernetes/components/service-monitor/prometheusrule.yaml'), 'utf8')) as { kind: string; spec: unknown };
    assert.equal(rule.kind, 'PrometheusRule');
    assert.deepEqual(rule.spec, alerts);
  });

  describe('a real Prometheus scraping a real gateway', () => {
    let upstream: TestServer;
    let server: TestServer;
    let org: TestOrg;
    let prometheus: ChildProcess;
    let prometheusUrl: string;
    let dir: string;
    let log = '';

    const query = async (expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> => {
      const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await response.json()) as { status: string; error?: string; data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
      assert.equal(body.status, 'success', `${expr}: ${body.error}`);
      return body.data.result;
    };

    before(async () => {
      upstream = await startServer();
      server = await startServer({
        config: {
          accounts: { enabled: true },
          redis: { url: TEST_REDIS_URL, keyPrefix: testPrefix() },
          cache: { enabled: true },
          metrics: { port: 0 },
          ...enginesWithPeer(upstream.url),
          jobs: { pollMs: 50 },
        },
      });
      org = await newOrg(server, { credits: 1_000_000 });
      dir = mkdtempSync(join(tmpdir(), 'voicegate-prometheus-'));
      const target = new URL(server.app.metricsUrl!);
      writeFileSync(
        join(dir, 'prometheus.yml'),
        [
          'global: { scrape_interval: 1s, evaluation_interval: 1s }',
          `rule_files: [${JSON.stringify(deploy('prometheus/alerts.yaml'))}]`,
          'scrape_configs:',
          '  - job_name: voicegate',
          `    metrics_path: ${target.pathname}`,
          `    static_configs: [{ targets: ["${target.host}"] }]`,
        ].join('\n'),
      );
      const port = await closedPort();
      prometheusUrl = `http://127.0.0.1:${port}`;
      prometheus = spawn('prometheus', [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      prometheus.stdout!.on('data', (chunk) => (log += chunk));
      prometheus.stderr!.on('data', (chunk) => (log += chunk));
      const ready = await eventually(async () => (await fetch(`${prometheusUrl}/-/ready`).catch(() => null))?.ok === true, 30_000, 100);
      assert.ok(ready, `prometheus ready: ${log}`);
      // The load starts after a first scrape, so every rate has a before and an after.
      assert.ok(await eventually(async () => (await query('up{job="voicegate"} == 1')).length === 1, 30_000, 100), `first scrape: ${log}`);
    }, T);

    after(async () => {
      prometheus?.kill();
      await Promise.all([server?.close(), upstream?.close()]);
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    test('under a short load, every dashboard query returns a value and every metric named exists', T, async () => {
      const body = (transcript: string, model = 'gepard-1.0') => ({ model_id: model, transcript, voice: { mode: 'id', id: 'sarah' }, output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 22050 } });
      // A WebSocket turn kept open (more text to come): an active stream while Prometheus looks.
      const socket = await TestSocket.open(server.url, org.auth);
      try {
        socket.ws.send(JSON.stringify({ ...body('An open turn waiting for more text. '), context_id: 'open', continue: true }));
        await socket.waitFor((event) => event.type === 'chunk');
        const round = async (i: number) => {
          for (const path of ['/tts/sse', '/tts/bytes']) {
            const response = await server.post(path, body(`Request ${i} of the load on ${path}.`), org.auth);
            assert.equal(response.status, 200);
            await response.arrayBuffer();
          }
          // Again: a cache hit.
          await (await server.post('/tts/bytes', body(`Request ${i} of the load on /tts/bytes.`), org.auth)).arrayBuffer();
          const remote = await server.post('/tts/bytes', body(`Through the upstream ${i}.`, 'peer-model'), org.auth);
          assert.equal(remote.status, 200, await remote.clone().text());
          await remote.arrayBuffer();
          const refused = await server.post('/tts/bytes', { ...body('Nobody speaks with this voice.'), voice: { mode: 'id', id: 'no-such-voice' } }, org.auth);
          assert.equal(refused.status, 404);
          await refused.arrayBuffer();
          const job = await server.post('/tts/jobs', { ...body(`Job ${i}. ${'A short job. '.repeat(30)}`, 'tone-jobs'), output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 8000 } }, org.auth);
          assert.equal(job.status, 202, await job.clone().text());
          const { id } = (await job.json()) as { id: string };
          assert.ok(await eventually(async () => (await server.app.services.store.jobs.get(id))?.status === 'succeeded', 60_000, 50), 'the job ran');
        };
        // A rate needs a series to grow between two scrapes: on a fast machine one round can start and
        // end between two, leaving every series born at its final count. So a scrape comes between rounds.
        const lastScrape = async () => Number((await query('timestamp(up{job="voicegate"})'))[0]?.value[1] ?? 0);
        for (let i = 0; i < 3; i++) {
          await round(i);
          const ended = Date.now() / 1000;
          assert.ok(await eventually(async () => (await lastScrape()) > ended, 30_000, 100), `a scrape after round ${i}`);
        }

        const missing = new Map<string, string>();
        const answered = await eventually(
          async () => {
            missing.clear();
            for (const { panel, expr } of queries) {
              const result = await query(asSent(expr));
              if (!result.some((series) => Number.isFinite(Number(series.value[1])))) missing.set(`${panel}: ${expr}`, JSON.stringify(result));
            }
            return missing.size === 0;
          },
          60_000,
          500,
        );
        assert.ok(answered, `queries without a value:\n${[...missing].map(([query, result]) => `${query} → ${result}`).join('\n')}`);
      } finally {
        socket.ws.close();
      }

      // Metric families the gateway declared (a counter nobody has incremented has no series, but is declared).
      const response = await fetch(`${prometheusUrl}/api/v1/targets/metadata?match_target=${encodeURIComponent('{job="voicegate"}')}`);
      const declared = new Set(((await response.json()) as { data: { metric: string }[] }).data.map((entry) => entry.metric));
      const named = new Set([...queries.flatMap(({ expr }) => metricNames(expr)), ...alerts.groups.flatMap((group) => group.rules.flatMap((rule) => metricNames(rule.expr)))]);
      assert.ok(named.size >= 20, [...named].join());
      for (const name of named) {
        if (name === 'up') continue;
        const family = name.replace(/_(bucket|sum|count)$/, '');
        assert.ok(declared.has(family), `${name} is exported by the gateway`);
      }
      // The rules loaded and are evaluated against the live series.
      const rules = (await (await fetch(`${prometheusUrl}/api/v1/rules`)).json()) as { data: { groups: { rules: { name: string; health: string }[] }[] } };
      const loaded = rules.data.groups.flatMap((group) => group.rules);
      assert.equal(loaded.length, alerts.groups.flatMap((group) => group.rules).length);
      for (const rule of loaded) assert.equal(rule.health, 'ok', rule.name);
    });
  });
});
