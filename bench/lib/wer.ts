/**
 * @module bench/lib/wer
 * Word error rate for the intelligibility benchmark: both texts lower-cased
 * and stripped of punctuation (apostrophes inside words kept, so "it's" and
 * "man's" match a recogniser's dictionary words), then a word-level
 * Levenshtein alignment that counts substitutions, deletions and
 * insertions. References spell numbers out, as recognisers write them.
 */

/** Lower-cased words with punctuation removed; hyphens and other marks split words. */
export function normalizeWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[^\p{L}\p{N}']+/gu, ' ')
    .split(' ')
    .map((word) => word.replace(/^'+|'+$/g, ''))
    .filter((word) => word.length > 0);
}

export interface WordErrors {
  /** Words in the normalised reference. */
  referenceWords: number;
  substitutions: number;
  deletions: number;
  insertions: number;
  /** substitutions + deletions + insertions: the edit distance in words. */
  errors: number;
}

/** Aligns `hypothesis` to `reference` word by word and counts the edits of a minimal alignment. */
export function wordErrors(reference: string, hypothesis: string): WordErrors {
  const ref = normalizeWords(reference);
  const hyp = normalizeWords(hypothesis);
  // cost[i][j]: edits turning ref[0..i) into hyp[0..j).
  const cost: number[][] = Array.from({ length: ref.length + 1 }, (_, i) => Array.from({ length: hyp.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= ref.length; i++) {
    for (let j = 1; j <= hyp.length; j++) {
      const diagonal = cost[i - 1][j - 1] + (ref[i - 1] === hyp[j - 1] ? 0 : 1);
      cost[i][j] = Math.min(diagonal, cost[i - 1][j] + 1, cost[i][j - 1] + 1);
    }
  }
  // Walk back along one minimal path; matches and substitutions first, so the split is stable.
  let substitutions = 0;
  let deletions = 0;
  let insertions = 0;
  let i = ref.length;
  let j = hyp.length;
  while (i > 0 || j > 0) {
    if (i > 0 && j > 0 && cost[i][j] === cost[i - 1][j - 1] + (ref[i - 1] === hyp[j - 1] ? 0 : 1)) {
      if (ref[i - 1] !== hyp[j - 1]) substitutions++;
      i--;
      j--;
    } else if (i > 0 && cost[i][j] === cost[i - 1][j] + 1) {
      deletions++;
      i--;
    } else {
      insertions++;
      j--;
    }
  }
  return { referenceWords: ref.length, substitutions, deletions, insertions, errors: substitutions + deletions + insertions };
}

/** Several sentences' counts taken as one (a corpus-level WER, not a mean of sentence WERs). */
export function sumErrors(list: readonly WordErrors[]): WordErrors {
  const sum = (pick: (e: WordErrors) => number) => list.reduce((n, e) => n + pick(e), 0);
  return {
    referenceWords: sum((e) => e.referenceWords),
    substitutions: sum((e) => e.substitutions),
    deletions: sum((e) => e.deletions),
    insertions: sum((e) => e.insertions),
    errors: sum((e) => e.errors),
  };
}

/** errors ÷ reference words (can exceed 1 with many insertions); an empty reference gives 0 or Infinity. */
export function errorRate(counts: WordErrors): number {
  if (counts.referenceWords === 0) return counts.errors === 0 ? 0 : Infinity;
  return counts.errors / counts.referenceWords;
}
