/**
 * @module test/job-webhooks
 * Job webhooks delivered to real receivers on loopback ports: signed bodies,
 * retries with backoff until delivered or given up, a receiver that never
 * answers, the rebinding guard at delivery time, redirects not followed, and
 * the loop's kick, stop and survival of store errors. The store is a fake of
 * the two queue methods the deliverer uses, with the real claim semantics.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { after, describe, it } from 'node:test';
import { createLogger } from '../src/log/logger.js';
import type { JobRecord } from '../src/store/store.js';
import { deliverWebhook } from '../src/webhooks/deliver.js';
import { WebhookDeliverer, webhookBackoffMs, webhookMessageId, WEBHOOK_BACKOFF_MS, type WebhookDelivererOptions } from '../src/webhooks/deliverer.js';
import { jobWebhookOutbox, type WebhookJobs } from '../src/jobs/webhook-outbox.js';
import { verifyWebhook } from '../src/webhooks/signature.js';
import { checkWebhookUrl, type WebhookLookup } from '../src/webhooks/url-guard.js';
import { eventually } from './helpers/redis.js';

const TIMEOUT = { timeout: 20_000 };
const SECRET = 'whsec_' + Buffer.from('a test secret of thirty-two bytes').toString('base64');
const WITHIN_MS = 10_000;

type Outcome = Parameters<WebhookJobs['webhookAttempted']>[1];

/** The two queue methods, as the stores implement them: a claim pushes the due time ahead by the lease. */
class FakeJobs implements WebhookJobs {
  readonly rows = new Map<string, JobRecord>();
  readonly outcomes: { id: string; outcome: Outcome }[] = [];
  failClaims = 0;

  add(id: string, webhookUrl: string): JobRecord {
    const now = new Date().toISOString();
    const job: JobRecord = {
      id, orgId: 'org_test', keyId: null, status: 'succeeded', spec: {}, model: 'gepard-1.0', characters: 12, credits: 12,
      segmentsTotal: 1, segmentsDone: 1, charactersDone: 12, audioSeconds: 1.5, webhookUrl, idempotencyKey: null, billing: 'charged',
      result: { contentType: 'audio/wav', bytes: 1000, durationSeconds: 1.5, timestamps: false }, error: null,
      createdAt: now, startedAt: now, finishedAt: now, expiresAt: now, leaseToken: null, leaseExpiresAt: null, attempts: 1,
      webhookState: 'pending', webhookAttempts: 0, webhookNextAt: Date.now(),
    };
    this.rows.set(id, job);
    return job;
  }

  async claimWebhook(now: number, leaseMs: number): Promise<JobRecord | null> {
    if (this.failClaims > 0) {
      this.failClaims--;
      throw new Error('the store is unreachable');
    }
    for (const job of this.rows.values()) {
      if (job.webhookState === 'pending' && job.webhookNextAt !== null && job.webhookNextAt <= now) {
        job.webhookNextAt = now + leaseMs;
        return structuredClone(job);
      }
    }
    return null;
  }

  async webhookAttempted(id: string, outcome: Outcome): Promise<void> {
    const job = this.rows.get(id)!;
    job.webhookState = outcome.state;
    job.webhookAttempts = outcome.attempts;
    job.webhookNextAt = outcome.nextAt;
    this.outcomes.push({ id, outcome });
  }

  state(id: string): JobRecord {
    return this.rows.get(id)!;
  }
}

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse, count: number) => void;

const receivers: { close(): Promise<void> }[] = [];
after(async () => {
  for (const receiver of receivers) await receiver.close();
});

