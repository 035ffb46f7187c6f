/**
 * @module test/deploy-drain
 * The drain delay and the probes fit together in every shipped deployment,
 * and the docs show the same figures: a balancer that checks every *period*
 * and takes a gateway out after *failures* in a row has done so before the
 * drain delay ends (drain ≥ period × failures + a margin), one slow answer
 * never takes a gateway out (failures ≥ 2), and the stop timeout covers the
 * drain delay, the grace and a margin. Read from the Kubernetes manifests,
 * compose.yaml, HAProxy's config and docs/deployment.md's table.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

interface Figures {
  periodMs: number;
  failures: number;
  drainMs: number;
  graceMs: number;
  stopMs: number;
}

/** Seconds as compose and the docs write them ("30s", "3 s"). */
const seconds = (text: string) => {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s)$/.exec(text.trim());
  assert.ok(match, `a duration: ${text}`);
  return Number(match[1]) * (match[2] === 'ms' ? 1 : 1000);
};

function kubernetes(): Figures {
  const env = Object.fromEntries(
    read('deploy/kubernetes/base/config.env')
      .split('\n')
      .filter((line) => line.includes('=') && !line.startsWith('#'))
      .map((line) => line.split('=', 2) as [string, string]),
  );
  const deployment = parseAllDocuments(read('deploy/kubernetes/base/deployment.yaml'))
    .map((doc) => doc.toJS())
    .find((doc) => doc?.kind === 'Deployment');
  const spec = deployment.spec.template.spec;
  const probe = spec.containers[0].readinessProbe;
  assert.equal(probe.httpGet.path, '/readyz');
  return {
    periodMs: probe.periodSeconds * 1000,
    failures: probe.failureThreshold,
    drainMs: Number(env.VOICEGATE_DRAIN_DELAY_MS),
    graceMs: Number(env.VOICEGATE_SHUTDOWN_GRACE_MS),
    stopMs: spec.terminationGracePeriodSeconds * 1000,
  };
}

function compose(): Figures & { replicas: string } {
  const gateway = parse(read('compose.yaml')).services.gateway;
  const haproxy = read('deploy/compose/haproxy.cfg');
  const defaults = /^\s*default-server\s+(.*)$/m.exec(haproxy)![1];
  const setting = (name: string) => new RegExp(`\\b${name}\\s+(\\S+)`).exec(defaults)?.[1];
  assert.match(haproxy, /option httpchk GET \/readyz/);
  return {
    periodMs: seconds(setting('inter')!),
    failures: Number(setting('fall')),
    drainMs: Number(gateway.environment.VOICEGATE_DRAIN_DELAY_MS),
    graceMs: Number(gateway.environment.VOICEGATE_SHUTDOWN_GRACE_MS),
    stopMs: seconds(gateway.stop_grace_period),
    replicas: String(gateway.deploy.replicas),
  };
}

/** A row of docs/deployment.md's table: period × failures = …, margin, drain delay, grace, stop timeout. */
function documented(deployment: string): Figures & { marginMs: number } {
  const row = read('docs/deployment.md')
    .split('\n')
    .find((line) => line.startsWith(`| ${deployment}`));
  assert.ok(row, `docs/deployment.md has a row for ${deployment}`);
  const cells = row.split('|').slice(2, -1).map((cell) => cell.trim());
  const [, period, failures, product] = /^(\S+ s) × (\d+) = (\S+ s)$/.exec(cells[0]) ?? [];
  assert.ok(period, `period × failures in ${row}`);
  assert.equal(seconds(product), seconds(period) * Number(failures), `${deployment}: the product`);
  return {
    periodMs: seconds(period),
    failures: Number(failures),
    marginMs: seconds(cells[1]),
    drainMs: seconds(cells[2]),
    graceMs: seconds(cells[3]),
    stopMs: seconds(cells[4].split(' (')[0]),
  };
}

function fits(name: string, figures: Figures): void {
  assert.ok(figures.failures >= 2, `${name}: one slow or lost probe answer does not take a gateway out (${figures.failures} failures)`);
  const outAfter = figures.periodMs * figures.failures;
  assert.ok(figures.drainMs >= outAfter + 1000, `${name}: drain delay ${figures.drainMs} ms ≥ ${figures.periodMs} ms × ${figures.failures} + a 1 s margin`);
  assert.ok(figures.stopMs >= figures.drainMs + figures.graceMs + 5000, `${name}: stop timeout ${figures.stopMs} ms ≥ drain ${figures.drainMs} + grace ${figures.graceMs} + 5 s`);
}

test('Kubernetes: the readiness probe takes a draining gateway out within its drain delay, and the termination period covers drain and grace', () => {
  const figures = kubernetes();
  fits('Kubernetes', figures);
  const docs = documented('Kubernetes');
  assert.deepEqual({ ...figures }, { periodMs: docs.periodMs, failures: docs.failures, drainMs: docs.drainMs, graceMs: docs.graceMs, stopMs: docs.stopMs });
  assert.equal(docs.drainMs, docs.periodMs * docs.failures + docs.marginMs, 'the documented margin is what is left');
});

test('compose: HAProxy takes a draining gateway out within its drain delay, tolerates one slow check, and three gateways run by default', () => {
  const { replicas, ...figures } = compose();
  fits('compose', figures);
  assert.match(replicas, /^\$\{VOICEGATE_GATEWAYS:-3\}$/);
  assert.match(read('.env.example'), /^VOICEGATE_GATEWAYS=3$/m);
  const docs = documented('compose');
  assert.deepEqual({ ...figures }, { periodMs: docs.periodMs, failures: docs.failures, drainMs: docs.drainMs, graceMs: docs.graceMs, stopMs: docs.stopMs });
  assert.equal(docs.drainMs, docs.periodMs * docs.failures + docs.marginMs, 'the documented margin is what is left');
});
