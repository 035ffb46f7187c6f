/**
 * @module test/poll
 * The tests' bounded poll (`helpers/poll.ts`): it answers the check's value
 * once it holds, gives up with a message naming what it awaited, lets a
 * check's own error through at once, and answers as a boolean too.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually, PollTimeout, until } from './helpers/poll.js';

const T = { timeout: 10_000 };

test('until resolves with the value the check gives once it holds', T, async () => {
  let calls = 0;
  assert.deepEqual(await until(() => ++calls >= 3 && { calls }, { intervalMs: 1 }), { calls: 3 });
  assert.equal(await until(async () => 'ready', { timeoutMs: 0 }), 'ready');
});

test('until gives up after its bound, naming what it awaited (a function is asked for what it saw last)', T, async () => {
  const started = performance.now();
  await assert.rejects(until(() => false, { timeoutMs: 50, intervalMs: 5, what: 'the moon' }), (err) => {
    assert.ok(err instanceof PollTimeout);
    assert.equal((err as Error).message, 'timed out after 50 ms waiting for the moon');
    return true;
  });
  assert.ok(performance.now() - started >= 50);
  let seen = 0;
  await assert.rejects(until(() => ++seen > 1e9, { timeoutMs: 20, intervalMs: 0, what: () => `a count past 1e9 (${seen > 0 ? 'counting' : 'never asked'})` }), /waiting for a count past 1e9 \(counting\)$/);
});

test("a check's own error ends the wait at once", T, async () => {
  const started = performance.now();
  await assert.rejects(until(() => { throw new Error('broken check'); }, { timeoutMs: 5_000 }), /^Error: broken check$/);
  assert.ok(performance.now() - started < 1_000);
});

test('eventually answers true once the check holds, false when its time ran out first', T, async () => {
  let calls = 0;
  assert.equal(await eventually(() => ++calls === 2, 1_000, 1), true);
  assert.equal(await eventually(() => false, 30, 5), false);
  await assert.rejects(eventually(() => { throw new Error('broken'); }, 1_000), /broken/);
});
