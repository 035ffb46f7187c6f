/**
 * @module synthesis/text-map
 * Text an engine is given, with where each part of it came from in the
 * transcript: copied stretches map character by character, while an
 * expansion (a dictionary alias, a spelled-out run) stands for its original
 * as a whole. Word timestamps use it to bring an engine's word positions
 * back to the client's own words (`word-align.ts`). Offsets are UTF-16 code
 * units, as JavaScript strings index them.
 */

interface Span {
  /** The range in `text`. */
  from: number;
  to: number;
  /** The range of the transcript it came from. */
  sourceFrom: number;
  sourceTo: number;
  /** Stands for the whole source range (an expansion), rather than character by character. */
  whole: boolean;
}

export class MappedText {
  text = '';
  private readonly spans: Span[] = [];

  /** Text copied from the transcript at `sourceAt`. */
  static copied(text: string, sourceAt: number): MappedText {
    const mapped = new MappedText();
    mapped.copy(text, sourceAt);
    return mapped;
  }

  /** Appends text copied from the transcript at `sourceAt`, character by character. */
  copy(text: string, sourceAt: number): this {
    if (!text) return this;
    const last = this.spans.at(-1);
    // A copy that continues the last one joins it: runs stay few.
    if (last && !last.whole && last.to === this.text.length && last.sourceTo === sourceAt) {
      last.to += text.length;
      last.sourceTo += text.length;
    } else {
      this.spans.push({ from: this.text.length, to: this.text.length + text.length, sourceFrom: sourceAt, sourceTo: sourceAt + text.length, whole: false });
    }
    this.text += text;
    return this;
  }

  /** Appends text that stands, as a whole, for the transcript's `[sourceFrom, sourceTo)`. */
  replace(text: string, sourceFrom: number, sourceTo: number): this {
    if (!text) return this;
    this.spans.push({ from: this.text.length, to: this.text.length + text.length, sourceFrom, sourceTo, whole: true });
    this.text += text;
    return this;
  }

  /** Appends text that comes from nowhere in the transcript (a pause between spelled groups). */
  insert(text: string): this {
    this.text += text;
    return this;
  }

  /** Appends `[from, to)` of `other`, keeping where it came from. */
  append(other: MappedText, from = 0, to = other.text.length): this {
    let at = from;
    for (const span of other.spans) {
      if (span.to <= at || span.from >= to) continue;
      if (span.from > at) this.insert(other.text.slice(at, span.from));
      const end = Math.min(to, span.to);
      const piece = other.text.slice(Math.max(at, span.from), end);
      if (span.whole) this.replace(piece, span.sourceFrom, span.sourceTo);
      else this.copy(piece, span.sourceFrom + Math.max(at, span.from) - span.from);
      at = end;
    }
    if (at < to) this.insert(other.text.slice(at, to));
    return this;
  }

  /** The same text, standing for the same characters `by` further on in the transcript (a dialogue's turn within the joined turns). */
  shifted(by: number): MappedText {
    const out = new MappedText();
    out.text = this.text;
    for (const span of this.spans) out.spans.push({ ...span, sourceFrom: span.sourceFrom + by, sourceTo: span.sourceTo + by });
    return out;
  }

  /** Each stretch of the text and the stretch of the transcript it came from, in text order (UTF-16 offsets); inserted text has none. */
  runs(): { from: number; to: number; sourceFrom: number; sourceTo: number; whole: boolean }[] {
    return this.spans.map(({ from, to, sourceFrom, sourceTo, whole }) => ({ from, to, sourceFrom, sourceTo, whole }));
  }

  /** Where `[from, to)` of the text came from in the transcript; null when none of it did. */
  toSource(from: number, to: number): { from: number; to: number } | null {
    let sourceFrom = Infinity;
    let sourceTo = -Infinity;
    const end = Math.max(to, from + 1);
    // Spans are in text order: start at the first that ends after `from`.
    let low = 0;
    let high = this.spans.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.spans[mid].to <= from) low = mid + 1;
      else high = mid;
    }
    for (let i = low; i < this.spans.length && this.spans[i].from < end; i++) {
      const span = this.spans[i];
      if (span.whole) {
        sourceFrom = Math.min(sourceFrom, span.sourceFrom);
        sourceTo = Math.max(sourceTo, span.sourceTo);
      } else {
        sourceFrom = Math.min(sourceFrom, span.sourceFrom + Math.max(from, span.from) - span.from);
        sourceTo = Math.max(sourceTo, span.sourceFrom + Math.min(end, span.to) - span.from);
      }
    }
    return sourceFrom === Infinity ? null : { from: sourceFrom, to: sourceTo };
  }
}
