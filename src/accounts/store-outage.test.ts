/**
 * @module accounts/store-outage.test
 * An outage begins with the first failure and ends with the next answer,
 * each logged once; it is `degraded` for `outageMaxSeconds`, then
 * `unavailable`, and the last-known-good copy answers only while degraded.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../log/logger.js';
import { StoreOutage } from './store-outage.js';
import { until } from '../../test/helpers/poll.js';

test('an outage is degraded, then unavailable past its limit; logged once each way', { timeout: 10_000 }, async () => {
  const lines: string[] = [];
  const outage = new StoreOutage(200, createLogger('info', { write: (line: string) => void lines.push(line) }));
  assert.equal(outage.state, 'available');
  for (let i = 0; i < 5; i++) outage.failed();
  assert.equal(outage.state, 'degraded');
  assert.equal(outage.servingStale, true);
  assert.equal(lines.length, 1, 'the start is logged once');
  await until(() => outage.state === 'unavailable', { timeoutMs: 2_000 });
  assert.equal(outage.servingStale, false, 'past outageMaxSeconds, nothing is admitted on held credit');
  outage.answered();
  outage.answered();
  assert.equal(outage.state, 'available');
  assert.equal(lines.length, 2, 'the end is logged once');
});
