/**
 * @module engines/sentences
 * Splits text into the sentences an in-process engine speaks one job at a time, with
 * the platform's Unicode sentence rules (`Intl.Segmenter`, UAX #29). Runs of
 * text without sentence punctuation are cut at clause punctuation or spaces
 * once they grow long, so a wall of text still streams and still cancels.
 */

/** Longest piece of text generated in one call. */
export const MAX_SENTENCE_CHARS = 400;

const segmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });

export function* sentences(text: string): Generator<string> {
  for (const { segment } of segmenter.segment(text)) {
    for (const piece of bounded(segment)) if (/[\p{L}\p{N}]/u.test(piece)) yield piece.trim();
  }
}

function* bounded(sentence: string): Generator<string> {
  let rest = sentence;
  while (rest.length > MAX_SENTENCE_CHARS) {
    const window = rest.slice(0, MAX_SENTENCE_CHARS);
    const cut = Math.max(window.lastIndexOf(', '), window.lastIndexOf('; '), window.lastIndexOf(': '));
    const at = cut > MAX_SENTENCE_CHARS / 4 ? cut + 1 : window.lastIndexOf(' ') > MAX_SENTENCE_CHARS / 4 ? window.lastIndexOf(' ') : MAX_SENTENCE_CHARS;
    yield rest.slice(0, at);
    rest = rest.slice(at);
  }
  yield rest;
}
