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

/**
 * The fundamental frequency of voiced audio (Hz): the median over 40 ms frames loud enough to be
 * voiced of each frame's period: the shortest lag between 60 and 1,000 Hz whose normalised
 * autocorrelation is within 10% of the frame's strongest.
 */
export function pitchOf(samples: Float32Array, sampleRate: number): number {
  const frame = Math.round(sampleRate * 0.04);
  const minLag = Math.floor(sampleRate / 1000);
  const maxLag = Math.ceil(sampleRate / 60);
  let peak = 0;
  for (const s of samples) peak = Math.max(peak, Math.abs(s));
  const found: number[] = [];
  for (let start = 0; start + frame + maxLag < samples.length; start += frame) {
    let energy = 0;
    for (let i = start; i < start + frame; i++) energy += samples[i] * samples[i];
    if (Math.sqrt(energy / frame) < peak * 0.1) continue;
    const r = new Float32Array(maxLag + 1);
    for (let lag = minLag; lag <= maxLag; lag++) {
      let sum = 0;
      let norm = 0;
      for (let i = start; i < start + frame; i++) {
        sum += samples[i] * samples[i + lag];
        norm += samples[i + lag] * samples[i + lag];
      }
      r[lag] = sum / Math.sqrt(energy * norm || 1);
    }
    const best = Math.max(...r);
    // The shortest lag nearly as alike as the best: the period, not a multiple of it.
    let bestLag = minLag;
    while (bestLag < maxLag && !(r[bestLag] >= 0.9 * best && r[bestLag] >= r[bestLag + 1])) bestLag++;
    // A parabola through the peak and its neighbours places it between whole samples.
    const [a, b, c] = [r[bestLag - 1], r[bestLag], r[bestLag + 1] ?? r[bestLag]];
    const shift = a - 2 * b + c < 0 ? (0.5 * (a - c)) / (a - 2 * b + c) : 0;
    if (best > 0.6) found.push(sampleRate / (bestLag + shift));
  }
  found.sort((a, b) => a - b);
  return found.length ? found[Math.floor(found.length / 2)] : 0;
}
