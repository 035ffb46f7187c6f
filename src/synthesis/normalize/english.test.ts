/**
 * @module synthesis/normalize/english.test
 * Runs the normaliser's fixture table (plain text and `say-as`), and checks
 * that rewritten tokens still map back to the client's words.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MappedText } from '../text-map.js';
import { normalizeMapped, normalizeText, sayAs } from './english.js';
import { PLAIN_FIXTURES, SAY_AS_FIXTURES } from './fixtures.js';

describe('English normaliser', () => {
  it('speaks every row of the plain-text table as written there', () => {
    const wrong = PLAIN_FIXTURES.map(([input, spoken]) => [input, normalizeText(input), spoken]).filter(([, got, spoken]) => got !== spoken);
    assert.deepEqual(wrong, []);
  });

  it('speaks every row of the say-as table as written there', () => {
    const wrong = SAY_AS_FIXTURES.map(([text, interpretAs, format, spoken]) => [text, interpretAs, sayAs(text, { interpretAs, format }), spoken]).filter(([, , got, spoken]) => got !== spoken);
    assert.deepEqual(wrong, []);
  });

  it('a say-as reading that does not fit the text gives way to plain reading', () => {
    assert.equal(sayAs('soon', { interpretAs: 'cardinal' }), null);
    assert.equal(sayAs('13/45/2026', { interpretAs: 'date', format: 'mdy' }), null);
    assert.equal(sayAs('x', { interpretAs: 'no-such-reading' }), null);
  });

  it('each rewritten token stands for the token it replaced', () => {
    const text = 'Pay $5.50, call 555-0199 at 2 PM.';
    const out = normalizeMapped(MappedText.copied(text, 10));
    const at = (spoken: string) => {
      const i = out.text.indexOf(spoken);
      assert.ok(i >= 0, spoken);
      const source = out.toSource(i, i + spoken.length)!;
      return text.slice(source.from - 10, source.to - 10);
    };
    assert.equal(at('fifty cents'), '$5.50');
    assert.equal(at('zero one'), '555-0199');
    assert.equal(at('two PM'), '2 PM');
    assert.equal(at('Pay'), 'Pay');
  });

  it('is quick on long text without anything to rewrite and on long digit runs', () => {
    const started = performance.now();
    normalizeText('word '.repeat(20_000));
    normalizeText('1'.repeat(5_000) + ' ' + '9,'.repeat(3_000));
    assert.ok(performance.now() - started < 2000);
  });
});

describe('recent texts', () => {
  it('a repeated text (its matches remembered) reads and maps exactly as the first time, at any offset in its source', () => {
    const text = 'Dr. Lee owes $5.20 at 3 PM, call 555-0100.';
    const first = normalizeMapped(MappedText.copied(text, 0));
    const again = normalizeMapped(MappedText.copied(text, 0));
    assert.equal(again.text, first.text);
    assert.notEqual(again.text, text, 'the text was rewritten');
    for (let i = 0; i <= again.text.length; i++) assert.deepEqual(again.toSource(i, Math.min(i + 3, again.text.length)), first.toSource(i, Math.min(i + 3, first.text.length)));
    // The same text placed elsewhere in a longer source maps to there.
    const shifted = normalizeMapped(MappedText.copied(text, 7));
    assert.equal(shifted.text, first.text);
    assert.deepEqual(shifted.toSource(0, shifted.text.length), { from: 7, to: 7 + text.length });
    // Every fixture, a second time, reads as the table says.
    for (const [input, expected] of PLAIN_FIXTURES) assert.equal(normalizeText(input), expected, input);
  });
});
