import assert from 'node:assert/strict';
import { test } from 'node:test';
import { captionWords, readSrt, readVtt, type ReadCue } from '../../test/helpers/captions.js';
import { buildCues, type CaptionWord } from './cues.js';
import { captionFormat, captionLineChars, captions, escapeVtt, timestamp } from './render.js';
import { displayWidth } from './width.js';

/** Words spoken at a steady pace: each word's time by its length, a pause after a clause and a longer one after a sentence. */
function speak(text: string, voice?: string, from = 0): CaptionWord[] {
  let at = from;
  return text
    .split(/\s+/)
    .filter(Boolean)
    .map((word) => {
      const start = at;
      const end = start + 0.08 + 0.06 * [...word].length;
      at = end + (/[.!?]$/.test(word) ? 0.5 : /[,;:]$/.test(word) ? 0.2 : 0.05);
      return { word, start, end, ...(voice ? { voice } : {}) };
    });
}

const LONG =
  'Voicegate reads long text aloud. It was a bright cold day in April, and the clocks were striking thirteen, while the wind swept little eddies of dust and torn paper into spirals along the pavement, which nobody had swept for weeks. Yes. ' +
  'The hallway smelt of boiled cabbage and old rag mats; at one end of it a coloured poster, too large for indoor display, had been tacked to the wall. ' +
  'It depicted simply an enormous face, more than a metre wide: the face of a man of about forty-five, with a heavy black moustache and ruggedly handsome features. ' +
  'Winston made for the stairs. It was no use trying the lift. Even at the best of times it was seldom working, and at present the electric current was cut off during daylight hours. ' +
  'Supercalifragilisticexpialidociousnessandmoreletterswithoutanyspaceatallforaverylongwaytogo is one word.';

function assertRules(cues: readonly ReadCue[], max: number, duration: number): void {
  cues.forEach((cue, index) => {
    const lines = cue.text.split('\n');
    assert.ok(lines.length <= 2, `cue ${index} has ${lines.length} lines: ${cue.text}`);
    for (const line of lines) assert.ok(displayWidth(line) <= max, `cue ${index}'s line is ${displayWidth(line)} columns wide (max ${max}): ${line}`);
    const length = cue.end - cue.start;
    assert.ok(length <= 7000, `cue ${index} lasts ${length} ms`);
    const next = cues[index + 1];
    // Shorter than 1 s only where the next cue (or the audio's end) leaves no more time.
    if (length < 1000) assert.ok(next ? next.start === cue.end : cue.end === Math.round(duration * 1000), `cue ${index} lasts ${length} ms with room after it`);
    if (next) assert.ok(next.start >= cue.end, `cue ${index + 1} overlaps cue ${index}`);
    assert.ok(cue.start >= 0 && cue.end <= Math.round(duration * 1000), `cue ${index} lies outside the audio`);
  });
}

test('a long text: sentences and clauses end cues, two lines of 42 columns, 1–7 s, no overlap, every word once in order', () => {
  const words = speak(LONG);
  const duration = words.at(-1)!.end + 0.3;
  const vtt = captions(words, 'vtt', { duration });
  const srt = captions(words, 'srt', { duration });
  const fromVtt = readVtt(vtt);
  const fromSrt = readSrt(srt);
  assert.deepEqual(fromSrt, fromVtt, 'SRT and WebVTT carry the same cues');
  assert.ok(fromVtt.length > 10);
  assertRules(fromVtt, 42, duration);
  assert.deepEqual(captionWords(fromVtt).join(' '), LONG.replace(/\S{43,}/, (long) => long.match(/.{1,42}/g)!.join(' ')).trim());
  // A sentence end always ends a cue but where the sentence lasts less than 1 s ("Yes."): it shares its cue with the next one.
  for (const cue of fromVtt) if (/[.!?]\s\S/.test(cue.text)) assert.match(cue.text, /^Yes\. The hallway/, `a sentence ends inside a cue: ${cue.text}`);
  assert.ok(fromVtt.some((cue) => cue.text.startsWith('Yes. The hallway')), 'the short sentence joins the next');
  assert.ok(fromVtt.some((cue) => cue.text.endsWith('striking thirteen,')), 'a long sentence breaks at a comma');
  assert.ok(fromVtt.some((cue) => cue.text.endsWith('old rag mats;')), 'a long sentence breaks at a semicolon');
  // First word's start, last word's end (or 1 s, the next cue allowing).
  assert.equal(fromVtt[0].start, 0);
  assert.equal(fromSrt.at(-1)!.end >= Math.round(words.at(-1)!.end * 1000), true);
});

