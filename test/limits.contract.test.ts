/**
 * @module test/limits.contract
 * Runs the limit-counter contract against the in-process counters and the
 * Redis counters (each Redis run under its own key prefix, removed after).
 */
import assert from 'node:assert/strict';
import type { LimitCounters } from '../src/limits/counters.js';
import { InProcessLimits } from '../src/limits/in-process.js';
import { RedisLimits } from '../src/limits/redis.js';
import { limitsContract } from './helpers/limits-contract.js';
import { closedPort, deleteKeys, keysUnder, TEST_REDIS_URL, testPrefix } from './helpers/redis.js';

limitsContract('in-process', async () => {
  const limits = new InProcessLimits();
  return { shared: false, open: async () => limits, dispose: () => limits.close() };
}, { shared: false });

limitsContract('redis', async () => {
  const keyPrefix = testPrefix();
  const opened: LimitCounters[] = [];
  const open = (url: string, leaseTtlMs = 15_000) => {
    const limits = new RedisLimits({ url, keyPrefix, leaseTtlMs, timeoutMs: 1000 });
    opened.push(limits);
    return limits;
  };
  return {
    shared: true,
    open: async (options = {}) => open(TEST_REDIS_URL, options.leaseTtlMs),
    unreachable: async () => open(`redis://127.0.0.1:${await closedPort()}`),
    async dispose() {
      await Promise.all(opened.map((l) => l.close()));
      await deleteKeys(keyPrefix);
      assert.deepEqual(await keysUnder(keyPrefix), []);
    },
  };
}, { shared: true });
