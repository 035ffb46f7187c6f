/**
 * @module engines/sentences
 * Splits text into the sentences an in-process engine speaks one job at a time, with
 * the platform's Unicode sentence rules (`Intl.Segmenter`, UAX #29). Runs of
 * text without sentence punctuation are cut at clause punctuation or spaces
 * once they grow long, so a wall of text still streams and still cancels. A
 * first sentence that would wait for a busy engine can have a short head cut
 * off (`splitHead`), so its first audio waits for a few words, not a sentence.
 */

/** Longest piece of text generated in one call. */
export const MAX_SENTENCE_CHARS = 400;

const segmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });

export function* sentences(text: string): Generator<string> {
  for (const sentence of sentenceSpans(text)) yield sentence.text;
}

/** `sentences`, each with where it starts in `text` (UTF-16 code units). */
export function* sentenceSpans(text: string): Generator<{ text: string; at: number }> {
  for (const { segment, index } of segmenter.segment(text)) {
    let at = index;
    for (const piece of bounded(segment)) {
      if (/[\p{L}\p{N}]/u.test(piece)) yield { text: piece.trim(), at: at + piece.length - piece.trimStart().length };
      at += piece.length;
    }
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

/** Words in a head cut at a space (see splitHead). */
export const HEAD_WORDS = 4;
/** A clause punctuation mark ends the head if it comes within this many words. */
export const HEAD_MAX_WORDS = 8;
/** Sentences of this many words or fewer are not cut: the whole is short. */
export const HEAD_MIN_SENTENCE_WORDS = HEAD_WORDS + 2;

/** A sentence cut in two; `atPunctuation` is false for a cut at a space inside a clause. */
export interface SplitSentence {
  head: string;
  rest: string;
  atPunctuation: boolean;
}

const CLAUSE_END = /[,;:\u2013\u2014]["'\u201d\u2019)\]]*$/u;

/**
 * Cuts a short head off `sentence`: after its first clause punctuation if that comes within
 * HEAD_MAX_WORDS words (where the engine would pause anyway), else after HEAD_WORDS words.
 * Null for a sentence of HEAD_MIN_SENTENCE_WORDS words or fewer.
 */
export function splitHead(sentence: string): SplitSentence | null {
  const words = [...sentence.matchAll(/\S+/gu)];
  if (words.length <= HEAD_MIN_SENTENCE_WORDS) return null;
  const cutAt = (last: number, atPunctuation: boolean): SplitSentence => {
    const end = words[last].index! + words[last][0].length;
    return { head: sentence.slice(0, end), rest: sentence.slice(words[last + 1].index!), atPunctuation };
  };
  for (let i = 0; i < Math.min(HEAD_MAX_WORDS, words.length - 2); i++) {
    if (CLAUSE_END.test(words[i][0])) return cutAt(i, true);
  }
  return cutAt(HEAD_WORDS - 1, false);
}