test('WebVTT: header, timings, escaped &, < and >; SRT numbered from 1', () => {
  const words = speak('Tom & Jerry <3 x>y, and a --> b.');
  const vtt = captions(words, 'vtt');
  assert.match(vtt, /^WEBVTT\n\n00:00:00\.000 --> 00:00:0\d\.\d{3}\n/);
  assert.ok(vtt.includes('Tom &amp; Jerry &lt;3 x&gt;y,'), vtt);
  assert.ok(!vtt.includes('-->', vtt.indexOf('\n', vtt.indexOf('-->'))), 'no arrow in cue text');
  assert.deepEqual(captionWords(readVtt(vtt)), ['Tom', '&', 'Jerry', '<3', 'x>y,', 'and', 'a', '-->', 'b.']);
  const srt = captions(words, 'srt');
  assert.match(srt, /^1\n00:00:00,000 --> 00:00:0\d,\d{3}\nTom & Jerry <3 x>y, and a --> b\.\n$/);
  assert.equal(escapeVtt('a<b>&c'), 'a&lt;b&gt;&amp;c');
  assert.equal(timestamp(3_723_004, ','), '01:02:03,004');
  assert.equal(timestamp(360_000_000, '.'), '100:00:00.000');
});

test('Chinese and Japanese without spaces break into lines no wider than the limit, nothing lost or added', () => {
  const texts = [
    '今天天气很好，我们一起去公园散步吧。公园里有很多人在跑步、打太极拳和放风筝，孩子们在草地上玩耍，老人们坐在长椅上聊天。这真是一个美好的星期天。',
    '吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。',
  ];
  for (const text of texts) {
    const words: CaptionWord[] = [{ word: text, start: 0.2, end: 0.2 + [...text].length * 0.18 }];
    const duration = words[0].end + 0.5;
    for (const max of [20, 42]) {
      const cues = readVtt(captions(words, 'vtt', { maxLineChars: max, duration }));
      assert.ok(cues.length > 1);
      assertRules(cues, max, duration);
      assert.equal(cues.map((cue) => cue.text.replace(/\n/g, '')).join(''), text);
      assert.deepEqual(readSrt(captions(words, 'srt', { maxLineChars: max, duration })), cues);
      // Cues end at sentence ends where they can: the first sentence is whole in its cue.
      assert.ok(cues.some((cue) => cue.text.replace(/\n/g, '').endsWith('。')));
    }
  }
  assert.equal(displayWidth('吾輩は猫'), 8);
  assert.equal(displayWidth('ａｂ'), 4);
  assert.equal(displayWidth('é'), 1);
  assert.equal(displayWidth('👍🏽'), 2);
});

test('a dialogue names its speakers: <v Name> in WebVTT, "Name: " in SRT; a new speaker starts a cue', () => {
  const first = speak('Hello there, how are you today?', 'sarah');
  const second = speak('Fine, thanks.', 'tom', first.at(-1)!.end + 0.1);
  const third = speak('Good to hear it.', 'sarah', second.at(-1)!.end + 0.1);
  const names: Record<string, string> = { sarah: 'Sarah', tom: 'Tom' };
  const words = [...first, ...second, ...third];
  const options = { speakerName: (voice: string) => names[voice] };
  const vtt = readVtt(captions(words, 'vtt', options));
  assert.deepEqual(
    vtt.map((cue) => [cue.speaker, cue.text]),
    [
      ['Sarah', 'Hello there, how are you today?'],
      ['Tom', 'Fine, thanks.'],
      ['Sarah', 'Good to hear it.'],
    ],
  );
  const srt = readSrt(captions(words, 'srt', options));
  assert.deepEqual(srt.map((cue) => cue.text), ['Sarah: Hello there, how are you today?', 'Tom: Fine, thanks.', 'Sarah: Good to hear it.']);
  assert.deepEqual(srt.map((cue) => [cue.start, cue.end]), vtt.map((cue) => [cue.start, cue.end]));
});

test('a cue is never cut from nothing: words with no time between them, a last word at the audio end', () => {
  const words: CaptionWord[] = [
    { word: 'One.', start: 1, end: 1 },
    { word: 'Two.', start: 1, end: 1 },
    { word: 'Three', start: 2, end: 2.5 },
  ];
  const cues = buildCues(words, { duration: 2.5, maxLineChars: 20 });
  for (const [index, cue] of cues.entries()) {
    assert.ok(cue.end > cue.start, `cue ${index}: ${cue.start}–${cue.end}`);
    if (cues[index + 1]) assert.ok(cues[index + 1].start >= cue.end);
    assert.ok(cue.end <= 2500);
  }
  readVtt(captions(words, 'vtt', { duration: 2.5 }));
  assert.deepEqual(buildCues([]), []);
  assert.equal(captions([], 'vtt'), 'WEBVTT\n');
});

test('format and maxLineChars: vtt by default, srt, else a registry code', () => {
  assert.equal(captionFormat(undefined), 'vtt');
  assert.equal(captionFormat('srt'), 'srt');
  assert.throws(() => captionFormat('ass'), { code: 'invalid_caption_format' });
  assert.equal(captionLineChars(undefined), 42);
  assert.equal(captionLineChars('30'), 30);
  for (const bad of [19, 81, 30.5, '3x', true]) assert.throws(() => captionLineChars(bad), { code: 'invalid_caption_options' });
});
