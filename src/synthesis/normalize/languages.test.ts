/**
 * @module synthesis/normalize/languages.test
 * Each language's table of readings (`locale-fixtures.ts`), written by hand
 * from the language's conventions: every row is read as written there, none
 * with an English number word, and each rewritten token still stands for
 * the words sent. A language without rules keeps its digits.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MappedText } from '../text-map.js';
import { hasNormalizer, normalizeIn, sayAsIn } from './languages.js';
import { LOCALE_FIXTURES } from './locale-fixtures.js';
import { localeFor } from './locales.js';

const spoken = (language: string, text: string) => normalizeIn(language, MappedText.copied(text, 0)).text;

/** English number words, ordinals and "percent": none may be heard in another language. */
const ENGLISH = new Set(
  ('zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen ' +
    'twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion first second third fourth fifth sixth seventh eighth ninth tenth ' +
    'twelfth twentieth hundredth thousandth percent point oh cents dollars euros').split(' '),
);
/** Words that are English and also the language's own (Italian and Portuguese "zero" too). */
const NATIVE: Readonly<Record<string, readonly string[]>> = {
  fr: ['six', 'million', 'second', 'dollars', 'euros'],
  de: ['million'],
  es: ['euros'],
  pt: ['euros', 'zero'],
  it: ['zero'],
};

describe('normalisation in German, French, Spanish, Italian, Portuguese and Dutch', () => {
  for (const [language, rows] of Object.entries(LOCALE_FIXTURES)) {
    it(`${language}: every row is read as written in its table`, () => {
      const wrong = rows.map(([input, expected]) => [input, spoken(language, input), expected]).filter(([, got, expected]) => got !== expected);
      assert.deepEqual(wrong, []);
    });
  }

  it('each language has at least 40 rows', () => {
    for (const language of ['de', 'fr', 'es', 'it', 'pt', 'nl']) {
      const count = Object.entries(LOCALE_FIXTURES).filter(([tag]) => tag.split('-')[0] === language).reduce((sum, [, rows]) => sum + rows.length, 0);
      assert.ok(count >= 40, `${language}: ${count}`);
    }
  });

  it('no English number word is heard in any other language', () => {
    const leaks: string[] = [];
    for (const [language, rows] of Object.entries(LOCALE_FIXTURES)) {
      const exempt = new Set(NATIVE[language.split('-')[0]] ?? []);
      for (const [input] of rows) {
        for (const word of spoken(language, input).toLowerCase().split(/[^\p{L}']+/u)) {
          if (ENGLISH.has(word) && !exempt.has(word)) leaks.push(`${language}: ${input} → ${word}`);
        }
      }
    }
    assert.deepEqual(leaks, []);
  });

  it('each rewritten token stands for the words sent', () => {
    const text = 'Ich habe 21 Äpfel für 3,50 € am 4. Mai gekauft.';
    const out = normalizeIn('de', MappedText.copied(text, 0));
    const source = (words: string) => {
      const at = out.text.indexOf(words);
      assert.ok(at >= 0, words);
      const range = out.toSource(at, at + words.length)!;
      return text.slice(range.from, range.to);
    };
    assert.equal(out.text, 'Ich habe einundzwanzig Äpfel für drei Euro fünfzig am vierten Mai gekauft.');
    assert.equal(source('einundzwanzig'), '21');
    assert.equal(source('drei Euro fünfzig'), '3,50 €');
    assert.equal(source('Äpfel'), 'Äpfel');
  });

  it('regional tags pick their region; main-region tags are the bare language; others fall back to it', () => {
    assert.equal(localeFor('de-DE'), localeFor('de'));
    assert.equal(localeFor('es_ES'), localeFor('es'));
    assert.equal(localeFor('pt-PT'), localeFor('pt'));
    assert.equal(localeFor('de-AT'), localeFor('de'));
    assert.equal(localeFor('pt-BR')?.tag, 'pt-br');
    assert.equal(spoken('pt-BR', 'R$ 3,50'), 'três reais e cinquenta centavos');
    assert.equal(spoken('pt', '3,50 €'), 'três euros e cinquenta cêntimos');
    assert.equal(spoken('es-MX', '$3.50'), 'tres pesos con cincuenta centavos');
    assert.equal(spoken('fr-CH', '90'), 'nonante');
    assert.equal(spoken('fr', '90'), 'quatre-vingt-dix');
  });

  it('a language without rules keeps its digits; say-as there is left to the engine', () => {
    for (const language of ['fi', 'ja', 'sv-SE', 'zh']) {
      assert.equal(hasNormalizer(language), false);
      assert.equal(spoken(language, 'Minulla on 21 omenaa, 3,50 €, 4.5.2026.'), 'Minulla on 21 omenaa, 3,50 €, 4.5.2026.');
      assert.equal(sayAsIn(language, '21', { interpretAs: 'cardinal' }), null);
    }
    assert.equal(hasNormalizer('en-GB'), true);
    assert.equal(hasNormalizer('nl-BE'), true);
  });

  it('say-as reads in the language of its span', () => {
    assert.equal(sayAsIn('de', '1234', { interpretAs: 'cardinal' }), 'eintausendzweihundertvierunddreißig');
    assert.equal(sayAsIn('fr', '2', { interpretAs: 'ordinal' }), 'deuxième');
    assert.equal(sayAsIn('es', '0199', { interpretAs: 'digits' }), 'cero uno nueve nueve');
    assert.equal(sayAsIn('it', 'ciao', { interpretAs: 'cardinal' }), null);
  });
});
