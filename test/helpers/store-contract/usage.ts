/**
 * @module test/helpers/store-contract/usage
 * The `UsageRepository` contract, whatever database is under it: summaries
 * equal the sums of the raw rows (computed here, independently) for any range,
 * on whole hours or not, and any grouping; failed requests recorded once per
 * request; the export of a range in keyset pages, ties included; and two
 * consecutive exports of a range a writer is racing into, with no row twice
 * and none missing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LedgerEntry, NewLedgerEntry, RequestFailure, Store, UsageGroup, UsageQuery, UsageRow } from '../../../src/store/store.js';
import { until } from '../poll.js';
import { charge, credit, uid, T, type Subject, type TimedRow } from './common.js';

const HOUR = 3_600_000;
const START = Date.UTC(2025, 2, 30, 22, 0, 0); // across a day's and a month's end
const iso = (ms: number) => new Date(ms).toISOString();

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let x = seed;
  return () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
}

type Sums = Omit<UsageRow, 'group'>;

function groupOf(row: TimedRow, g: UsageGroup): string | null {
  const r = 'entry' in row ? row.entry : row.failure;
  switch (g) {
    case 'day':
      return `${row.at.slice(0, 10)}T00:00:00.000Z`;
    case 'hour':
      return `${row.at.slice(0, 13)}:00:00.000Z`;
    case 'model':
      return r.model;
    case 'endpoint':
      return r.endpoint;
    case 'key':
      return r.keyId;
    case 'org':
      return r.orgId;
  }
}

/** The summary as the raw rows give it, summed here. */
function expected(rows: TimedRow[], q: UsageQuery): UsageRow[] {
  const out = new Map<string, UsageRow>();
  for (const row of rows) {
    if (row.at < q.from || row.at >= q.to) continue;
    const r = 'entry' in row ? row.entry : row.failure;
    if (q.orgId !== undefined && r.orgId !== q.orgId) continue;
    if ('entry' in row && row.entry.kind !== 'charge') continue;
    const group = Object.fromEntries(q.groupBy.map((g) => [g, groupOf(row, g)]));
    const key = JSON.stringify(group);
    const sums = out.get(key) ?? { group, credits: 0, characters: 0, requests: 0, failedRequests: 0 };
    if ('entry' in row) {
      const e = row.entry;
      sums.credits += -e.credits;
      sums.characters += e.characters ?? 0;
      if (e.chargeKey === null || !e.chargeKey.includes('/') || e.chargeKey.endsWith('/0')) sums.requests += 1;
    } else sums.failedRequests += 1;
    out.set(key, sums);
  }
  if (q.groupBy.length === 0 && out.size === 0) return [{ group: {}, credits: 0, characters: 0, requests: 0, failedRequests: 0 }];
  return [...out.values()];
}

const byGroup = (rows: UsageRow[]) => [...rows].sort((a, b) => (JSON.stringify(a.group) < JSON.stringify(b.group) ? -1 : 1));

async function all(entries: AsyncIterable<LedgerEntry>): Promise<LedgerEntry[]> {
  const out: LedgerEntry[] = [];
  for await (const e of entries) out.push(e);
  return out;
}

