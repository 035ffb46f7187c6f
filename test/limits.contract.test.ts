/**
 * @module test/limits.contract
 * Runs the limit-counter contract against the in-process counters, the
 * Redis counters and the Redis counters with their local fallback (each
 * Redis run under its own key prefix, removed after).
 */
import assert from 'node:assert/strict';
import type { LimitCounters } from '../src/limits/counters.js';
import { FallbackLimits } from '../src/limits/fallback.js';
import { InProcessLimits } from '../src/limits/in-process.js';
import { RedisLimits } from '../src/limits/redis.js';
import { limitsContract } from './helpers/limits-contract.js';
import { closedPort, deleteKeys, keysUnder, TEST_REDIS_URL, testPrefix } from './helpers/redis.js';

limitsContract('in-process', async () => {
  const limits = new InProcessLimits();
  return { shared: false, open: async () => limits, dispose: () => limits.close() };
}, { shared: false });

/** Redis counters under a fresh key prefix, each instance wrapped by `wrap`; `fallsBack`: the wrapper counts locally when Redis is away. */
function redisSubject(wrap: (limits: RedisLimits, leaseTtlMs: number) => LimitCounters, fallsBack: boolean) {
  return async () => {
    const keyPrefix = testPrefix();
    const opened: LimitCounters[] = [];
    const open = (url: string, leaseTtlMs = 15_000) => {
      const limits = wrap(new RedisLimits({ url, keyPrefix, leaseTtlMs, timeoutMs: 1000 }), leaseTtlMs);
      opened.push(limits);
      return limits;
    };
    return {
      shared: true,
      fallsBack,
      open: async (options: { leaseTtlMs?: number } = {}) => open(TEST_REDIS_URL, options.leaseTtlMs),
      unreachable: async () => open(`redis://127.0.0.1:${await closedPort()}`),
      async dispose() {
        await Promise.all(opened.map((l) => l.close()));
        await deleteKeys(keyPrefix);
        assert.deepEqual(await keysUnder(keyPrefix), []);
      },
    };
  };
}

limitsContract('redis', redisSubject((limits) => limits, false), { shared: true });

limitsContract(
  'redis with a local fallback',
  redisSubject((limits, leaseTtlMs) => new FallbackLimits(limits, { expectedGateways: null, aliveTtlMs: leaseTtlMs }), true),
  { shared: true },
);