/** A webhook receiver on a loopback port; `handler` answers the n-th request (from 1). */
async function receiver(handler: Handler) {
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      handler(req, res, requests.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const handle = {
    port,
    url: `http://127.0.0.1:${port}/hooks/voicegate?token=receiver-token`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  receivers.push(handle);
  return handle;
}

const answer = (status: number): Handler => (_req, res) => res.writeHead(status).end('{"received":true}');

function render(job: JobRecord): string {
  return JSON.stringify({ type: `job.${job.status}`, data: { id: job.id, status: job.status, result: job.result } });
}

/** A logger whose lines the test reads. */
function capturedLogger() {
  const lines: string[] = [];
  return { logger: createLogger('debug', { write: (line: string) => void lines.push(line) }), lines };
}

/** The log line with message `msg`, parsed. */
function logged(lines: string[], msg: string): Record<string, unknown> | undefined {
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((entry) => entry.msg === msg);
}

function deliverer(jobs: FakeJobs, overrides: Omit<Partial<WebhookDelivererOptions>, 'options'> & { options?: Partial<WebhookDelivererOptions['options']> } = {}) {
  const { logger, lines } = capturedLogger();
  const { options, ...rest } = overrides;
  const instance = new WebhookDeliverer({
    outbox: jobWebhookOutbox(jobs, render),
    kind: 'job',
    secret: SECRET,
    options: { allowHttp: true, allowPrivateNetworks: true, timeoutMs: 2_000, maxAttempts: 5, ...options },
    logger,
    pollMs: 60_000, // Long: each test wakes the loop with kick(), as the job runner does.
    backoffMs: () => 10,
    ...rest,
  });
  return { deliverer: instance, lines };
}

/** Waits for the job's webhook to leave `pending`; its final row. */
async function settled(jobs: FakeJobs, id: string): Promise<JobRecord> {
  assert.ok(await eventually(() => jobs.state(id).webhookState !== 'pending', WITHIN_MS), `the webhook of ${id} is still pending`);
  return jobs.state(id);
}

describe('job webhooks', () => {
  it('delivers a signed POST carrying the body, woken by kick()', TIMEOUT, async () => {
    const hook = await receiver(answer(204));
    const jobs = new FakeJobs();
    const job = jobs.add('job_signed', hook.url);
    const { deliverer: d, lines } = deliverer(jobs);
    d.start();
    try {
      d.kick();
      const row = await settled(jobs, job.id);
      assert.equal(row.webhookState, 'delivered');
      assert.equal(row.webhookAttempts, 1);
      assert.equal(row.webhookNextAt, null);
      assert.equal(hook.requests.length, 1);
      const [request] = hook.requests;
      assert.equal(request.body, render(job));
      assert.ok(verifyWebhook(SECRET, request.headers, request.body), 'the signature verifies');
      assert.ok(!verifyWebhook(SECRET, request.headers, request.body.replace('succeeded', 'failed')));
      assert.equal(request.headers['webhook-id'], webhookMessageId(job.id));
      assert.equal(request.headers['content-type'], 'application/json');
      assert.equal(request.headers['user-agent'], 'Voicegate-Webhooks/1');
      assert.equal(logged(lines, 'webhook delivered')?.jobId, job.id);
      const log = lines.join('');
      assert.ok(!log.includes(SECRET.slice(6)), 'the secret is not logged');
      assert.ok(!log.includes(String(request.headers['webhook-signature']).slice(3)), 'the signature is not logged');
      assert.ok(!log.includes('receiver-token'), "the URL's query is not logged");
    } finally {
      await d.stop();
    }
  });

  it('retries a receiver that answers 500 twice and records the third attempt delivered', TIMEOUT, async () => {
    const hook = await receiver((req, res, count) => answer(count <= 2 ? 500 : 200)(req, res, count));
    const jobs = new FakeJobs();
    const job = jobs.add('job_retried', hook.url);
    const { deliverer: d } = deliverer(jobs);
    d.start();
    try {
      d.kick();
      const row = await settled(jobs, job.id);
      assert.equal(row.webhookState, 'delivered');
      assert.equal(row.webhookAttempts, 3);
      assert.equal(hook.requests.length, 3);
      assert.deepEqual(jobs.outcomes.map((o) => o.outcome.state), ['pending', 'pending', 'delivered']);
      // One message: the same id on every attempt, each attempt signed afresh.
      assert.deepEqual(new Set(hook.requests.map((r) => r.headers['webhook-id'])), new Set([webhookMessageId(job.id)]));
      for (const request of hook.requests) assert.ok(verifyWebhook(SECRET, request.headers, request.body));
    } finally {
      await d.stop();
    }
  });

  it('gives up after maxAttempts answers of 500', TIMEOUT, async () => {
    const hook = await receiver(answer(500));
    const jobs = new FakeJobs();
    const job = jobs.add('job_given_up', hook.url);
    const { deliverer: d, lines } = deliverer(jobs, { options: { maxAttempts: 3 } });
    d.start();
    try {
      d.kick();
      const row = await settled(jobs, job.id);
      assert.equal(row.webhookState, 'failed');
      assert.equal(row.webhookAttempts, 3);
      assert.equal(row.webhookNextAt, null);
      assert.equal(hook.requests.length, 3);
      assert.equal(logged(lines, 'webhook failed for good')?.error, 'the receiver answered 500');
    } finally {
      await d.stop();
    }
  });

  it('times out a receiver that never answers, and retries it', TIMEOUT, async () => {
    // The first request is held open with no answer; the second is answered.
    const hook = await receiver((req, res, count) => {
      if (count > 1) answer(200)(req, res, count);
    });
    const jobs = new FakeJobs();
    const job = jobs.add('job_slow', hook.url);
    const { deliverer: d, lines } = deliverer(jobs, { options: { timeoutMs: 300 } });
    d.start();
    try {
      d.kick();
      const row = await settled(jobs, job.id);
      assert.equal(row.webhookState, 'delivered');
      assert.equal(row.webhookAttempts, 2);
      assert.equal(jobs.outcomes[0].outcome.state, 'pending');
      assert.equal(logged(lines, 'webhook attempt failed')?.error, 'no response within 300 ms');
    } finally {
      await d.stop();
    }
  });

  it('refuses at delivery time a host that now resolves privately (DNS rebinding), as a failed attempt', TIMEOUT, async () => {
    const hook = await receiver(answer(200));
    let lookups = 0;
    // Public when the job is submitted, loopback afterwards.
    const rebinding: WebhookLookup = async () => [{ address: lookups++ === 0 ? '93.184.215.14' : '127.0.0.1', family: 4 }];
    const url = `http://hooks.rebind.test:${hook.port}/hooks`;
    await checkWebhookUrl(url, { allowHttp: true, allowPrivateNetworks: false, lookup: rebinding });

    const jobs = new FakeJobs();
    const job = jobs.add('job_rebound', url);
    const { deliverer: d, lines } = deliverer(jobs, { lookup: rebinding, options: { allowPrivateNetworks: false, maxAttempts: 2 } });
    d.start();
    try {
      d.kick();
      const row = await settled(jobs, job.id);
      assert.equal(row.webhookState, 'failed');
      assert.equal(row.webhookAttempts, 2);
      assert.deepEqual(jobs.outcomes.map((o) => o.outcome.state), ['pending', 'failed']);
      assert.equal(hook.requests.length, 0, 'nothing reached the receiver');
      assert.match(String(logged(lines, 'webhook failed for good')?.error), /resolves to a loopback address \(127\.0\.0\.1\)/);
    } finally {
      await d.stop();
    }
  });

  it('connects to the checked address while Host names the host, refuses literal internal addresses, follows no redirect', TIMEOUT, async () => {
    const hook = await receiver((req, res, count) => {
      if (req.url === '/moved') res.writeHead(302, { location: `http://127.0.0.1:${hook.port}/target` }).end();
      else answer(200)(req, res, count);
    });
    const toLoopback: WebhookLookup = async () => [{ address: '127.0.0.1', family: 4 }];
    const options = { timeoutMs: 2_000, allowHttp: true, allowPrivateNetworks: true, lookup: toLoopback };

    const named = await deliverWebhook(`http://hooks.named.test:${hook.port}/hooks`, '{}', {}, options);
    assert.deepEqual(named, { ok: true, status: 200 });
    assert.equal(hook.requests.at(-1)!.headers.host, `hooks.named.test:${hook.port}`);

    const literal = await deliverWebhook(hook.url, '{}', {}, { ...options, allowPrivateNetworks: false });
    assert.equal(literal.ok, false);
    assert.match(literal.error ?? '', /loopback address \(127\.0\.0\.1\)/);

    const https = await deliverWebhook(hook.url, '{}', {}, { ...options, allowHttp: false });
    assert.match(https.error ?? '', /must use https/);

    const before = hook.requests.length;
    const redirected = await deliverWebhook(`http://127.0.0.1:${hook.port}/moved`, '{}', {}, options);
    assert.equal(redirected.ok, false);
    assert.equal(redirected.status, 302);
    assert.match(redirected.error ?? '', /redirects are not followed/);
    assert.equal(hook.requests.length, before + 1, 'the redirect target was not requested');
  });

  it('reads only the start of a large answer', TIMEOUT, async () => {
    const hook = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write(Buffer.alloc(64 * 1024, 'x'));
      // The answer never ends: only stopping at the read limit settles the delivery.
    });
    const result = await deliverWebhook(hook.url, '{}', {}, { timeoutMs: 5_000, allowHttp: true, allowPrivateNetworks: true });
    assert.deepEqual(result, { ok: true, status: 200 });
  });

  it('keeps going after a store error, and stop() waits for a delivery in flight', TIMEOUT, async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const hook = await receiver((req, res, count) => void released.then(() => answer(200)(req, res, count)));
    const jobs = new FakeJobs();
    jobs.failClaims = 1;
    const job = jobs.add('job_in_flight', hook.url);
    const { deliverer: d, lines } = deliverer(jobs, { concurrency: 1, stopWaitMs: 5_000 });
    d.start();
    d.kick(); // Meets the store error.
    assert.ok(await eventually(() => lines.join('').includes('the store is unreachable'), WITHIN_MS));
    d.kick();
    assert.ok(await eventually(() => hook.requests.length === 1, WITHIN_MS), 'the delivery started');
    let stopped = false;
    const stopping = d.stop().then(() => (stopped = true));
    assert.equal(jobs.state(job.id).webhookState, 'pending');
    assert.equal(stopped, false, 'stop() waits while the delivery is in flight');
    release();
    await stopping;
    assert.equal(jobs.state(job.id).webhookState, 'delivered');
  });

  it('a store that keeps failing is logged once, polled with backoff, and its return once', TIMEOUT, async () => {
    const jobs = new FakeJobs();
    jobs.failClaims = 6;
    const { deliverer: d, lines } = deliverer(jobs, { concurrency: 4, pollMs: 5 });
    d.start();
    try {
      assert.ok(await eventually(() => jobs.failClaims === 0, WITHIN_MS), 'every failing claim was tried');
      assert.ok(await eventually(() => logged(lines, 'webhook delivery: the store answers again') !== undefined, WITHIN_MS));
      const failed = lines.filter((line) => line.includes('webhook delivery: the store failed'));
      assert.equal(failed.length, 1, 'one line for the outage, not one per poll');
    } finally {
      await d.stop();
    }
  });

  it('stop() cuts off a delivery that outlasts its bound and leaves it to be tried again', TIMEOUT, async () => {
    const hook = await receiver(() => {}); // Never answers.
    const jobs = new FakeJobs();
    const job = jobs.add('job_cut_off', hook.url);
    const { deliverer: d } = deliverer(jobs, { stopWaitMs: 100, options: { timeoutMs: 10_000 } });
    d.start();
    d.kick();
    assert.ok(await eventually(() => hook.requests.length === 1, WITHIN_MS), 'the delivery started');
    const started = performance.now();
    await d.stop();
    assert.ok(performance.now() - started < 2_000, 'stop() returned within its bound');
    const row = jobs.state(job.id);
    assert.equal(row.webhookState, 'pending');
    assert.equal(row.webhookAttempts, 0, 'the cut-off attempt is not recorded');
    assert.ok(row.webhookNextAt! > Date.now(), 'its claim still holds it until it lapses');
  });

  it('backs off 5 s, 25 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h with ±20 % jitter, then stays at 4 h', TIMEOUT, () => {
    assert.deepEqual(WEBHOOK_BACKOFF_MS, [5_000, 25_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000]);
    assert.equal(webhookBackoffMs(1, () => 0.5), 5_000);
    assert.equal(webhookBackoffMs(1, () => 0), 4_000);
    assert.equal(webhookBackoffMs(1, () => 1), 6_000);
    assert.equal(webhookBackoffMs(3, () => 0.5), 120_000);
    assert.equal(webhookBackoffMs(20, () => 0.5), 14_400_000);
  });
});
