/**
 * @module test/helpers/redis
 * The test Redis (127.0.0.1:6379 unless VOICEGATE_TEST_REDIS_URL says
 * otherwise), a fresh key prefix per use and removal of its keys, and a
 * loopback port with nothing listening.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env.VOICEGATE_TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/** A prefix no other test run uses. */
export function testPrefix(): string {
  return `voicegate-test:${randomBytes(6).toString('hex')}:`;
}

/** Deletes every key under `prefix`. */
export async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 }) as AsyncIterable<string[]>) {
      if (keys.length) await redis.del(...keys);
    }
  } finally {
    redis.disconnect();
  }
}

/** Keys under `prefix` now (to check that nothing is left behind). */
export async function keysUnder(prefix: string): Promise<string[]> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    return await redis.keys(`${prefix}*`);
  } finally {
    redis.disconnect();
  }
}

/** A loopback port that was free a moment ago (nothing listens on it). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The tests' bounded poll as a boolean, kept here too for the many tests that import it from here. */
export { eventually } from './poll.js';
