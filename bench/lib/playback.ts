/**
 * @module bench/lib/playback
 * The listener's side of a streamed turn, for bench/streams: a playback
 * clock that starts when the turn's first audio arrives and plays in real
 * time, the buffer being audio received − audio played. A chunk that arrives
 * after the buffer ran dry is an underrun; the player waits for it, so its
 * clock resumes from that chunk (one stall is one underrun, not every chunk
 * after it). And the bounded search for the largest stream count that passes.
 */

/** One turn's playback. Times are `performance.now()` ms; audio lengths ms. */
export class TurnClock {
  /** When the first audio arrived; NaN before. */
  private firstAt = NaN;
  /** Playback's start, moved on by every stall: the buffer runs dry at playStart + receivedMs. */
  private playStart = 0;
  /** Audio received so far, ms. */
  private receivedMs = 0;

  constructor(readonly sentAt: number) {}

  /** Request sent → first audio, ms; NaN before it. */
  get firstAudioMs(): number {
    return this.firstAt - this.sentAt;
  }

  get started(): boolean {
    return !Number.isNaN(this.firstAt);
  }

  /** Audio received so far, seconds. */
  get receivedSeconds(): number {
    return this.receivedMs / 1000;
  }

  /** When everything received so far has been played out. */
  get playedOutAt(): number {
    return this.playStart + this.receivedMs;
  }

  /**
   * `audioMs` of audio arrived at `now`. Returns 0, or for an underrun how long after the buffer
   * ran dry it came (ms). The first chunk starts the clock and is never late.
   */
  chunk(now: number, audioMs: number): number {
    let late = 0;
    if (Number.isNaN(this.firstAt)) {
      this.firstAt = now;
      this.playStart = now;
    } else {
      const dry = this.playStart + this.receivedMs;
      if (now > dry) {
        late = now - dry;
        this.playStart += late;
      }
    }
    this.receivedMs += audioMs;
    return late;
  }
}

export interface Passing {
  streams: number;
  passed: boolean;
}

export interface SearchLimits {
  /** Doubling (or halving) steps to find a bracket. */
  bracketSteps: number;
  /** Screening trials in all, bracket and bisection. */
  screens: number;
  /** Full-length trials. */
  full: number;
  /** No screening: full-length trials start at `start` itself. */
  skipScreening?: boolean;
}

export interface SearchResult<T extends Passing> {
  screens: T[];
  full: T[];
  /** The largest N that passed a full-length trial (null: none did). */
  best: T | null;
  /** The smallest N above it that failed a full-length trial (N + 1 once the search has closed). */
  above: T | null;
}

/**
 * The largest N whose trial passes, in a bounded number of trials. Screening trials
 * (`screen(n)`) bracket it, doubling up from `start` while they pass or halving down while they
 * fail, and bisect the bracket to one stream. Full-length trials (`full(n)`) then start at the
 * screened answer and go up one stream while they pass, or down while they fail (5 % of N, doubling
 * each time) until one passes, then bisect what is left; at most `limits.full` of them.
 */
export async function searchLargest<T extends Passing>(screen: (n: number) => Promise<T>, full: (n: number) => Promise<T>, start: number, limits: SearchLimits): Promise<SearchResult<T>> {
  const screens: T[] = [];
  const tryScreen = async (n: number) => {
    const t = await screen(n);
    screens.push(t);
    return t.passed;
  };
  let lo = 0;
  let hi = Infinity;
  let n = Math.max(1, Math.round(start));
  if (limits.skipScreening) lo = n;
  else if (await tryScreen(n)) {
    lo = n;
    for (let step = 0; hi === Infinity && step < limits.bracketSteps && screens.length < limits.screens; step++) {
      n = lo * 2;
      if (await tryScreen(n)) lo = n;
      else hi = n;
    }
  } else {
    hi = n;
    for (let step = 0; lo === 0 && n > 1 && step < limits.bracketSteps && screens.length < limits.screens; step++) {
      n = Math.max(1, Math.floor(n / 2));
      if (await tryScreen(n)) lo = n;
      else hi = n;
    }
  }
  while (hi !== Infinity && hi - lo > 1 && screens.length < limits.screens) {
    n = Math.floor((lo + hi) / 2);
    if (await tryScreen(n)) lo = n;
    else hi = n;
  }

  const done: T[] = [];
  let best: T | null = null;
  let above: T | null = null;
  let probe = Math.max(1, lo);
  let down = 0;
  while (done.length < limits.full) {
    const t = await full(probe);
    done.push(t);
    if (t.passed && (!best || t.streams > best.streams)) best = t;
    if (!t.passed && (!above || t.streams < above.streams)) above = t;
    if (best && above) {
      if (above.streams - best.streams <= 1) break;
      probe = Math.floor((best.streams + above.streams) / 2);
    } else if (best) {
      probe = best.streams + 1;
    } else {
      if (above!.streams <= 1) break;
      probe = Math.max(1, above!.streams - Math.max(1, Math.ceil(0.05 * above!.streams)) * 2 ** down++);
    }
  }
  return { screens, full: done, best, above };
}
