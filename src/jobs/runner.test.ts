/**
 * @module jobs/runner.test
 * The runner's polling of a store that keeps failing (a failover): one line
 * when claims start failing, polling goes on, and one line when the store
 * answers again — not a line per poll.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../log/logger.js';
import type { JobRunnerOptions } from './runner.js';
import { JobRunner } from './runner.js';
import { until } from '../../test/helpers/poll.js';

test('claims that fail while the store is away are logged once, and its return once', { timeout: 10_000 }, async () => {
  const lines: string[] = [];
  let failures = 20;
  let claims = 0;
  const jobs = {
    claim: async () => {
      claims++;
      if (failures > 0) {
        failures--;
        throw new Error('store unavailable');
      }
      return null;
    },
    unbilled: async () => [],
    lead: async () => false,
  };
  const runner = new JobRunner({
    config: { pollMs: 5, concurrency: 1, leaseMs: 10_000, maxRunningPerOrg: 1 },
    services: { store: { jobs } },
    blobs: {},
    logger: createLogger('info', { write: (line: string) => void lines.push(line) }),
    changed: () => {},
    ended: () => {},
    holds: new Set(),
  } as unknown as JobRunnerOptions);
  runner.start();
  try {
    await until(() => failures === 0 && claims > 21, { what: 'polling went on through the failures' });
    const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    assert.equal(messages.filter((m) => m.startsWith('could not claim a job')).length, 1, 'one line for 20 failed polls');
    await until(() => lines.some((line) => line.includes('the store answers again')), { what: 'the return logged' });
  } finally {
    await runner.stop();
  }
});
