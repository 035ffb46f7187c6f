/**
 * @module synthesis/word-align.test
 * Aligning an engine's words to the client's: which words there are (tags
 * removed, punctuation attached), finer and coarser engine units, words with
 * no unit, text that arrives in pieces, and offsets mapped back through
 * dictionary aliases and `<spell>`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WordTiming } from '../engines/engine.js';
import { BUILTIN_MODELS } from '../models/builtin.js';
import { speechSegments, type SegmentContext } from './segments.js';
import { locate, requestWords, segmentUnits, WordAligner, type WordUnit } from './word-align.js';

/** A unit over the first occurrence of `piece` in `text` at or after `after`. */
function unit(text: string, piece: string, start: number, end: number, after = 0): WordUnit {
  const from = text.indexOf(piece, after);
  assert.ok(from >= 0, piece);
  return { start, end, from, to: from + piece.length };
}

const words = (timings: WordTiming[]) => timings.map((w) => w.word);
const round = (timings: WordTiming[]) => timings.map((w) => [w.word, Math.round(w.start * 1000) / 1000, Math.round(w.end * 1000) / 1000]);

describe('WordAligner', () => {
  it("names the transcript's whitespace tokens, punctuation attached, tags removed (a <break> separates)", () => {
    const text = 'Hi, <emotion value="calm"/>Bob.<break time="1s"/>Code <spell>A1</spell>. Done!';
    const aligner = new WordAligner();
    aligner.addText(text);
    // One unit at the very end: everything before it is released, the rest on settle.
    const out = [...aligner.add([unit(text, 'Done', 1, 2)]), ...aligner.settle(2, true)];
    assert.deepEqual(words(out), ['Hi,', 'Bob.', 'Code', 'A1.', 'Done!']);
  });

  it('a word spans its units from the first to the last; a unit over several words is shared by characters', () => {
    const text = 'Call 555-0199 it is';
    const aligner = new WordAligner();
    aligner.addText(text);
    const out = [
      ...aligner.add([unit(text, 'Call', 0, 0.3), unit(text, '555', 0.3, 1), unit(text, '55-', 1, 1.2, 6), unit(text, '0199', 1.2, 2)]),
      ...aligner.add([unit(text, 'it is', 2, 2.4)]),
      ...aligner.settle(2.4, true),
    ];
    assert.deepEqual(round(out), [['Call', 0, 0.3], ['555-0199', 0.3, 2], ['it', 2, 2.2], ['is', 2.2, 2.4]]);
  });

  it('a word with no unit of its own gets the time between its neighbours, or shares an abutting unit', () => {
    const text = 'one 😀 two as it is three';
    const aligner = new WordAligner();
    aligner.addText(text);
    const out = [
      ...aligner.add([unit(text, 'one', 0, 0.5), unit(text, 'two', 0.9, 1.2)]),
      // "as" runs on into "three": "it" and "is" share its span.
      ...aligner.add([unit(text, 'as', 1.2, 1.6), unit(text, 'three', 1.6, 2)]),
      ...aligner.settle(2, true),
    ];
    assert.deepEqual(round(out), [['one', 0, 0.5], ['😀', 0.5, 0.9], ['two', 0.9, 1.2], ['as', 1.2, 1.333], ['it', 1.333, 1.467], ['is', 1.467, 1.6], ['three', 1.6, 2]]);
    // Trailing words with no unit end with the audio.
    const tail = new WordAligner();
    tail.addText('alpha beta gamma');
    assert.deepEqual(round([...tail.add([{ start: 0, end: 1, from: 0, to: 5 }]), ...tail.settle(3, true)]), [['alpha', 0, 1], ['beta', 1, 1.889], ['gamma', 1.889, 3]]);
  });

  it('starts never go backwards and no word ends before it starts, whatever the units say', () => {
    const text = 'a b c d';
    const aligner = new WordAligner();
    aligner.addText(text);
    const out = [
      ...aligner.add([unit(text, 'a', 1, 0.5), unit(text, 'b', 0.2, 0.3)]),
      // A unit behind what was handed out changes nothing.
      ...aligner.add([unit(text, 'a', 5, 6), unit(text, 'c', 0.1, 0.2)]),
      ...aligner.settle(0, true),
    ];
    assert.deepEqual(words(out), ['a', 'b', 'c', 'd']);
    for (const [i, w] of out.entries()) {
      assert.ok(w.end >= w.start, JSON.stringify(w));
      if (i > 0) assert.ok(w.start >= out[i - 1].start, JSON.stringify(out));
    }
  });

  it('text that arrives in pieces: a word split across them is one word, held until it is complete', () => {
    const aligner = new WordAligner();
    const first = aligner.addText('Hel');
    assert.deepEqual(aligner.add([{ start: 0, end: 0.3, from: first, to: first + 3 }]), []);
    assert.deepEqual(aligner.settle(0.3, false), [], 'the word may go on');
    const second = aligner.addText('lo there');
    const out = [...aligner.add([{ start: 0.3, end: 0.5, from: second, to: second + 2 }, { start: 0.5, end: 0.9, from: second + 3, to: second + 8 }]), ...aligner.settle(0.9, false)];
    assert.deepEqual(round(out), [['Hello', 0, 0.5]], '"there" may still go on');
    assert.deepEqual(round(aligner.settle(0.9, true)), [['there', 0.5, 0.9]]);
  });

  it('a flush ends the word it cuts', () => {
    const aligner = new WordAligner();
    aligner.addText('Hello');
    aligner.add([{ start: 0, end: 0.4, from: 0, to: 5 }]);
    assert.deepEqual(aligner.settle(0.4, false), []);
    aligner.endWord();
    assert.deepEqual(words(aligner.settle(0.4, false)), ['Hello']);
    aligner.addText('again');
    assert.deepEqual(words([...aligner.add([{ start: 0.4, end: 0.8, from: 5, to: 10 }]), ...aligner.settle(0.8, true)]), ['again']);
  });

  it('an engine that reports no units gets no timestamps rather than guesses', () => {
    const aligner = new WordAligner();
    aligner.addText('Nothing timed here.');
    assert.deepEqual(aligner.settle(2, true), []);
  });
});

