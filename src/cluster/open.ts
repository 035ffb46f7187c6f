/**
 * @module cluster/open
 * Chooses the change bus from configuration: Redis pub/sub when `redis.url`
 * is set (every server hears every change at once), in-process otherwise.
 */
import type { RedisConfig } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { ChangeBus } from './change-bus.js';
import { InProcessChangeBus } from './in-process.js';
import { RedisChangeBus } from './redis.js';

export function openChangeBus(config: { redis: RedisConfig }, logger?: Logger): ChangeBus {
  const { url, keyPrefix, timeoutMs } = config.redis;
  if (!url) return new InProcessChangeBus(logger);
  return new RedisChangeBus({ url, keyPrefix, timeoutMs, logger });
}
