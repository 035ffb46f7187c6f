import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CircuitBreaker } from './breaker.js';

test('opens after consecutive failures, lets one probe through once openMs has passed, and closes on its success', () => {
  let now = 0;
  const breaker = new CircuitBreaker('e', { failures: 2, openMs: 1000 }, () => now);
  breaker.failure();
  breaker.success();
  breaker.failure();
  assert.equal(breaker.admit(), 'pass', 'a success resets the count');
  breaker.failure();
  assert.equal(breaker.current, 1);
  assert.equal(breaker.admit(), 'skip');
  now = 1000;
  assert.equal(breaker.current, 2);
  assert.equal(breaker.admit(), 'probe');
  assert.equal(breaker.admit(), 'skip', 'one probe at a time');
  breaker.failure();
  assert.equal(breaker.current, 1, 'a failed probe reopens it');
  now = 2000;
  assert.equal(breaker.admit(), 'probe');
  breaker.success();
  assert.equal(breaker.current, 0);
});

test("a 429's Retry-After delays the probe beyond openMs", () => {
  let now = 0;
  const breaker = new CircuitBreaker('e', { failures: 1, openMs: 1000 }, () => now);
  breaker.failure(5000);
  now = 1000;
  assert.equal(breaker.admit(), 'skip');
  now = 5000;
  assert.equal(breaker.admit(), 'probe');
  breaker.neutral();
  assert.equal(breaker.admit(), 'probe', 'an attempt that proved nothing frees the probe');
});