export function usageContract(subject: Subject): void {
  test('usage summary: equals the raw rows summed, for ranges on whole hours or not and every grouping', T, async () => {
    const orgs = [await subject.org(), await subject.org()];
    const keys = [uid('key'), uid('key'), null];
    const models = ['sonic', 'gepard-1.0'];
    const endpoints = ['tts.bytes', 'tts.sse', 'tts.websocket'];
    const next = random(7);
    const pick = <V>(list: V[]) => list[Math.floor(next() * list.length)];
    const rows: TimedRow[] = [];
    const at = (ms: number) => iso(Math.floor(ms));
    for (let i = 0; i < 160; i++) {
      const orgId = pick(orgs);
      const time = at(START + next() * 53 * HOUR);
      const request = uid('req');
      const kind = next();
      const credits = 1 + Math.floor(next() * 50);
      const extra: Partial<NewLedgerEntry> = { keyId: pick(keys), model: pick(models), endpoint: pick(endpoints), characters: next() < 0.1 ? null : credits };
      if (kind < 0.1) rows.push({ at: time, entry: credit(orgId, credits) });
      else if (kind < 0.25) rows.push({ at: time, entry: charge(orgId, credits, `${request}/${1 + Math.floor(next() * 12)}`, extra) });
      else if (kind < 0.3) rows.push({ at: time, entry: charge(orgId, credits, null, extra) });
      else if (kind < 0.85) rows.push({ at: time, entry: charge(orgId, credits, `${request}/0`, extra) });
      else {
        const failure: RequestFailure = { orgId, keyId: extra.keyId ?? null, requestId: request, model: pick(models), endpoint: pick(endpoints), code: 'engine_failed' };
        rows.push({ at: time, failure });
      }
    }
    // Rows on the edges themselves: a whole hour, and the exact ends of a range below.
    const edgeFrom = START + 3 * HOUR + 17 * 60_000 + 123;
    const edgeTo = START + 41 * HOUR + 59 * 60_000 + 999;
    for (const ms of [START + 5 * HOUR, edgeFrom, edgeTo]) rows.push({ at: iso(ms), entry: charge(orgs[0], 3, `${uid('req')}/0`, { keyId: keys[0] }) });
    await subject.opened.insertAt(rows);

    const ranges: [number, number][] = [
      [edgeFrom, edgeTo], // partial hours at both ends, a row on each end
      [START + 3 * HOUR, START + 27 * HOUR], // whole hours only
      [START + 5 * 60_000, START + 40 * 60_000], // inside one hour
      [START + 50 * 60_000, START + 70 * 60_000], // across one hour's end, no whole hour
      [START - 24 * HOUR, START + 60 * HOUR], // everything
    ];
    const groupings: UsageGroup[][] = [[], ['day'], ['hour'], ['model', 'key'], ['day', 'model', 'endpoint', 'org'], ['org', 'key', 'hour']];
    // Other tests write at today's time, never in these ranges: only these rows count, with or without an organisation named.
    for (const [from, to] of ranges) {
      for (const groupBy of groupings) {
        for (const orgId of [undefined, orgs[1]]) {
          const q: UsageQuery = { from: iso(from), to: iso(to), groupBy, ...(orgId ? { orgId } : {}) };
          const want = expected(rows, q);
          const got = await subject.store.usage.summary(q);
          assert.deepEqual(byGroup(got), byGroup(want), `${q.from} – ${q.to} by ${groupBy.join(',') || 'nothing'}${orgId ? ' for one org' : ''}`);
        }
      }
    }
    // Ascending by the groups, in the order given.
    const days = (await subject.store.usage.summary({ from: iso(START), to: iso(START + 60 * HOUR), groupBy: ['day', 'org'], orgId: orgs[0] })).map((r) => r.group.day!);
    assert.deepEqual(days, [...days].sort());
    assert.deepEqual(days, ['2025-03-30T00:00:00.000Z', '2025-03-31T00:00:00.000Z', '2025-04-01T00:00:00.000Z', '2025-04-02T00:00:00.000Z']);
  });

  test('usage summary: charges and failures written through the store count, each failure once', T, async () => {
    const orgId = await subject.org(1000);
    const from = iso(Date.now() - 1);
    const written: LedgerEntry[] = [];
    for (const [credits, key, model] of [[5, '/0', 'sonic'], [7, '/1', 'sonic'], [11, '/0', 'gepard-1.0']] as const) {
      written.push((await subject.store.ledger.append(charge(orgId, credits, `${uid('req')}${key}`, { model, keyId: 'key_a' }))).entry);
    }
    const failure: RequestFailure = { orgId, keyId: 'key_a', requestId: uid('req'), model: 'sonic', endpoint: 'tts.bytes', code: 'engine_failed' };
    assert.equal(await subject.store.usage.recordFailure(failure), true);
    assert.equal(await subject.store.usage.recordFailure(failure), false, 'a second record of one request is no new row');
    const rows = await subject.store.usage.summary({ from, to: iso(Date.now() + HOUR), groupBy: ['model', 'key', 'endpoint'], orgId });
    assert.deepEqual(byGroup(rows), [
      { group: { model: 'gepard-1.0', key: 'key_a', endpoint: 'tts_bytes' }, credits: 11, characters: 11, requests: 1, failedRequests: 0 },
      { group: { model: 'sonic', key: 'key_a', endpoint: 'tts.bytes' }, credits: 0, characters: 0, requests: 0, failedRequests: 1 },
      { group: { model: 'sonic', key: 'key_a', endpoint: 'tts_bytes' }, credits: 12, characters: 12, requests: 1, failedRequests: 0 },
    ]);
    // The same from the rows the store wrote, by their own times, whatever hour they fell in.
    const [total] = await subject.store.usage.summary({ from: written[0].createdAt, to: iso(Date.parse(written[2].createdAt) + 1), groupBy: [], orgId });
    assert.equal(total.credits, 23);
    assert.equal(total.requests, 2);
  });

  test('usage export: every row of the range once, in (created_at, id) order, across pages with ties', T, async () => {
    const [a, b] = [await subject.org(), await subject.org()];
    const tie = iso(START + 2 * HOUR + 1);
    const rows: TimedRow[] = [];
    for (let i = 0; i < 7; i++) rows.push({ at: tie, entry: charge(a, i + 1, `${uid('req')}/0`) });
    for (let i = 0; i < 5; i++) rows.push({ at: iso(START + i * 30 * 60_000), entry: i % 2 ? credit(a, 100 + i) : charge(a, 10 + i, `${uid('req')}/0`) });
    rows.push({ at: iso(START + HOUR), entry: charge(b, 99, `${uid('req')}/0`) });
    rows.push({ at: iso(START + 3 * HOUR), entry: charge(a, 1, `${uid('req')}/0`) }); // on `to`: left out
    await subject.opened.insertAt(rows);
    const from = iso(START + 30 * 60_000); // a row sits on `from`: kept
    const to = iso(START + 3 * HOUR);
    const stored = (await subject.store.ledger.list(a, { limit: 100 })).data;
    const want = stored.filter((e) => e.createdAt >= from && e.createdAt < to).sort((x, y) => (x.createdAt === y.createdAt ? x.id - y.id : x.createdAt < y.createdAt ? -1 : 1));
    assert.equal(want.length, 11);
    for (const pageSize of [3, 7, 1000]) {
      assert.deepEqual(await all(subject.store.usage.entries({ from, to, orgId: a, pageSize })), want, `pages of ${pageSize}`);
    }
    const everyone = await all(subject.store.usage.entries({ from, to, pageSize: 4 }));
    assert.deepEqual(everyone.filter((e) => e.orgId === b).map((e) => e.credits), [-99]);
    assert.equal(everyone.filter((e) => e.orgId === a).length, 11);
  });

  test('usage export: two consecutive exports of a range a writer races into hold every row once', { timeout: 60_000 }, async () => {
    const orgId = await subject.org(1_000_000);
    const writer: Store = await subject.opened.another();
    let stop = false;
    let written = 0;
    const write = async () => {
      while (!stop) {
        await writer.ledger.append(charge(orgId, 1, `${uid('req')}/0`));
        written++;
        // An append can resolve without leaving the microtask queue (SQLite, a fast flush): yield, so the test's polls run.
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const exported: LedgerEntry[] = [];
    try {
      const t0 = iso(Date.now());
      const writers = Array.from({ length: 6 }, write);
      await until(async () => written >= 30, { intervalMs: 5 });
      const t1 = iso(Date.now()); // from now on, a moment in the past
      exported.push(...(await all(subject.store.usage.entries({ from: t0, to: t1, orgId, pageSize: 7 }))));
      const before = written;
      await until(async () => written >= before + 30, { intervalMs: 5 });
      // The range ends at the next millisecond: every row counted so far was stamped before it (one stamped
      // in the millisecond `Date.now()` reads here would belong to the next range, not this one).
      const end = Date.now() + 1;
      await until(async () => Date.now() >= end, { intervalMs: 5 });
      const t2 = iso(end);
      exported.push(...(await all(subject.store.usage.entries({ from: t1, to: t2, orgId, pageSize: 7 }))));
      stop = true;
      await Promise.all(writers);
      const ids = exported.map((e) => e.id);
      assert.equal(new Set(ids).size, ids.length, 'no row twice');
      const stored: LedgerEntry[] = [];
      for (let page = await subject.store.ledger.list(orgId, { limit: 1000 }); ; page = await subject.store.ledger.list(orgId, { limit: 1000, startingAfter: stored[stored.length - 1].id })) {
        stored.push(...page.data);
        if (!page.hasMore) break;
      }
      const inRange = stored.filter((e) => e.kind === 'charge' && e.createdAt >= t0 && e.createdAt < t2);
      const charges = stored.filter((e) => e.kind === 'charge');
      assert.ok(inRange.length >= before + 30, `${inRange.length} of ${charges.length} rows in [${t0}, ${t2}); written ${written}; first ${charges.at(-1)?.createdAt}, last ${charges[0]?.createdAt}`);
      assert.deepEqual(ids.sort((x, y) => x - y), inRange.map((e) => e.id).sort((x, y) => x - y), 'no row missing');
    } finally {
      stop = true;
      await writer.close();
    }
  });
}
