/**
 * @module limits/open
 * Chooses the limit counters from configuration: shared in Redis when
 * `redis.url` is set (several servers, one set of limits), in-process otherwise.
 */
import type { RedisConfig } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { LimitCounters } from './counters.js';
import { InProcessLimits } from './in-process.js';
import { RedisLimits } from './redis.js';

export function openLimits(config: { redis: RedisConfig }, logger?: Logger): LimitCounters {
  const { url, keyPrefix, leaseTtlMs, timeoutMs } = config.redis;
  if (!url) return new InProcessLimits();
  return new RedisLimits({ url, keyPrefix, leaseTtlMs, timeoutMs, logger });
}
