/**
 * @module engines/sentences
 * Splits text into the sentences an in-process engine speaks one job at a time, with
 * the platform's Unicode sentence rules (`Intl.Segmenter`, UAX #29). Runs of
 * text without sentence punctuation are cut at clause punctuation or spaces
 * once they grow long, so a wall of text still streams and still cancels. An
 * engine may ask for shorter pieces (`clauseChars`): a sentence longer than
 * that is cut at clause punctuation only (a comma, semicolon, colon or dash),
 * where a speaker pauses anyway, and kept whole when it has none. A
 * request's first sentence can have a short head cut off (`splitHead`), so its
 * first audio waits for a few words, not a sentence.
 */

/** Longest piece of text generated in one call. */
export const MAX_SENTENCE_CHARS = 400;

const segmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });

/**
 * The sentences of `text`, trimmed. `clauseChars` (at most MAX_SENTENCE_CHARS): a longer sentence
 * is cut at clause punctuation so that each piece holds at most that many characters where it can.
 */
export function* sentences(text: string, clauseChars = MAX_SENTENCE_CHARS): Generator<string> {
  for (const sentence of sentenceSpans(text, clauseChars)) yield sentence.text;
}

/** `sentences`, each with where it starts in `text` (UTF-16 code units). */
export function* sentenceSpans(text: string, clauseChars = MAX_SENTENCE_CHARS): Generator<{ text: string; at: number }> {
  for (const { segment, index } of segmenter.segment(text)) {
    let at = index;
    for (const piece of bounded(segment, Math.min(clauseChars, MAX_SENTENCE_CHARS))) {
      if (/[\p{L}\p{N}]/u.test(piece)) yield { text: piece.trim(), at: at + piece.length - piece.trimStart().length };
      at += piece.length;
    }
  }
}

/** Clause punctuation followed by a space: a comma, semicolon or colon, or a dash standing between spaces. */
const CLAUSE_BREAK = /[,;:](?=\s)|\s[\u2013\u2014-](?=\s)/gu;

/** Where a piece of `text` ends at its last clause break within `limit` characters, past a quarter of it; -1 when none. */
function clauseCut(text: string, limit: number): number {
  let cut = -1;
  for (const match of text.slice(0, limit).matchAll(CLAUSE_BREAK)) {
    const end = match.index + match[0].length;
    if (end > limit / 4) cut = end;
  }
  return cut;
}

function* bounded(sentence: string, clauseChars: number): Generator<string> {
  let rest = sentence;
  while (rest.trimEnd().length > clauseChars) {
    let at = clauseCut(rest, clauseChars);
    if (at < 0 && rest.length > MAX_SENTENCE_CHARS) {
      // Past the hard bound anything goes: clause punctuation, else a space, else mid-word.
      const window = rest.slice(0, MAX_SENTENCE_CHARS);
      const space = window.lastIndexOf(' ');
      at = clauseCut(rest, MAX_SENTENCE_CHARS);
      if (at < 0) at = space > MAX_SENTENCE_CHARS / 4 ? space : MAX_SENTENCE_CHARS;
    }
    if (at < 0) break;
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
 * HEAD_MAX_WORDS words (where the engine would pause anyway), else after HEAD_WORDS words
 * (`betweenWords: false`: no cut then). Null for a sentence of HEAD_MIN_SENTENCE_WORDS words or fewer.
 */
export function splitHead(sentence: string, { betweenWords = true }: { betweenWords?: boolean } = {}): SplitSentence | null {
  const words = [...sentence.matchAll(/\S+/gu)];
  if (words.length <= HEAD_MIN_SENTENCE_WORDS) return null;
  const cutAt = (last: number, atPunctuation: boolean): SplitSentence => {
    const end = words[last].index! + words[last][0].length;
    return { head: sentence.slice(0, end), rest: sentence.slice(words[last + 1].index!), atPunctuation };
  };
  for (let i = 0; i < Math.min(HEAD_MAX_WORDS, words.length - 2); i++) {
    if (CLAUSE_END.test(words[i][0])) return cutAt(i, true);
  }
  return betweenWords ? cutAt(HEAD_WORDS - 1, false) : null;
}
