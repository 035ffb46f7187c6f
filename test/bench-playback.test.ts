/**
 * @module test/bench-playback
 * The streams benchmark's listener model and search (`bench/lib/playback.ts`):
 * when a chunk counts as an underrun and by how much, that a stall moves the
 * clock on (one stall, one underrun), when a turn has played out, and that the
 * bounded search lands on the largest passing count. It lives here because
 * `npm test` runs `dist/src` and `dist/test`, not `dist/bench`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { searchLargest, TurnClock, type Passing } from '../bench/lib/playback.js';

test('playback starts with the first chunk; chunks inside the buffer are on time', () => {
  const clock = new TurnClock(1000);
  assert.equal(clock.started, false);
  assert.ok(Number.isNaN(clock.firstAudioMs));
  assert.equal(clock.chunk(1040, 100), 0);
  assert.equal(clock.firstAudioMs, 40);
  // 100 ms received at 1040: the buffer runs dry at 1140.
  assert.equal(clock.chunk(1100, 100), 0);
  assert.equal(clock.chunk(1240, 100), 0, 'arriving exactly as the buffer runs dry is on time');
  assert.equal(clock.playedOutAt, 1340);
  assert.equal(clock.receivedSeconds, 0.3);
});

test('a chunk after the buffer ran dry is an underrun by its lateness, and the clock waits for it', () => {
  const clock = new TurnClock(0);
  clock.chunk(10, 100); // dry at 110
  assert.equal(clock.chunk(160, 100), 50);
  // The player resumed at 160 with 100 ms: dry at 260, not 210.
  assert.equal(clock.chunk(250, 100), 0);
  assert.equal(clock.playedOutAt, 360);
  assert.equal(clock.chunk(400, 50), 40);
  assert.equal(clock.playedOutAt, 450);
});

test('audio arriving ahead of playback builds a buffer that covers a later gap', () => {
  const clock = new TurnClock(0);
  clock.chunk(0, 1000);
  clock.chunk(5, 1000); // 2 s buffered by 5 ms
  assert.equal(clock.chunk(1900, 100), 0);
  assert.equal(clock.chunk(2101, 100), 1);
});

function fakeTrials(threshold: number, flaky: Set<number> = new Set()) {
  const calls: { kind: 'screen' | 'full'; n: number }[] = [];
  const run = (kind: 'screen' | 'full') => async (n: number): Promise<Passing> => {
    calls.push({ kind, n });
    return { streams: n, passed: n <= threshold && !(kind === 'screen' && flaky.has(n)) };
  };
  return { calls, screen: run('screen'), full: run('full') };
}

const LIMITS = { bracketSteps: 8, screens: 14, full: 4 };

test('the search doubles up to a bracket, bisects it and confirms N and N + 1 at full length', async () => {
  const fake = fakeTrials(137);
  const result = await searchLargest(fake.screen, fake.full, 100, LIMITS);
  assert.equal(result.best?.streams, 137);
  assert.equal(result.above?.streams, 138);
  assert.deepEqual(fake.calls.slice(0, 2), [{ kind: 'screen', n: 100 }, { kind: 'screen', n: 200 }]);
  assert.deepEqual(
    fake.calls.filter((c) => c.kind === 'full').map((c) => c.n),
    [137, 138],
  );
  assert.ok(result.screens.length <= LIMITS.screens);
});

test('the search halves down when the start fails, and reports none when even one stream fails', async () => {
  const low = fakeTrials(9);
  const found = await searchLargest(low.screen, low.full, 100, LIMITS);
  assert.equal(found.best?.streams, 9);
  assert.equal(found.above?.streams, 10);

  const none = fakeTrials(0);
  const result = await searchLargest(none.screen, none.full, 40, LIMITS);
  assert.equal(result.best, null);
  assert.equal(result.above?.streams, 1);
  assert.equal(result.full.length, 1);
});

test('full-length trials correct a screening that passed by luck, within their bound', async () => {
  // Screening passes up to 150; full-length trials pass only up to 140.
  const fake = fakeTrials(150);
  const full = async (n: number): Promise<Passing> => ({ streams: n, passed: n <= 140 });
  const result = await searchLargest(fake.screen, full, 100, { ...LIMITS, full: 8 });
  // 150 and 142 fail; 126 passes; bisection closes on 140 / 141.
  assert.deepEqual(
    result.full.map((t) => t.streams),
    [150, 142, 126, 134, 138, 140, 141],
  );
  assert.equal(result.best?.streams, 140);
  assert.equal(result.above?.streams, 141);

  const bounded = await searchLargest(fakeTrials(150).screen, full, 100, { ...LIMITS, full: 2 });
  assert.equal(bounded.full.length, 2);
});

test('without screening, full-length trials start at the given count', async () => {
  const fake = fakeTrials(50);
  const result = await searchLargest(fake.screen, fake.full, 50, { bracketSteps: 0, screens: 0, full: 2, skipScreening: true });
  assert.deepEqual(
    fake.calls.map((c) => `${c.kind} ${c.n}`),
    ['full 50', 'full 51'],
  );
  assert.equal(result.best?.streams, 50);
  assert.equal(result.screens.length, 0);
});
