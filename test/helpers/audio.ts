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

/** In-place radix-2 FFT of `re`/`im` (length a power of two). */
function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j], re[i]];
      [im[i], im[j]] = [im[j], im[i]];
    }
  }
  for (let size = 2; size <= n; size <<= 1) {
    const angle = (-2 * Math.PI) / size;
    for (let start = 0; start < n; start += size) {
      for (let k = 0; k < size / 2; k++) {
        const wr = Math.cos(angle * k);
        const wi = Math.sin(angle * k);
        const a = start + k;
        const b = a + size / 2;
        const tr = re[b] * wr - im[b] * wi;
        const ti = re[b] * wi + im[b] * wr;
        re[b] = re[a] - tr;
        im[b] = im[a] - ti;
        re[a] += tr;
        im[a] += ti;
      }
    }
  }
}

/**
 * The log-mel spectrogram of 16-bit PCM: 25 ms Hann-windowed frames every 10 ms, a 512-point FFT
 * (at 16 kHz; longer frames at higher rates keep the same times), 40 mel bands up to half the
 * rate, log of each band's energy. Frames in order, bands within a frame.
 */
export function logMel(samples: Int16Array, sampleRate: number, bands = 40): Float64Array[] {
  const frame = Math.round(sampleRate * 0.025);
  const hop = Math.round(sampleRate * 0.01);
  let size = 1;
  while (size < frame) size <<= 1;
  const mel = (hz: number) => 2595 * Math.log10(1 + hz / 700);
  const hz = (m: number) => 700 * (10 ** (m / 2595) - 1);
  const top = mel(sampleRate / 2);
  const edges = Array.from({ length: bands + 2 }, (_, i) => (hz((top * i) / (bands + 1)) * size) / sampleRate);
  const window = Float64Array.from({ length: frame }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (frame - 1)));
  const out: Float64Array[] = [];
  for (let start = 0; start + frame <= samples.length; start += hop) {
    const re = new Float64Array(size);
    const im = new Float64Array(size);
    for (let i = 0; i < frame; i++) re[i] = (samples[start + i] / 32768) * window[i];
    fft(re, im);
    const row = new Float64Array(bands);
    for (let b = 0; b < bands; b++) {
      const [lo, mid, hi] = [edges[b], edges[b + 1], edges[b + 2]];
      let energy = 0;
      for (let k = Math.floor(lo); k <= Math.ceil(hi) && k <= size / 2; k++) {
        const weight = k < mid ? (k - lo) / (mid - lo) : (hi - k) / (hi - mid);
        if (weight > 0) energy += weight * (re[k] * re[k] + im[k] * im[k]);
      }
      row[b] = Math.log(energy + 1e-10);
    }
    out.push(row);
  }
  return out;
}

/** Pearson's correlation of two spectrograms over the frames both have (the shorter's length). */
export function spectrogramCorrelation(a: readonly Float64Array[], b: readonly Float64Array[]): number {
  const frames = Math.min(a.length, b.length);
  let n = 0;
  let sa = 0;
  let sb = 0;
  for (let f = 0; f < frames; f++) {
    for (let i = 0; i < a[f].length; i++) {
      sa += a[f][i];
      sb += b[f][i];
      n++;
    }
  }
  const ma = sa / n;
  const mb = sb / n;
  let cov = 0;
  let va = 0;
  let vb = 0;
  for (let f = 0; f < frames; f++) {
    for (let i = 0; i < a[f].length; i++) {
      const da = a[f][i] - ma;
      const db = b[f][i] - mb;
      cov += da * db;
      va += da * da;
      vb += db * db;
    }
  }
  return cov / Math.sqrt(va * vb);
}
