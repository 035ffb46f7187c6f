/**
 * @module limits/open
 * Chooses the limit counters from configuration: shared in Redis when
 * `redis.url` is set (several servers, one set of limits), in-process
 * otherwise. While Redis cannot be reached, the shared counters fall back to
 * counting on each server (`limits.whenSharedCountersFail: local`, the
 * default) or refuse limited requests (`refuse`).
 */
import type { LimitsConfig, RedisConfig } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { LimitCounters } from './counters.js';
import { FallbackLimits } from './fallback.js';
import { InProcessLimits } from './in-process.js';
import { RedisLimits } from './redis.js';

export function openLimits(config: { redis: RedisConfig; limits: LimitsConfig }, logger?: Logger): LimitCounters {
  const { url, keyPrefix, leaseTtlMs, timeoutMs } = config.redis;
  if (!url) return new InProcessLimits();
  const shared = new RedisLimits({ url, keyPrefix, leaseTtlMs, timeoutMs, logger });
  if (config.limits.whenSharedCountersFail === 'refuse') return shared;
  return new FallbackLimits(shared, { expectedGateways: config.limits.expectedGateways, aliveTtlMs: leaseTtlMs, logger });
}
