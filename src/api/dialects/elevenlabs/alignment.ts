/**
 * @module api/elevenlabs/alignment
 * ElevenLabs' character alignment, made from the client's words as the
 * pipeline times them (`synthesis/word-align`: the transcript's own words,
 * mapped back through tags, SSML, dictionary aliases and `<spell>`). Each
 * word's characters share its time evenly; the space between two words
 * spans the gap between them. So the characters spell the text that was
 * sent, its words separated by single spaces, and a word reaches a client
 * once, in order, whichever message it arrives in. `normalized_alignment`
 * is made the same way from what the engine was given for each word
 * (`WordTiming.spoken`: "einundzwanzig" for "21"), a word read with the one
 * before it adding no characters.
 */
import type { WordTiming } from '../../../engines/engine.js';

export interface CharacterTimes {
  characters: string[];
  starts: number[];
  ends: number[];
  /** Where each word's first character is in `characters`. */
  wordAt: number[];
  /** The same words' times over the text the engine was given (`normalized_alignment`). */
  normalized?: CharacterTimes;
}

/** The characters of a stream of words, in order; a word after the first is preceded by its space. */
export class CharacterAligner {
  private previousEnd: number | null = null;
  private spoken: CharacterAligner | null = null;

  /** The characters of these words (seconds on the words' clock), and in `normalized` those of what was spoken for them. */
  next(words: readonly WordTiming[]): CharacterTimes & { normalized: CharacterTimes } {
    this.spoken ??= new CharacterAligner();
    const spoken = words.filter((w) => w.spoken !== '').map((w) => (w.spoken === undefined ? w : { ...w, word: w.spoken }));
    return { ...this.characters(words), normalized: this.spoken.characters(spoken) };
  }

  private characters(words: readonly WordTiming[]): CharacterTimes {
    const out: CharacterTimes = { characters: [], starts: [], ends: [], wordAt: [] };
    for (const word of words) {
      if (this.previousEnd !== null) {
        out.characters.push(' ');
        out.starts.push(this.previousEnd);
        out.ends.push(Math.max(this.previousEnd, word.start));
      }
      const chars = Array.from(word.word);
      out.wordAt.push(out.characters.length);
      const step = (word.end - word.start) / Math.max(1, chars.length);
      chars.forEach((ch, i) => {
        out.characters.push(ch);
        out.starts.push(word.start + i * step);
        out.ends.push(word.start + (i + 1) * step);
      });
      this.previousEnd = Math.max(word.end, this.previousEnd ?? 0);
    }
    return out;
  }
}

const seconds = (t: number) => Math.round(t * 1000) / 1000;

/** The REST shape: `{characters, character_start_times_seconds, character_end_times_seconds}`. */
export function restAlignment(times: CharacterTimes) {
  return {
    characters: times.characters,
    character_start_times_seconds: times.starts.map(seconds),
    character_end_times_seconds: times.ends.map(seconds),
  };
}

/**
 * The WebSocket shape, `{chars, charStartTimesMs, charDurationsMs}`, in whole milliseconds counted
 * from `base` (seconds): ElevenLabs' times are relative to the message.
 */
export function socketAlignment(times: CharacterTimes, base: number) {
  return {
    chars: times.characters,
    charStartTimesMs: times.starts.map((t) => Math.round((t - base) * 1000)),
    charDurationsMs: times.starts.map((t, i) => Math.round((times.ends[i] - t) * 1000)),
  };
}

/**
 * A dialogue's `voice_segments`: each run of words of one turn, with its voice, its time (its first
 * word's start to its last word's end) and its characters' places in `times`, the alignment the
 * same words made (`[character_start_index, character_end_index)`, the space before it left out).
 */
export function voiceSegments(words: readonly WordTiming[], times: CharacterTimes) {
  const segments: { voice_id: string; start_time_seconds: number; end_time_seconds: number; character_start_index: number; character_end_index: number; dialogue_input_index: number }[] = [];
  words.forEach((word, i) => {
    if (word.voice === undefined || word.turn === undefined) return;
    const from = times.wordAt[i];
    const to = from + Array.from(word.word).length;
    const last = segments.at(-1);
    if (last && last.dialogue_input_index === word.turn) {
      last.end_time_seconds = seconds(word.end);
      last.character_end_index = to;
    } else {
      segments.push({ voice_id: word.voice, start_time_seconds: seconds(word.start), end_time_seconds: seconds(word.end), character_start_index: from, character_end_index: to, dialogue_input_index: word.turn });
    }
  });
  return segments;
}
