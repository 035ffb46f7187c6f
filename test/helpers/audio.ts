/**
 * @module test/helpers/audio
 * Measurements of decoded test audio shared by the suites that check pauses.
 */

/** The longest run of exactly zero samples: the silence a break or a pause inserted. */
export function longestZeroRun(samples: Int16Array): number {
  let run = 0;
  let longest = 0;
  for (const s of samples) longest = Math.max(longest, (run = s === 0 ? run + 1 : 0));
  return longest;
}
