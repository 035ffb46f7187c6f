/**
 * @module test/helpers/job-store-contract
 * The contract every `Store`'s job queue passes, whatever database is under
 * it: jobs kept field for field (a spec of megabytes too), idempotent creates
 * (racing ones make one job), pages newest first within one organisation,
 * counts, claims oldest first within a bound of live leases per organisation,
 * lapsed leases taken over, every write of a run fenced by its lease, ends and
 * cancels that set expiry and make webhooks due, billing settled once, expiry,
 * webhooks taken by one server at a time, named leases; and servers sharing
 * the database claiming from one queue, each job exactly once. Time is passed
 * in (`now`), so nothing waits. Tests that claim work on a store of their own,
 * so no other test's queued jobs are in their queue.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { OpenedStore } from './store-contract.js';
import type { JobRecord, NewJob, Store } from '../../src/store/store.js';

/** The same subjects the store contract runs on. */
export type OpenedJobStore = OpenedStore;

const T = { timeout: 30_000 };
/** Epoch ms every test's clock starts from. */
const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const at = (ms: number): string => new Date(T0 + ms).toISOString();
const LEASE = 1000;
const NO_BOUND = 1000;

function uid(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

function newJob(orgId: string, extra: Partial<NewJob> = {}): NewJob {
  return {
    id: uid('job'),
    orgId,
    keyId: null,
    spec: { inputs: ['Hello there.'], voice: { mode: 'id', id: 'sarah' } },
    model: 'gepard-1.0',
    characters: 12,
    credits: 12,
    segmentsTotal: 1,
    webhookUrl: null,
    idempotencyKey: null,
    createdAt: at(0),
    ...extra,
  };
}

/** What a job is right after its create. */
function queued(job: NewJob): JobRecord {
  return {
    ...job,
    status: 'queued',
    segmentsDone: 0,
    charactersDone: 0,
    audioSeconds: 0,
    billing: 'held',
    result: null,
    error: null,
    startedAt: null,
    finishedAt: null,
    expiresAt: null,
    leaseToken: null,
    leaseExpiresAt: null,
    attempts: 0,
    webhookState: 'none',
    webhookAttempts: 0,
    webhookNextAt: null,
  };
}

const ids = (jobs: (JobRecord | null)[]): (string | null)[] => jobs.map((job) => job?.id ?? null);

export function jobStoreContract(name: string, open: () => Promise<OpenedJobStore>): void {
  describe(`job store contract: ${name}`, () => {
    let opened: OpenedJobStore;
    let store: Store;
    before(async () => {
      opened = await open();
      store = opened.store;
    });
    after(() => opened?.cleanup());

    async function org(on: Store = store): Promise<string> {
      const id = uid('org');
      await on.orgs.create({ id, name: 'jobs contract', limits: { maxConcurrent: null, rateLimit: null } });
      return id;
    }

    async function create(job: NewJob, on: Store = store): Promise<JobRecord> {
      const { job: created, created: inserted } = await on.jobs.create(job);
      assert.equal(inserted, true);
      return created;
    }

    /** Runs `work` on a store of its own (an empty queue), removed afterwards. */
    async function fresh(work: (opened: OpenedJobStore) => Promise<void>): Promise<void> {
      const own = await open();
      try {
        await work(own);
      } finally {
        await own.cleanup();
      }
    }

    /** Claims a job and ends it as given (`now` for both). */
    async function claimAndEnd(on: Store, id: string, now: number, end: 'succeeded' | 'failed', finishedAt: string, expiresAt: string): Promise<void> {
      const claimed = await on.jobs.claim(uid('run'), now, LEASE, NO_BOUND);
      assert.equal(claimed?.id, id, 'the job claimed is the one expected');
      assert.equal(
        await on.jobs.finish(id, claimed!.leaseToken!, {
          status: end,
          ...(end === 'succeeded'
            ? { result: { contentType: 'audio/wav', bytes: 100, durationSeconds: 1, timestamps: false } }
            : { error: { code: 'engine_failed', message: 'no' } }),
          finishedAt,
          expiresAt,
          now,
        }),
        true,
      );
    }

    test('create and get: every field as written and read back, a spec of megabytes intact', T, async () => {
      const orgId = await org();
      const job = newJob(orgId, {
        keyId: uid('key'),
        spec: { inputs: ['Grüße, 世界 — "quoted" \\ back'], nested: { list: [1, 2.5, -3e-7, null, true], empty: {} }, big: 2 ** 40 },
        model: 'omnivoice',
        characters: 123_456,
        credits: 246_912,
        segmentsTotal: 124,
        webhookUrl: 'https://example.com/hook?x=1',
        idempotencyKey: uid('idem'),
        createdAt: at(1234),
      });
      const { job: created, created: inserted } = await store.jobs.create(job);
      assert.equal(inserted, true);
      assert.deepEqual(created, queued(job));
      assert.deepEqual(await store.jobs.get(job.id), queued(job));
      assert.equal(await store.jobs.get(uid('job')), null);

      // A spec of about 1.5 MB, as a long job's text makes.
      const inputs = Array.from({ length: 1500 }, (_, i) => `Sentence ${i}: ${'ä lorem ipsum dolor sit amet '.repeat(36)}`);
      const large = newJob(orgId, { spec: { inputs, voice: { mode: 'id', id: 'emma' } } });
      assert.ok(JSON.stringify(large.spec).length > 1_400_000);
      assert.deepEqual((await create(large)).spec, large.spec);
      assert.deepEqual((await store.jobs.get(large.id))?.spec, large.spec);

      // A spec that is not an object is kept as it is.
      const plain = newJob(orgId, { spec: 'just text' });
      assert.equal((await create(plain)).spec, 'just text');
      assert.equal((await store.jobs.get(plain.id))?.spec, 'just text');

      // An id taken, or an organisation that does not exist, is an error, not a job.
      await assert.rejects(store.jobs.create(newJob(orgId, { id: job.id })));
      await assert.rejects(store.jobs.create(newJob(uid('org'))));
    });

    test('an idempotency key makes one job per organisation: a repeat returns the first and writes nothing', T, async () => {
      const orgId = await org();
      const key = uid('idem');
      const first = await create(newJob(orgId, { idempotencyKey: key, createdAt: at(0) }));
      const again = await store.jobs.create(newJob(orgId, { idempotencyKey: key, model: 'omnivoice', characters: 99, createdAt: at(5000) }));
      assert.equal(again.created, false);
      assert.deepEqual(again.job, first);
      assert.deepEqual(ids((await store.jobs.list(orgId, { limit: 10 })).data), [first.id]);

      // The same key in another organisation is another job; jobs without a key never collide.
      const otherOrg = await org();
      const other = await store.jobs.create(newJob(otherOrg, { idempotencyKey: key }));
      assert.equal(other.created, true);
      assert.notEqual(other.job.id, first.id);
      await create(newJob(orgId));
      await create(newJob(orgId));
      assert.equal((await store.jobs.list(orgId, { limit: 10 })).data.length, 3);
    });

    test('racing creates under one idempotency key, on two servers, make one job', T, async () => {
      const orgId = await org();
      const other = await opened.another();
      try {
        const key = uid('idem');
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? store : other).jobs.create(newJob(orgId, { idempotencyKey: key, createdAt: at(i) }))),
        );
        assert.equal(results.filter((r) => r.created).length, 1, 'exactly one create inserts');
        const winner = results.find((r) => r.created)!.job;
        for (const result of results) assert.deepEqual(result.job, winner);
        assert.deepEqual(ids((await store.jobs.list(orgId, { limit: 100 })).data), [winner.id]);
        assert.equal(await store.jobs.countUnfinished(orgId), 1);
      } finally {
        await other.close();
      }
    });

    test('list: newest first by creation then id, paged after a job id, one organisation only', T, async () => {
      const orgId = await org();
      const otherOrg = await org();
      const tie = uid('job');
      // Created out of order; two share a creation time and are ordered by id.
      const specs: Partial<NewJob>[] = [
        { createdAt: at(3000) },
        { createdAt: at(1000) },
        { id: `${tie}_a`, createdAt: at(2000) },
        { createdAt: at(5000) },
        { id: `${tie}_b`, createdAt: at(2000) },
        { createdAt: at(4000) },
        { createdAt: at(0) },
      ];
      const made: JobRecord[] = [];
      for (const extra of specs) made.push(await create(newJob(orgId, extra)));
      const foreign = await create(newJob(otherOrg, { createdAt: at(2500) }));
      const expected = [...made].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1)).map((j) => j.id);
      assert.deepEqual(expected.slice(3, 5), [`${tie}_b`, `${tie}_a`]);

      const all = await store.jobs.list(orgId, { limit: 100 });
      assert.deepEqual(ids(all.data), expected);
      assert.equal(all.hasMore, false);
      assert.deepEqual(all.data[0], made[3], 'listed jobs are whole records');

      const seen: (string | null)[] = [];
      const hasMore: boolean[] = [];
      let cursor: string | undefined;
      for (;;) {
        const page = await store.jobs.list(orgId, { limit: 3, ...(cursor ? { startingAfter: cursor } : {}) });
        seen.push(...ids(page.data));
        hasMore.push(page.hasMore);
        if (!page.hasMore) break;
        cursor = page.data.at(-1)!.id;
      }
      assert.deepEqual(seen, expected);
      assert.deepEqual(hasMore, [true, true, false]);
      assert.deepEqual(ids((await store.jobs.list(orgId, { limit: 2, startingAfter: `${tie}_b` })).data), [`${tie}_a`, expected[5]]);
      assert.deepEqual(await store.jobs.list(orgId, { limit: 2, startingAfter: expected.at(-1)! }), { data: [], hasMore: false });
      assert.deepEqual(await store.jobs.list(orgId, { limit: 0 }), { data: [], hasMore: true });

      // Another organisation's jobs are never listed, and its job ids (or unknown ones) place no cursor: an empty page.
      assert.deepEqual(ids((await store.jobs.list(otherOrg, { limit: 100 })).data), [foreign.id]);
      assert.deepEqual(await store.jobs.list(orgId, { limit: 100, startingAfter: foreign.id }), { data: [], hasMore: false });
      assert.deepEqual(await store.jobs.list(otherOrg, { limit: 100, startingAfter: made[0].id }), { data: [], hasMore: false });
      assert.deepEqual(await store.jobs.list(orgId, { limit: 100, startingAfter: uid('job') }), { data: [], hasMore: false });
      assert.deepEqual(await store.jobs.list(uid('org'), { limit: 100 }), { data: [], hasMore: false });
    });

    test('countUnfinished counts queued and running jobs per organisation; countByStatus every status', T, async () => {
      await fresh(async ({ store }) => {
        const a = await org(store);
        const b = await org(store);
        assert.deepEqual(await store.jobs.countByStatus(), { queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 });
        const [a1, a2, a3, a4] = [newJob(a, { createdAt: at(1) }), newJob(a, { createdAt: at(2) }), newJob(a, { createdAt: at(3) }), newJob(a, { createdAt: at(4) })];
        for (const job of [a1, a2, a3, a4]) await create(job, store);
        await create(newJob(b, { createdAt: at(5) }), store);
        assert.equal(await store.jobs.countUnfinished(a), 4);
        await claimAndEnd(store, a1.id, T0, 'succeeded', at(10), at(100));
        assert.equal((await store.jobs.claim(uid('run'), T0, LEASE, NO_BOUND))?.id, a2.id);
        assert.equal((await store.jobs.cancel(a3.id, { finishedAt: at(11), expiresAt: at(100), now: T0 }))?.status, 'cancelled');
        await claimAndEnd(store, a4.id, T0, 'failed', at(12), at(100));
        assert.equal(await store.jobs.countUnfinished(a), 1);
        assert.equal(await store.jobs.countUnfinished(b), 1);
        assert.equal(await store.jobs.countUnfinished(uid('org')), 0);
        assert.deepEqual(await store.jobs.countByStatus(), { queued: 1, running: 1, succeeded: 1, failed: 1, cancelled: 1 });
      });
    });

    test('claim: oldest first (then by id), at most the bound of live leases per organisation, lapsed leases taken over', T, async () => {
      await fresh(async ({ store }) => {
        const a = await org(store);
        const b = await org(store);
        const c = await org(store);
        const tie = uid('job');
        const a1 = await create(newJob(a, { createdAt: at(1000) }), store);
        const a2 = await create(newJob(a, { createdAt: at(2000) }), store);
        const a3 = await create(newJob(a, { createdAt: at(3000) }), store);
        const cB = await create(newJob(c, { id: `${tie}_b`, createdAt: at(5000) }), store);
        const b1 = await create(newJob(b, { createdAt: at(4000) }), store);
        const cA = await create(newJob(c, { id: `${tie}_a`, createdAt: at(5000) }), store);
        const claimAll = async (now: number) => {
          const claimed: JobRecord[] = [];
          for (let job = await store.jobs.claim(uid('run'), now, LEASE, 2); job; job = await store.jobs.claim(uid('run'), now, LEASE, 2)) claimed.push(job);
          return claimed;
        };

        // Organisation a holds two live leases: its third job waits.
        const first = await claimAll(T0);
        assert.deepEqual(ids(first), [a1.id, a2.id, b1.id, cA.id, cB.id]);
        const token = uid('run');
        const claimed = first[0];
        assert.equal(claimed.status, 'running');
        assert.equal(claimed.attempts, 1);
        assert.equal(claimed.startedAt, at(0));
        assert.equal(claimed.leaseExpiresAt, T0 + LEASE);
        assert.ok(claimed.leaseToken);
        assert.notEqual(claimed.leaseToken, first[1].leaseToken);
        assert.deepEqual(await store.jobs.get(a1.id), claimed);
        // A lease is live up to and including its expiry.
        assert.equal(await store.jobs.claim(token, T0 + LEASE, LEASE, 2), null);

        // Every lease lapsed: they are taken over oldest first, as if queued, and lapsed leases bind nothing.
        const later = T0 + LEASE + 1;
        const second = await claimAll(later);
        assert.deepEqual(ids(second), [a1.id, a2.id, b1.id, cA.id, cB.id]);
        const taken = second[0];
        assert.equal(taken.attempts, 2);
        assert.equal(taken.startedAt, at(0), 'the first run started the job');
        assert.equal(taken.leaseExpiresAt, later + LEASE);
        assert.notEqual(taken.leaseToken, claimed.leaseToken);

        // A job of a ending makes room for its third.
        assert.equal(
          await store.jobs.finish(a1.id, taken.leaseToken!, { status: 'succeeded', result: { contentType: 'audio/wav', bytes: 1, durationSeconds: 0, timestamps: false }, finishedAt: at(1), expiresAt: at(2), now: later }),
          true,
        );
        const third = await store.jobs.claim(uid('run'), later, LEASE, 2);
        assert.equal(third?.id, a3.id);
        assert.equal(third?.attempts, 1);
        assert.equal(third?.startedAt, new Date(later).toISOString());
        assert.equal(await store.jobs.claim(uid('run'), later, LEASE, 2), null);
        // A finished job is never claimed again, however late.
        const last = await claimAll(later + 10 * LEASE);
        assert.ok(!ids(last).includes(a1.id));
        assert.equal(last.length, 5);
      });
    });

    test('fencing: a run whose lease was taken over, or whose job was cancelled, can change nothing', T, async () => {
      await fresh(async ({ store }) => {
        const orgId = await org(store);
        const job = await create(newJob(orgId, { segmentsTotal: 4, characters: 4000 }), store);
        const run1 = await store.jobs.claim(uid('run'), T0, LEASE, NO_BOUND);
        assert.equal(run1?.id, job.id);
        const token1 = run1!.leaseToken!;

        assert.equal(await store.jobs.progress(job.id, token1, { segmentsDone: 1, charactersDone: 1000, audioSeconds: 61.125 }), true);
        assert.equal(await store.jobs.heartbeat(job.id, token1, T0 + 900, LEASE), true);
        let row = (await store.jobs.get(job.id))!;
        assert.equal(row.segmentsDone, 1);
        assert.equal(row.charactersDone, 1000);
        assert.equal(row.audioSeconds, 61.125);
        assert.equal(row.leaseExpiresAt, T0 + 900 + LEASE);
        // Renewed: not taken where the first lease would have lapsed.
        assert.equal(await store.jobs.claim(uid('run'), T0 + LEASE + 1, LEASE, NO_BOUND), null);
        // A wrong token or job changes nothing.
        assert.equal(await store.jobs.progress(job.id, uid('run'), { segmentsDone: 3, charactersDone: 3000, audioSeconds: 1 }), false);
        assert.equal(await store.jobs.heartbeat(uid('job'), token1, T0, LEASE), false);

        // The renewed lease lapses and another run takes the job over, resuming at the segment persisted.
        const run2 = await store.jobs.claim(uid('run'), T0 + 900 + LEASE + 1, LEASE, NO_BOUND);
        assert.equal(run2?.id, job.id);
        assert.equal(run2?.attempts, 2);
        assert.equal(run2?.segmentsDone, 1);
        const token2 = run2!.leaseToken!;
        assert.equal(await store.jobs.progress(job.id, token1, { segmentsDone: 2, charactersDone: 2000, audioSeconds: 99 }), false);
        assert.equal(await store.jobs.heartbeat(job.id, token1, T0 + 5000, LEASE), false);
        assert.equal(
          await store.jobs.finish(job.id, token1, { status: 'failed', error: { code: 'internal_error', message: 'stale' }, finishedAt: at(1), expiresAt: at(2), now: T0 + 5000 }),
          false,
        );
        assert.deepEqual(await store.jobs.get(job.id), run2, 'the stale run changed nothing');

        assert.equal(await store.jobs.progress(job.id, token2, { segmentsDone: 2, charactersDone: 2000, audioSeconds: 122.25 }), true);
        assert.equal((await store.jobs.get(job.id))?.segmentsDone, 2);

        // Cancelled: the lease is cleared, so the run's next write fails.
        const cancelled = await store.jobs.cancel(job.id, { finishedAt: at(10_000), expiresAt: at(20_000), now: T0 + 10_000 });
        assert.equal(cancelled?.status, 'cancelled');
        assert.equal(cancelled?.leaseToken, null);
        assert.equal(cancelled?.leaseExpiresAt, null);
        assert.equal(await store.jobs.heartbeat(job.id, token2, T0 + 10_001, LEASE), false);
        assert.equal(await store.jobs.progress(job.id, token2, { segmentsDone: 3, charactersDone: 3000, audioSeconds: 150 }), false);
        assert.equal(
          await store.jobs.finish(job.id, token2, { status: 'succeeded', result: { contentType: 'audio/wav', bytes: 1, durationSeconds: 1, timestamps: false }, finishedAt: at(1), expiresAt: at(2), now: T0 + 10_001 }),
          false,
        );
        assert.deepEqual(await store.jobs.get(job.id), cancelled);
        assert.equal(await store.jobs.claim(uid('run'), T0 + 100_000, LEASE, NO_BOUND), null, 'a cancelled job is not claimed');
      });
    });

    test('finish and cancel: the outcome, expiry and a cleared lease; a webhook becomes due when the job has a URL', T, async () => {
      await fresh(async ({ store }) => {
        const orgId = await org(store);
        const hooked = await create(newJob(orgId, { webhookUrl: 'https://example.com/a', createdAt: at(1) }), store);
        const plain = await create(newJob(orgId, { createdAt: at(2) }), store);
        const running = await create(newJob(orgId, { createdAt: at(3) }), store);
        const waiting = await create(newJob(orgId, { webhookUrl: 'https://example.com/b', createdAt: at(4) }), store);
        const runs = new Map<string, JobRecord>();
        for (let i = 0; i < 3; i++) {
          const run = (await store.jobs.claim(uid('run'), T0, LEASE, NO_BOUND))!;
          runs.set(run.id, run);
        }
        assert.deepEqual([...runs.keys()], [hooked.id, plain.id, running.id]);

        const result = { contentType: 'audio/mpeg', bytes: 123_456, durationSeconds: 7.5, timestamps: true };
        const end = { status: 'succeeded' as const, result, finishedAt: at(500), expiresAt: at(3_600_000), now: T0 + 500 };
        assert.equal(await store.jobs.finish(hooked.id, runs.get(hooked.id)!.leaseToken!, end), true);
        assert.deepEqual(await store.jobs.get(hooked.id), {
          ...runs.get(hooked.id)!,
          status: 'succeeded',
          result,
          error: null,
          finishedAt: at(500),
          expiresAt: at(3_600_000),
          leaseToken: null,
          leaseExpiresAt: null,
          webhookState: 'pending',
          webhookNextAt: T0 + 500,
        });
        assert.equal(await store.jobs.finish(hooked.id, runs.get(hooked.id)!.leaseToken!, end), false, 'a run ends once');

        const error = { code: 'engine_failed', message: 'the engine failed' };
        assert.equal(
          await store.jobs.finish(plain.id, runs.get(plain.id)!.leaseToken!, { status: 'failed', error, finishedAt: at(600), expiresAt: at(700), now: T0 + 600 }),
          true,
        );
        const failed = (await store.jobs.get(plain.id))!;
        assert.equal(failed.status, 'failed');
        assert.deepEqual(failed.error, error);
        assert.equal(failed.result, null);
        assert.equal(failed.webhookState, 'none', 'no URL, no webhook');
        assert.equal(failed.webhookNextAt, null);
        assert.equal(failed.billing, 'held', 'billing is settled apart');

        // Cancelling a queued job with a URL; a running one without.
        const cancelledQueued = await store.jobs.cancel(waiting.id, { finishedAt: at(800), expiresAt: at(900), now: T0 + 800 });
        assert.deepEqual(cancelledQueued, {
          ...waiting,
          status: 'cancelled',
          finishedAt: at(800),
          expiresAt: at(900),
          webhookState: 'pending',
          webhookNextAt: T0 + 800,
        });
        assert.deepEqual(await store.jobs.get(waiting.id), cancelledQueued);
        const cancelledRunning = await store.jobs.cancel(running.id, { finishedAt: at(810), expiresAt: at(910), now: T0 + 810 });
        assert.deepEqual(cancelledRunning, {
          ...runs.get(running.id)!,
          status: 'cancelled',
          finishedAt: at(810),
          expiresAt: at(910),
          leaseToken: null,
          leaseExpiresAt: null,
        });
        // Only a queued or running job is cancelled.
        assert.equal(await store.jobs.cancel(hooked.id, { finishedAt: at(1), expiresAt: at(2), now: T0 }), null);
        assert.equal(await store.jobs.cancel(running.id, { finishedAt: at(1), expiresAt: at(2), now: T0 }), null);
        assert.equal(await store.jobs.cancel(uid('job'), { finishedAt: at(1), expiresAt: at(2), now: T0 }), null);
        assert.equal((await store.jobs.get(hooked.id))?.status, 'succeeded');
      });
    });

    test('charging: fenced by the lease, again after a takeover; once it has begun the job cannot be cancelled', T, async () => {
      await fresh(async ({ store }) => {
        const orgId = await org(store);
        const job = await create(newJob(orgId), store);
        const run1 = await store.jobs.claim(uid('run'), T0, LEASE, NO_BOUND);
        assert.equal(run1?.id, job.id);
        assert.equal(await store.jobs.charging(job.id, uid('run')), false, 'a wrong token');
        assert.equal(await store.jobs.charging(uid('job'), run1!.leaseToken!), false, 'a wrong job');
        assert.equal((await store.jobs.get(job.id))?.billing, 'held');
        assert.equal(await store.jobs.charging(job.id, run1!.leaseToken!), true);
        assert.equal((await store.jobs.get(job.id))?.billing, 'charged');
        assert.equal(await store.jobs.cancel(job.id, { finishedAt: at(10), expiresAt: at(20), now: T0 + 10 }), null, 'no cancel once the charge has begun');
        assert.equal((await store.jobs.get(job.id))?.status, 'running');
        // The run stops before it ends the job; the next run resumes and charges again (the charge is keyed by the job).
        const run2 = await store.jobs.claim(uid('run'), T0 + LEASE + 1, LEASE, NO_BOUND);
        assert.equal(run2?.id, job.id);
        assert.equal(run2?.billing, 'charged');
        assert.equal(await store.jobs.charging(job.id, run1!.leaseToken!), false, 'the stale run');
        assert.equal(await store.jobs.charging(job.id, run2!.leaseToken!), true);
        const end = { status: 'succeeded' as const, result: { contentType: 'audio/wav', bytes: 100, durationSeconds: 1, timestamps: false }, finishedAt: at(30), expiresAt: at(1000), now: T0 + LEASE + 2 };
        assert.equal(await store.jobs.finish(job.id, run2!.leaseToken!, end), true);
        assert.equal((await store.jobs.get(job.id))?.billing, 'charged');
        assert.deepEqual(ids(await store.jobs.unbilled(10)), [], 'charged before it ended: nothing left to bill');

        // A cancelled job is never charged: its run's charging is refused and its hold stays to be released.
        const other = await create(newJob(orgId), store);
        const run3 = await store.jobs.claim(uid('run'), T0 + LEASE + 3, LEASE, NO_BOUND);
        assert.equal(run3?.id, other.id);
        assert.equal((await store.jobs.cancel(other.id, { finishedAt: at(40), expiresAt: at(1000), now: T0 + LEASE + 4 }))?.status, 'cancelled');
        assert.equal(await store.jobs.charging(other.id, run3!.leaseToken!), false);
        assert.equal((await store.jobs.get(other.id))?.billing, 'held');
        // A finished job is not charged by this step either.
        assert.equal(await store.jobs.charging(job.id, run2!.leaseToken!), false);
      });
    });

    test('billing: set only from held; unbilled lists finished jobs still held, oldest first', T, async () => {
      await fresh(async ({ store }) => {
        const orgId = await org(store);
        const j1 = await create(newJob(orgId, { createdAt: at(1) }), store);
        const j2 = await create(newJob(orgId, { createdAt: at(2) }), store);
        const j3 = await create(newJob(orgId, { createdAt: at(3) }), store);
        const open = await create(newJob(orgId, { createdAt: at(4) }), store);
        await claimAndEnd(store, j1.id, T0, 'succeeded', at(10), at(1000));
        assert.equal((await store.jobs.cancel(j2.id, { finishedAt: at(20), expiresAt: at(1000), now: T0 }))?.status, 'cancelled');
        await claimAndEnd(store, j3.id, T0, 'failed', at(30), at(1000));
        assert.equal((await store.jobs.claim(uid('run'), T0, LEASE, NO_BOUND))?.id, open.id);

        assert.deepEqual(ids(await store.jobs.unbilled(10)), [j1.id, j2.id, j3.id], 'a running job is not unbilled');
        assert.deepEqual(ids(await store.jobs.unbilled(2)), [j1.id, j2.id]);
        await store.jobs.setBilling(j1.id, 'charged');
        assert.equal((await store.jobs.get(j1.id))?.billing, 'charged');
        await store.jobs.setBilling(j1.id, 'released');
        assert.equal((await store.jobs.get(j1.id))?.billing, 'charged', 'a job no longer held keeps its billing');
        await store.jobs.setBilling(j2.id, 'released');
        await store.jobs.setBilling(j2.id, 'charged');
        assert.equal((await store.jobs.get(j2.id))?.billing, 'released');
        await store.jobs.setBilling(uid('job'), 'charged');
        assert.deepEqual(ids(await store.jobs.unbilled(10)), [j3.id]);
      });
    });

    test('expired lists finished jobs due for removal, oldest first; delete removes a job once', T, async () => {
      await fresh(async ({ store }) => {
        const orgId = await org(store);
        const e1 = await create(newJob(orgId, { createdAt: at(1) }), store);
        const e2 = await create(newJob(orgId, { createdAt: at(2) }), store);
        const e3 = await create(newJob(orgId, { createdAt: at(3) }), store);
        const open = await create(newJob(orgId, { createdAt: at(4) }), store);
        await claimAndEnd(store, e1.id, T0, 'succeeded', at(10), at(100_000));
        await claimAndEnd(store, e2.id, T0, 'failed', at(20), at(200_000));
        assert.ok(await store.jobs.cancel(e3.id, { finishedAt: at(30), expiresAt: at(300_000), now: T0 }));

        assert.deepEqual(await store.jobs.expired(at(99_999), 10), []);
        assert.deepEqual(ids(await store.jobs.expired(at(100_000), 10)), [e1.id], 'due at its expiry');
        assert.deepEqual(ids(await store.jobs.expired(at(250_000), 10)), [e1.id, e2.id]);
        assert.deepEqual(ids(await store.jobs.expired(at(10_000_000), 10)), [e1.id, e2.id, e3.id], 'a queued job never expires');
        assert.deepEqual(ids(await store.jobs.expired(at(10_000_000), 1)), [e1.id]);
        assert.equal((await store.jobs.expired(at(100_000), 10))[0].expiresAt, at(100_000));

        assert.equal(await store.jobs.delete(e1.id), true);
        assert.equal(await store.jobs.delete(e1.id), false);
        assert.equal(await store.jobs.get(e1.id), null);
        assert.equal(await store.jobs.delete(uid('job')), false);
        assert.deepEqual(ids(await store.jobs.expired(at(10_000_000), 10)), [e2.id, e3.id]);
        assert.deepEqual(ids((await store.jobs.list(orgId, { limit: 10 })).data), [open.id, e3.id, e2.id]);
      });
    });

    test('webhooks: a due one is taken by one caller at a time, pushed ahead while in flight; attempts recorded', T, async () => {
      await fresh(async ({ store }) => {
        const orgId = await org(store);
        const w1 = await create(newJob(orgId, { webhookUrl: 'https://example.com/1', createdAt: at(1) }), store);
        const w2 = await create(newJob(orgId, { webhookUrl: 'https://example.com/2', createdAt: at(2) }), store);
        const silent = await create(newJob(orgId, { createdAt: at(3) }), store);
        const w3 = await create(newJob(orgId, { webhookUrl: 'https://example.com/3', createdAt: at(4) }), store);
        await claimAndEnd(store, w1.id, T0, 'succeeded', at(1), at(2));
        await claimAndEnd(store, w2.id, T0 + 10, 'failed', at(1), at(2));
        await claimAndEnd(store, silent.id, T0, 'succeeded', at(1), at(2));
        assert.ok(await store.jobs.cancel(w3.id, { finishedAt: at(1), expiresAt: at(2), now: T0 + 20 }));
        assert.equal(await store.jobs.claimWebhook(T0 - 1, LEASE), null, 'nothing due yet');

        const first = await store.jobs.claimWebhook(T0 + 5, LEASE);
        assert.equal(first?.id, w1.id);
        assert.equal(first?.webhookState, 'pending');
        assert.equal(first?.webhookNextAt, T0 + 5 + LEASE);
        assert.deepEqual(await store.jobs.get(w1.id), first);
        assert.equal(await store.jobs.claimWebhook(T0 + 5, LEASE), null, 'the one in flight is not due, the others not yet');
        assert.deepEqual(ids([await store.jobs.claimWebhook(T0 + 30, LEASE), await store.jobs.claimWebhook(T0 + 30, LEASE)]), [w2.id, w3.id]);
        assert.equal(await store.jobs.claimWebhook(T0 + 30, LEASE), null);

        // A delivery in flight whose caller vanished is due again once its push lapses.
        assert.equal((await store.jobs.claimWebhook(T0 + 5 + LEASE, LEASE))?.id, w1.id);

        await store.jobs.webhookAttempted(w1.id, { state: 'delivered', attempts: 1, nextAt: null });
        await store.jobs.webhookAttempted(w2.id, { state: 'pending', attempts: 1, nextAt: T0 + 60_000 });
        await store.jobs.webhookAttempted(w3.id, { state: 'failed', attempts: 8, nextAt: null });
        const delivered = (await store.jobs.get(w1.id))!;
        assert.equal(delivered.webhookState, 'delivered');
        assert.equal(delivered.webhookAttempts, 1);
        assert.equal(delivered.webhookNextAt, null);
        assert.equal((await store.jobs.get(w3.id))?.webhookState, 'failed');
        assert.equal(await store.jobs.claimWebhook(T0 + 59_999, LEASE), null);
        const retried = await store.jobs.claimWebhook(T0 + 60_000, LEASE);
        assert.equal(retried?.id, w2.id);
        assert.equal(retried?.webhookAttempts, 1);
        await store.jobs.webhookAttempted(w2.id, { state: 'delivered', attempts: 2, nextAt: null });
        assert.equal(await store.jobs.claimWebhook(T0 + 10_000_000, LEASE), null, 'delivered and failed webhooks are never taken');
        assert.equal((await store.jobs.get(w2.id))?.webhookAttempts, 2);
      });
    });

    test('webhooks: racing callers on two servers take each due webhook exactly once', T, async () => {
      await fresh(async ({ store, another }) => {
        const other = await another();
        try {
          const orgId = await org(store);
          const jobs: string[] = [];
          for (let i = 0; i < 10; i++) {
            const job = await create(newJob(orgId, { webhookUrl: `https://example.com/${i}`, createdAt: at(i) }), store);
            assert.ok(await store.jobs.cancel(job.id, { finishedAt: at(i), expiresAt: at(i + 1), now: T0 + i }));
            jobs.push(job.id);
          }
          const taken = await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 ? other : store).jobs.claimWebhook(T0 + 100, 60_000)));
          const got = ids(taken).filter((id): id is string => id !== null);
          assert.equal(got.length, 10);
          assert.deepEqual([...got].sort(), [...jobs].sort());
        } finally {
          await other.close();
        }
      });
    });

    test('lead: one owner at a time, renewed by its owner, taken over once it lapses', T, async () => {
      const name = uid('sweeper');
      assert.equal(await store.jobs.lead(name, 'a', T0, LEASE), true);
      assert.equal(await store.jobs.lead(name, 'b', T0 + 1, LEASE), false);
      assert.equal(await store.jobs.lead(name, 'a', T0 + 500, LEASE), true, 'renewed until T0 + 1500');
      assert.equal(await store.jobs.lead(name, 'b', T0 + LEASE + 1, LEASE), false, 'the renewal holds');
      assert.equal(await store.jobs.lead(name, 'b', T0 + 1500, LEASE), false, 'held up to and including its expiry');
      assert.equal(await store.jobs.lead(name, 'b', T0 + 1501, LEASE), true, 'lapsed: taken over');
      assert.equal(await store.jobs.lead(name, 'a', T0 + 1502, LEASE), false, 'the old owner lost it');
      assert.equal(await store.jobs.lead(uid('sweeper'), 'a', T0 + 1502, LEASE), true, 'names are independent');

      // Racing for a free name on two servers: one wins.
      const other = await opened.another();
      try {
        const raced = uid('sweeper');
        const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? other : store).jobs.lead(raced, `owner${i}`, T0, LEASE)));
        assert.equal(results.filter(Boolean).length, 1);
      } finally {
        await other.close();
      }
    });

    test('two servers claiming from one queue of 40 jobs in tight loops claim each job exactly once', T, async () => {
      await fresh(async ({ store, another }) => {
        const other = await another();
        try {
          const orgs = [await org(store), await org(store)];
          const queuedIds: string[] = [];
          for (let i = 0; i < 40; i++) queuedIds.push((await create(newJob(orgs[i % 2], { createdAt: at(i) }), store)).id);
          const claims: { id: string; token: string; by: number }[] = [];
          const loop = async (on: Store, by: number) => {
            for (;;) {
              const token = uid('run');
              const job = await on.jobs.claim(token, T0, 60_000, NO_BOUND);
              if (!job) return;
              assert.equal(job.leaseToken, token);
              claims.push({ id: job.id, token, by });
            }
          };
          await Promise.all([0, 1, 2, 3].flatMap(() => [loop(store, 0), loop(other, 1)]));
          assert.equal(await store.jobs.claim(uid('run'), T0, 60_000, NO_BOUND), null, 'nothing is left');
          assert.equal(claims.length, 40, 'no job is claimed twice');
          assert.deepEqual(claims.map((c) => c.id).sort(), [...queuedIds].sort(), 'every job is claimed');
          for (const { id, token } of claims) {
            const job = (await store.jobs.get(id))!;
            assert.equal(job.leaseToken, token, 'the lease is the claimer\'s');
            assert.equal(job.attempts, 1);
          }
          assert.deepEqual(await store.jobs.countByStatus(), { queued: 0, running: 40, succeeded: 0, failed: 0, cancelled: 0 });
        } finally {
          await other.close();
        }
      });
    });
  });
}
