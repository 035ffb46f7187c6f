/**
 * @module accounts/charge-journal.test
 * The charge journal on its own, against a ledger that is away or answers:
 * entries survive the process (a journal opened again finds them), replay in
 * the order they were appended, stop at the outage and keep the rest in
 * order, land exactly once under their charge keys (a key appended twice is
 * one entry), and an entry the store refuses for good is kept aside.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createLogger } from '../log/logger.js';
import { storeUnavailable } from '../store/errors.js';
import type { AppendResult, NewLedgerEntry } from '../store/store.js';
import { ChargeJournal } from './charge-journal.js';
import { until } from '../../test/helpers/poll.js';

const logger = createLogger('silent');

function entry(key: string, credits = 10): NewLedgerEntry {
  return { orgId: 'org_j', kind: 'charge', credits: -credits, keyId: null, requestId: key.split('/')[0], chargeKey: key, clientRequestId: null, model: 'gepard-1.0', endpoint: 'tts.bytes', characters: credits, reason: null };
}

/** A ledger that records what it is given, and is away while `down` (or refuses keys in `refuse`). */
function ledger() {
  const written: string[] = [];
  const state = { down: false, refuse: new Set<string>(), written };
  return {
    state,
    settle: async (_id: string, e: NewLedgerEntry): Promise<AppendResult> => {
      if (state.down) throw storeUnavailable();
      if (state.refuse.has(e.chargeKey!)) throw new Error('organization org_j does not exist');
      const duplicate = written.includes(e.chargeKey!);
      if (!duplicate) written.push(e.chargeKey!);
      return { entry: { ...e, id: written.length, createdAt: new Date().toISOString() }, balance: 0, duplicate };
    },
  };
}

describe('ChargeJournal', { timeout: 20_000 }, () => {
  it('keeps entries across a restart and replays them in order, once', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'voicegate-journal-')), 'charge-journal.sqlite');
    const store = ledger();
    store.state.down = true;
    const first = new ChargeJournal(path, store, logger);
    first.append('req_a/0', entry('req_a/0'));
    first.append('req_b/0', entry('req_b/0'));
    first.append('req_a/0', entry('req_a/0'));
    first.append('req_c/1', entry('req_c/1'));
    assert.equal(first.entries, 3, 'a charge key appended twice is one entry');
    assert.equal(await first.replay(), 0, 'nothing lands while the store is away');
    assert.equal(first.entries, 3);
    await first.close();

    // Another process on the same data directory (a restart after kill -9) finds them.
    const second = new ChargeJournal(path, store, logger);
    assert.equal(second.entries, 3);
    store.state.down = false;
    assert.equal(await second.replay(), 3);
    assert.deepEqual(store.state.written, ['req_a/0', 'req_b/0', 'req_c/1'], 'in the order they were due');
    assert.equal(second.entries, 0);
    assert.equal(second.replayed, 3);
    assert.equal(await second.replay(), 0, 'a journal replayed is empty');
    await second.close();
    const third = new ChargeJournal(path, store, logger);
    assert.equal(third.entries, 0, 'truncated on disk too');
    await third.close();
  });

  it('stops at the outage and keeps the rest in order; a refused entry is kept aside', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'voicegate-journal-')), 'charge-journal.sqlite');
    const store = ledger();
    const journal = new ChargeJournal(path, store, logger);
    store.state.down = true;
    for (const key of ['req_1/0', 'req_2/0', 'req_3/0']) journal.append(key, entry(key));
    store.state.refuse.add('req_2/0');
    store.state.down = false;
    let calls = 0;
    const settle = store.settle;
    // The store goes away again after the first entry.
    const flaky = { settle: async (id: string, e: NewLedgerEntry) => (++calls > 1 ? Promise.reject(storeUnavailable()) : settle(id, e)) };
    const during = new ChargeJournal(path, flaky, logger);
    assert.equal(await during.replay(), 1);
    assert.equal(during.entries, 2);
    await during.close();
    assert.equal(await journal.replay(), 1, 'the refused one is set aside, the last lands');
    assert.deepEqual(store.state.written, ['req_1/0', 'req_3/0']);
    assert.equal(journal.entries, 0);
    await journal.close();
  });

  it('replays on its own once the store answers again', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'voicegate-journal-')), 'charge-journal.sqlite');
    const store = ledger();
    store.state.down = true;
    const journal = new ChargeJournal(path, store, logger);
    journal.append('req_x/0', entry('req_x/0'));
    store.state.down = false;
    await until(() => journal.entries === 0, { timeoutMs: 5_000, what: 'the replay loop drained the journal' });
    assert.deepEqual(store.state.written, ['req_x/0']);
    await journal.close();
  });
});
