/**
 * @module test/helpers/poll
 * The tests' one bounded wait: a check polled until it holds or its time is
 * up. A test never sleeps a fixed time for something to happen (a charge
 * written, a slot freed, a worker busy): it polls for it, with a bound, so
 * it is as fast as the machine and fails with a message instead of hanging.
 */
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';

export interface PollOptions {
  /** How long to keep checking; 5,000 ms unless given. */
  timeoutMs?: number;
  /** The pause between two checks; 20 ms unless given. 0: the next turn of the event loop. */
  intervalMs?: number;
  /** What is awaited, for the timeout's message (a function is asked only then, for what it saw last). */
  what?: string | (() => string);
}

/** What a check answers once it holds: its value without the falsy ones (`return ready && value`). */
export type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/** The error of a wait whose time ran out. */
export class PollTimeout extends Error {
  override name = 'PollTimeout';
}

/**
 * Polls `check` until it returns a truthy value, and resolves with that value. Throws a
 * `PollTimeout` naming what was awaited once `timeoutMs` has passed; an error `check` throws ends
 * the wait at once (a check that may fail for a while catches its own errors).
 */
export async function until<T>(check: () => T | Promise<T>, options: PollOptions = {}): Promise<Truthy<T>> {
  const { timeoutMs = 5_000, intervalMs = 20, what = 'the condition' } = options;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Truthy<T>;
    if (performance.now() >= deadline) {
      throw new PollTimeout(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}`);
    }
    await (intervalMs > 0 ? sleep(intervalMs) : nextTurn());
  }
}

/** The same wait answered as a boolean: true once `check` holds, false when `withinMs` passed first. */
export async function eventually(check: () => boolean | Promise<boolean>, withinMs: number, everyMs = 20): Promise<boolean> {
  try {
    await until(check, { timeoutMs: withinMs, intervalMs: everyMs });
    return true;
  } catch (err) {
    if (err instanceof PollTimeout) return false;
    throw err;
  }
}
