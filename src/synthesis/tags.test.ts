/**
 * @module synthesis/tags.test
 * Inline tags: what each one becomes, what is text, what is refused, how
 * they count, and where streamed text may be cut around them; and how the
 * segments built from them degrade (speed on streams, dictionaries).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../errors/api-error.js';
import { BUILTIN_MODELS } from '../models/builtin.js';
import { takeClauses } from './clauses.js';
import { speechSegments, type SegmentContext } from './segments.js';
import { countTranscriptCharacters, cutAllowed, parseTags, speakablePrefix, spellOut } from './tags.js';

const text = (t: string, extra: Partial<{ spell: boolean; speed: number; volume: number }> = {}) => ({ kind: 'text', text: t, spell: false, speed: 1, volume: 1, ...extra });

function refused(input: string, pattern: RegExp): void {
  assert.throws(
    () => parseTags(input),
    (err: unknown) => err instanceof ApiError && err.code === 'invalid_tag' && err.status === 400 && pattern.test(err.message),
    input,
  );
}

describe('parseTags', () => {
  it('breaks in seconds and milliseconds, with or without the slash and spaces', () => {
    assert.deepEqual(parseTags('Hello<break time="1s"/>world'), [text('Hello'), { kind: 'break', seconds: 1 }, text('world')]);
    assert.deepEqual(parseTags('a <break time="500ms" /> b'), [text('a '), { kind: 'break', seconds: 0.5 }, text(' b')]);
    assert.deepEqual(parseTags("a<BREAK time='0.25s'>b<break time=1.5s/>"), [text('a'), { kind: 'break', seconds: 0.25 }, text('b'), { kind: 'break', seconds: 1.5 }]);
    assert.deepEqual(parseTags('<break time="1.0s" />'), [{ kind: 'break', seconds: 1 }]);
  });

  it('speed and volume hold until the next one; a closing tag restores the value before', () => {
    assert.deepEqual(parseTags('a <speed ratio="1.5"/>b <volume ratio="0.5"/>c <speed ratio="0.8"/>d'), [
      text('a '),
      text('b ', { speed: 1.5 }),
      text('c ', { speed: 1.5, volume: 0.5 }),
      text('d', { speed: 0.8, volume: 0.5 }),
    ]);
    assert.deepEqual(parseTags('<volume ratio="2">loud</volume> plain'), [text('loud', { volume: 2 }), text(' plain')]);
  });

  it('spell runs; an unclosed one spells to the end; emotion is dropped and the text around it joined', () => {
    assert.deepEqual(parseTags('Code <spell>TKT-48</spell> ok'), [text('Code '), text('TKT-48', { spell: true }), text(' ok')]);
    assert.deepEqual(parseTags('<spell>ab'), [text('ab', { spell: true })]);
    assert.deepEqual(parseTags('I am <emotion value="happy" /> glad'), [text('I am  glad')]);
    assert.deepEqual(parseTags('x</spell>y</break>'), [text('xy')]);
  });

  it('any other markup is text; only the five names are tags', () => {
    for (const plain of ['a < b and c > d', '<b>bold</b>', '<3', '<breaking news>', '<speedy/>', 'x <break time="1s"']) {
      assert.deepEqual(parseTags(plain), [text(plain)], plain);
    }
  });

  it('a tag that cannot be read is refused with 400 invalid_tag naming it', () => {
    refused('<break/>', /<break\/>.*time must be/);
    refused('<break time="forever"/>', /got "forever"/);
    refused('<break time="11s"/>', /at most 10 s/);
    refused('<break time="1"/>', /seconds/);
    refused('<speed ratio="3"/>', /0\.6 to 1\.5/);
    refused('<speed/>', /needs ratio/);
    refused('<volume ratio="loud"/>', /0\.5 to 2/);
    refused('<break time="1s" loud/>', /name="value"/);
  });

  it('whitespace-only text between tags is dropped', () => {
    assert.deepEqual(parseTags('  <break time="1s"/>  '), [{ kind: 'break', seconds: 1 }]);
    assert.deepEqual(parseTags('   '), []);
  });
});

describe('spellOut', () => {
  it('letters upper-cased and separated, a pause for punctuation and spaces', () => {
    assert.equal(spellOut('tkt-4829'), 'T K T, 4 8 2 9');
    assert.equal(spellOut('AB 12'), 'A B, 1 2');
  });
});

describe('countTranscriptCharacters', () => {
  it('code points as sent, a break tag counting one', () => {
    assert.equal(countTranscriptCharacters('Hello<break time="1s"/>world'), 11);
    assert.equal(countTranscriptCharacters('😀<break time="500ms" />😀'), 3);
    // Other tags count as the characters they are.
    assert.equal(countTranscriptCharacters('<spell>ab</spell>'), 17);
    assert.equal(countTranscriptCharacters('<speed ratio="1.2"/>'), 20);
    assert.equal(countTranscriptCharacters('a < b'), 5);
  });
});

describe('cutting streamed text', () => {
  it('never inside a tag or a spell run', () => {
    const t = 'Go <speed ratio="1.5"/> now. Code <spell>A. B.</spell> done. ';
    assert.equal(cutAllowed(t, t.indexOf('1.5') + 2), false);
    assert.equal(cutAllowed(t, t.indexOf('B.')), false);
    assert.equal(cutAllowed(t, t.indexOf('Code')), true);
    assert.deepEqual(takeClauses(t).clauses, ['Go <speed ratio="1.5"/> now. ', 'Code <spell>A. B.</spell> done. ']);
    assert.deepEqual(takeClauses('Read <spell>A. B. C').clauses, []);
  });

  it('what can be spoken now stops before a tag or spell run still arriving', () => {
    assert.equal(speakablePrefix('Hello there'), 11);
    assert.equal(speakablePrefix('Hello <brea'), 6);
    assert.equal(speakablePrefix('Hello <break time="1'), 6);
    assert.equal(speakablePrefix('Hello <'), 6);
    assert.equal(speakablePrefix('Say <spell>AB'), 4);
    assert.equal(speakablePrefix('Say <spell>AB</spell> ok'), 24);
    assert.equal(speakablePrefix('a < b'), 5);
    assert.equal(speakablePrefix('x <bold'), 7);
  });
});

describe('speechSegments', () => {
  const base: SegmentContext = { model: BUILTIN_MODELS['gepard-1.0'], settings: { speed: 1, volume: 1 }, streaming: false, pronunciation: null, voiceGain: 2 };

  it('gains multiply the voice gain, volume and <volume>; speed applies to whole clips, clamped', () => {
    const segments = speechSegments('a <volume ratio="0.5"/>b <speed ratio="1.5"/>c<break time="1s"/>', { ...base, settings: { speed: 1.2, volume: 1.5 } });
    assert.deepEqual(segments.map((s) => (s.kind === 'text' ? { kind: s.kind, text: s.text, speed: s.speed, gain: s.gain } : s)), [
      { kind: 'text', text: 'a ', speed: 1.2, gain: 3 },
      { kind: 'text', text: 'b ', speed: 1.2, gain: 1.5 },
      { kind: 'text', text: 'c', speed: 1.5, gain: 1.5 },
      { kind: 'silence', seconds: 1 },
    ]);
  });

  it('on a stream <speed> has no effect (speed stays 1, as generation_config.speed must)', () => {
    const segments = speechSegments('<speed ratio="0.6"/>slow', { ...base, streaming: true });
    assert.deepEqual(segments.map((s) => (s.kind === 'text' ? { kind: s.kind, text: s.text, speed: s.speed, gain: s.gain } : s)), [{ kind: 'text', text: 'slow', speed: 1, gain: 2 }]);
  });

  it('a dictionary applies to text, not inside tags or spell runs', () => {
    const pronunciation = [{ text: 'time', alias: 'TIME-ALIAS' }, { text: 'AB', alias: 'ALPHA-BRAVO' }, { text: 'ratio', alias: 'RATIO' }];
    const segments = speechSegments('time <break time="1s"/> <speed ratio="1.1"/>AB <spell>AB</spell>', { ...base, pronunciation });
    assert.deepEqual(
      segments.map((s) => (s.kind === 'text' ? s.text : s.kind === 'silence' ? `[${s.seconds}]` : s.name)),
      ['TIME-ALIAS ', '[1]', 'ALPHA-BRAVO ', 'A B'],
    );
  });

  it('nothing to speak gives no segments', () => {
    assert.deepEqual(speechSegments('  <emotion value="calm"/> ', base), []);
  });
});
