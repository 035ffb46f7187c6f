/**
 * @module synthesis/normalize/rules
 * What every language's normaliser shares: rules (a pattern and what a
 * match says) applied to text, earliest match first, then by rule order,
 * no two overlapping; and the rewrite of mapped text by those matches, each
 * spoken form standing, as a whole, for the token it replaced.
 */
import { MappedText } from '../text-map.js';

export interface Rule {
  pattern: RegExp;
  /** What the match says; null leaves it to a later rule. */
  say(match: RegExpExecArray, text: string): string | null;
}

export type Match = { index: number; length: number; say: string };

/** Where `rules` match `text`: earliest first, then by rule order; no two overlap. */
export function findMatches(text: string, rules: readonly Rule[]): Match[] {
  const found: (Match & { order: number })[] = [];
  rules.forEach((r, order) => {
    r.pattern.lastIndex = 0;
    for (const m of text.matchAll(r.pattern)) {
      const said = r.say(m as RegExpExecArray, text);
      if (said !== null && said !== m[0]) found.push({ index: m.index!, length: m[0].length, say: said, order });
    }
  });
  found.sort((a, b) => a.index - b.index || a.order - b.order || b.length - a.length);
  const chosen: Match[] = [];
  let end = 0;
  for (const f of found) {
    if (f.index < end) continue;
    chosen.push({ index: f.index, length: f.length, say: f.say });
    end = f.index + f.length;
  }
  return chosen;
}

/** `input` with each match replaced by what it says, mapped back to the source of the token it replaced. */
export function rewrite(input: MappedText, list: readonly Match[]): MappedText {
  if (list.length === 0) return input;
  const out = new MappedText();
  let at = 0;
  for (const { index, length, say } of list) {
    out.append(input, at, index);
    const source = input.toSource(index, index + length);
    if (source) out.replace(say, source.from, source.to);
    else out.insert(say);
    at = index + length;
  }
  return out.append(input, at);
}
