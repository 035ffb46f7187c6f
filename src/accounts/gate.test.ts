/**
 * @module accounts/gate.test
 * The gate's short-lived caches: no store read per request while a record is
 * fresh, admin changes in this process take effect at once, a revocation
 * made behind the gate's back (the CLI, another process) within CACHE_MS,
 * and the cached balance follows every charge. Requests that miss together
 * share one read, and a record in use is read again before it expires
 * without a request waiting for it.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from '../errors/api-error.js';
import { createLogger } from '../log/logger.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/store.js';
import type { SynthesisRequest } from '../synthesis/request.js';
import { AccountsAdmin } from './admin.js';
import { AccountsGate, CACHE_MS, REFRESH_AFTER_MS } from './gate.js';
import { InProcessLimits } from '../limits/in-process.js';
import { eventually } from '../../test/helpers/redis.js';
import { settled } from '../../test/helpers/settled.js';

const NO_LIMITS = { maxConcurrent: null, rateLimit: null };

let requests = 0;
function synthesis(characters: number): SynthesisRequest {
  return { requestId: `req_test${++requests}`, characters, model: { id: 'gepard-1.0', creditMultiplier: 1 } } as unknown as SynthesisRequest;
}

function options(characters: number) {
  return { endpoint: 'tts.bytes' as const, clientRequestId: null, reserveCharacters: characters };
}

const isCode = (code: string) => (err: unknown) => err instanceof ApiError && err.code === code;

describe('AccountsGate caches', () => {
  let store: Store;
  let admin: AccountsAdmin;
  let gate: AccountsGate;
  let reads: { keys: number; orgs: number };
  let orgId: string;
  let keyId: string;
  let key: string;

  beforeEach(async () => {
    store = openSqliteStore(':memory:');
    reads = { keys: 0, orgs: 0 };
    const getKey = store.keys.get.bind(store.keys);
    const getOrg = store.orgs.get.bind(store.orgs);
    store.keys.get = (id) => (reads.keys++, getKey(id));
    store.orgs.get = (id) => (reads.orgs++, getOrg(id));
    admin = new AccountsAdmin(store, { defaultLimits: NO_LIMITS } as ConstructorParameters<typeof AccountsAdmin>[1]);
    gate = new AccountsGate(store, new InProcessLimits(), { usdPerMillionCredits: 30, costHeaderAliasPrefix: null }, createLogger('silent'));
    admin.onChange((change) => gate.invalidate(change));
    const org = await admin.createOrg({ name: 'cache test', credits: 10 });
    const issued = await admin.issueKey(org.id);
    orgId = org.id;
    keyId = issued.record.id;
    key = issued.key;
  });

  it('reads the key and the organisation once while they are fresh', async () => {
    reads = { keys: 0, orgs: 0 };
    for (let i = 0; i < 20; i++) {
      const caller = await gate.authenticate(key);
      await (await gate.admit(caller, synthesis(1), options(1))).release();
    }
    assert.deepEqual(reads, { keys: 1, orgs: 1 });
  });

  it('requests that miss together share one read of the key and one of the organisation', async () => {
    gate.forgetAll();
    reads = { keys: 0, orgs: 0 };
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        const caller = await gate.authenticate(key);
        await (await gate.admit(caller, synthesis(0), options(0))).release();
      }),
    );
    assert.deepEqual(reads, { keys: 1, orgs: 1 });
  });

  it('a record in use is read again in the background after REFRESH_AFTER_MS, and served while that read waits', async () => {
    gate.forgetAll();
    await gate.authenticate(key);
    const getKey = store.keys.get.bind(store.keys);
    let proceed!: () => void;
    const held = new Promise<void>((resolve) => (proceed = resolve));
    let started = 0;
    store.keys.get = async (id) => {
      started++;
      await held;
      return getKey(id);
    };
    // Revoked behind the gate's back: the background read brings the revocation in.
    await store.keys.revoke(keyId, new Date().toISOString());
    // Every request is served from the cache at once, until one past REFRESH_AFTER_MS starts the read.
    const refreshed = await eventually(async () => {
      const served = gate.authenticate(key);
      assert.ok(await settled(served), 'a fresh record must not wait for its background read');
      await served;
      return started > 0;
    }, CACHE_MS);
    assert.ok(refreshed, `no background read within CACHE_MS (REFRESH_AFTER_MS ${REFRESH_AFTER_MS})`);
    await gate.authenticate(key);
    assert.equal(started, 1, 'one background read at a time');
    proceed();
    const revoked = await eventually(() => gate.authenticate(key).then(() => false, (err) => isCode('invalid_api_key')(err)), 1000);
    assert.ok(revoked, 'the background read brought the revocation in');
    assert.equal(started, 1);
  });

  it('a key revoked through the admin operations stops at once', async () => {
    await gate.authenticate(key);
    await admin.revokeKey(keyId);
    await assert.rejects(gate.authenticate(key), isCode('invalid_api_key'));
  });

  it('a key revoked in the store directly (as the CLI does) stops within CACHE_MS', async () => {
    await gate.authenticate(key);
    await store.keys.revoke(keyId, new Date().toISOString());
    await sleep(CACHE_MS + 20);
    await assert.rejects(gate.authenticate(key), isCode('invalid_api_key'));
  });

  it('the cached balance follows each charge; credits added through admin apply at once', async () => {
    const caller = await gate.authenticate(key);
    const admission = await gate.admit(caller, synthesis(10), options(10));
    const headers = await admission.charge(0, 10);
    await admission.release();
    assert.equal(headers['x-credits-remaining'], '0');
    await assert.rejects(gate.admit(caller, synthesis(1), options(1)), isCode('insufficient_credits'));
    await admin.addCredits(orgId, 5, 'top-up');
    await gate.admit(caller, synthesis(1), options(1));
    assert.equal((await store.orgs.get(orgId))!.balance, 5);
  });

  it('a batch reserved while the request is being released is dropped, not left holding credits', async () => {
    const caller = await gate.authenticate(key);
    const admission = await gate.admit(caller, synthesis(5), options(5));
    const reserve = store.ledger.reserve.bind(store.ledger);
    let proceed!: () => void;
    const gateOpen = new Promise<void>((resolve) => (proceed = resolve));
    store.ledger.reserve = async (request) => {
      await gateOpen;
      return reserve(request);
    };
    const pending = admission.reserve(1, 1000);
    await admission.release();
    proceed();
    assert.equal(await pending, false);
    assert.equal(await store.ledger.reserved(orgId), 0);
  });
});