describe('segmentUnits', () => {
  const context: SegmentContext = { model: BUILTIN_MODELS['gepard-1.0'], settings: { speed: 1, volume: 1 }, streaming: true, pronunciation: null, voiceGain: 1 };

  /** Engine words for each whitespace token of the segment's text, with positions, 0.1 s each. */
  function engineWords(text: string, positions = true): WordTiming[] {
    return [...text.matchAll(/\S+/gu)].map((m, i) => ({ word: m[0], start: i * 0.1, end: (i + 1) * 0.1, ...(positions ? { from: m.index!, to: m.index! + m[0].length } : {}) }));
  }

  function align(transcript: string, pronunciation: SegmentContext['pronunciation'] = null, positions = true): string[] {
    const track = requestWords(transcript);
    const out: WordTiming[] = [];
    let seconds = 0;
    for (const segment of speechSegments(transcript, { ...context, pronunciation })) {
      if (segment.kind !== 'text') continue;
      const units = segmentUnits(engineWords(segment.text, positions), segment.source, track, seconds, { at: 0 });
      out.push(...track.aligner.add(units));
      seconds += 1;
    }
    out.push(...track.aligner.settle(seconds, true));
    return words(out);
  }

  it('dictionary aliases and <spell> runs map back to the word they replaced, whole', () => {
    const pronunciation = [{ text: 'Voicegate', alias: 'voice gate' }, { text: 'NASA', alias: 'N A S A' }];
    assert.deepEqual(align('Voicegate talks to NASA, daily.', pronunciation), ['Voicegate', 'talks', 'to', 'NASA,', 'daily.']);
    assert.deepEqual(align('Your code is <spell>XQ-7</spell>. Thanks', pronunciation), ['Your', 'code', 'is', 'XQ-7.', 'Thanks']);
  });

  it("words without positions (a remote server's) are found in the text by what they say", () => {
    assert.deepEqual(align('Peer speaks "words" <break time="1s"/>and more.', null, false), ['Peer', 'speaks', '"words"', 'and', 'more.']);
    assert.deepEqual(locate('a "quoted" word', 'quoted', 0), { from: 3, to: 9 });
    assert.deepEqual(locate('ab ab', 'ab', 1), { from: 3, to: 5 });
    assert.equal(locate('ab', 'zz', 0), null);
  });
});

describe('what was spoken for each word', () => {
  it('each word carries what the engine was given for it: a rewritten token once, with the first word it covers', () => {
    const text = 'Ich zahle 3,50 € für 21 Äpfel.';
    const context: SegmentContext = { model: BUILTIN_MODELS['gepard-1.0'], settings: { speed: 1, volume: 1 } as SegmentContext['settings'], streaming: false, pronunciation: null, voiceGain: 1, normalize: true, language: 'de' };
    const [segment] = speechSegments(text, context);
    assert.equal(segment.kind === 'text' && segment.text, 'Ich zahle drei Euro fünfzig für einundzwanzig Äpfel.');
    if (segment.kind !== 'text') return;
    const aligner = new WordAligner();
    aligner.addText(text);
    aligner.addSpoken(segment.source, 0);
    const out = [...aligner.add([unit(text, 'Ich', 0, 0.2), unit(text, 'Äpfel', 1, 1.4)]), ...aligner.settle(1.5, true)];
    assert.deepEqual(
      out.map((w) => [w.word, w.spoken]),
      [['Ich', undefined], ['zahle', undefined], ['3,50', 'drei Euro fünfzig'], ['€', ''], ['für', undefined], ['21', 'einundzwanzig'], ['Äpfel.', undefined]],
    );
  });
});
