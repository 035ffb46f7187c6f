/**
 * @module bench/lib/interleave
 * Side-by-side measurement on a noisy machine: short slices of a reference
 * and of each candidate alternate (R C1 R C2 R … C1 R …), and every
 * candidate slice is compared with the mean of the reference slices just
 * before and after it. Drift in machine speed (shared or throttled vCPUs)
 * then cancels out of the ratios instead of landing on whichever scenario
 * happened to run in a slow stretch.
 */

export interface Slice<T> {
  /** The figure compared: audio seconds per second, requests per second… */
  rate: number;
  data: T;
}

export interface Candidate<T> {
  id: string;
  run: () => Promise<Slice<T>>;
}

export interface CandidateResult<T> {
  slices: Slice<T>[];
  /** Each slice's rate over the mean rate of the reference slices around it. */
  ratios: number[];
  /** Indices (into `reference`) of the reference slices just before and after each slice. */
  around: [number, number][];
}

export interface Interleaved<R, C> {
  reference: Slice<R>[];
  candidates: Map<string, CandidateResult<C>>;
}

export async function interleave<R, C>(
  reference: () => Promise<Slice<R>>,
  candidates: Candidate<C>[],
  rounds: number,
  onSlice: (label: string) => void = () => {},
): Promise<Interleaved<R, C>> {
  const refs: Slice<R>[] = [];
  const results = new Map<string, CandidateResult<C>>(candidates.map((c) => [c.id, { slices: [], ratios: [], around: [] }]));
  onSlice('reference');
  refs.push(await reference());
  for (let round = 0; round < rounds; round++) {
    for (const candidate of candidates) {
      onSlice(candidate.id);
      const slice = await candidate.run();
      onSlice('reference');
      const after = await reference();
      const before = refs[refs.length - 1];
      refs.push(after);
      const result = results.get(candidate.id)!;
      result.slices.push(slice);
      result.ratios.push(slice.rate / ((before.rate + after.rate) / 2));
      result.around.push([refs.length - 2, refs.length - 1]);
    }
  }
  return { reference: refs, candidates: results };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** "min–max" of a list of numbers, with `digits` decimals. */
export function spread(values: number[], digits = 2): string {
  if (values.length === 0) return '—';
  return `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
}
