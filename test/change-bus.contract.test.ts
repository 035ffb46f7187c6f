/**
 * @module test/change-bus.contract
 * Runs the change-bus contract against the in-process bus and Redis pub/sub
 * (two buses, as two servers, under a fresh key prefix).
 */
import { InProcessChangeBus } from '../src/cluster/in-process.js';
import { RedisChangeBus } from '../src/cluster/redis.js';
import { changeBusContract } from './helpers/change-bus-contract.js';
import { deleteKeys, TEST_REDIS_URL, testPrefix } from './helpers/redis.js';

changeBusContract('in-process', async () => {
  const bus = new InProcessChangeBus();
  return { a: bus, b: bus, settle: async () => {}, dispose: () => bus.close() };
});

changeBusContract('redis', async () => {
  const keyPrefix = testPrefix();
  const [a, b] = [0, 1].map(() => new RedisChangeBus({ url: TEST_REDIS_URL, keyPrefix, timeoutMs: 1000 }));
  return {
    a,
    b,
    settle: async () => void (await Promise.all([a.ready(), b.ready()])),
    async dispose() {
      await Promise.all([a.close(), b.close()]);
      await deleteKeys(keyPrefix);
    },
  };
});
