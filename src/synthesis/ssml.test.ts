/**
 * @module synthesis/ssml.test
 * SSML's `<phoneme>` and `<lang>` read into segments: the phonemes ride on the text run they stand
 * for and join the text around it as a span over its words; a language starts a segment of its
 * own; what is counted is the text, not `ph`; a `ph` that cannot be read is `invalid_ssml` at its
 * line and column.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../errors/api-error.js';
import { BUILTIN_MODELS } from '../models/builtin.js';
import { segmentsOf, type SegmentContext, type SpeechSegment } from './segments.js';
import { languageTag, readSsml } from './ssml.js';

const context: SegmentContext = { model: BUILTIN_MODELS['gepard-1.0'], settings: { speed: 1, volume: 1 }, streaming: false, pronunciation: null, voiceGain: 1, normalize: true };
const segments = (ssml: string): SpeechSegment[] => segmentsOf(readSsml(ssml).segments, context);
const texts = (list: SpeechSegment[]) => list.map((s) => (s.kind === 'text' ? { text: s.text, ...(s.phonemes ? { phonemes: s.phonemes } : {}), ...(s.language ? { language: s.language } : {}) } : s));

describe('<phoneme>', () => {
  test('its phonemes span its words within the sentence around it; the anchors’ alphabets read alike', () => {
    const ipa = segments('<speak>You say, <phoneme alphabet="ipa" ph="pɪˈkɑːn">pecan</phoneme>. I say, <phoneme alphabet="x-sampa" ph=\'pI"kA:n\'>pecan</phoneme>.</speak>');
    assert.deepEqual(texts(ipa), [
      {
        text: 'You say, pecan. I say, pecan.',
        phonemes: [
          { from: 9, to: 14, ipa: 'pɪˈkɑːn' },
          { from: 23, to: 28, ipa: 'pɪˈkɑːn' },
        ],
      },
    ]);
    // Azure's example keeps the spaces inside the element out of the span.
    assert.deepEqual(texts(segments('<speak><phoneme alphabet="ipa" ph="təˈmeɪtoʊ"> tomato </phoneme></speak>')), [{ text: ' tomato ', phonemes: [{ from: 1, to: 7, ipa: 'təˈmeɪtoʊ' }] }]);
    // Without an alphabet, IPA.
    assert.deepEqual(texts(segments('<speak><phoneme ph="ˈtɒmɑːtəʊ">tomato</phoneme></speak>')), [{ text: 'tomato', phonemes: [{ from: 0, to: 6, ipa: 'ˈtɒmɑːtəʊ' }] }]);
  });

  test('two elements side by side stay two words; text inside other elements is gathered', () => {
    assert.deepEqual(texts(segments('<speak><phoneme ph="ˈjuː">you</phoneme> <phoneme ph="ˈmiː">me</phoneme></speak>')), [
      { text: 'you me', phonemes: [{ from: 0, to: 3, ipa: 'ˈjuː' }, { from: 4, to: 6, ipa: 'ˈmiː' }] },
    ]);
    assert.deepEqual(texts(segments('<speak>A <phoneme ph="ˈnjuː ˈjɔːk"><w>New</w> <emphasis level="none">York</emphasis></phoneme> day</speak>')), [
      { text: 'A New York day', phonemes: [{ from: 2, to: 10, ipa: 'ˈnjuː ˈjɔːk' }] },
    ]);
  });

  test('inside spelling, a say-as or a sub, the outer reading decides; an empty element says nothing', () => {
    assert.deepEqual(texts(segments('<speak><say-as interpret-as="characters"><phoneme ph="ˈeɪ">A</phoneme>B</say-as></speak>')), [{ text: 'A B' }]);
    assert.deepEqual(texts(segments('<speak><sub alias="World Wide Web"><phoneme ph="wɜːld">W</phoneme>WW</sub></speak>')), [{ text: 'World Wide Web' }]);
    assert.deepEqual(texts(segments('<speak>Hi <phoneme ph="ˈeɪ"/>there</speak>')), [{ text: 'Hi there' }]);
  });

  test('the text is counted, not ph', () => {
    assert.equal(readSsml('<speak>You say, <phoneme alphabet="ipa" ph="pɪˈkɑːn">pecan</phoneme>.</speak>').characters, 'You say, pecan.'.length);
    assert.equal(readSsml('<speak><phoneme alphabet="ipa" ph="təˈmeɪtoʊ"> tomato </phoneme></speak>').characters, 'tomato'.length);
  });

  test('a ph that cannot be read, an unknown alphabet or no ph is invalid_ssml at the element', () => {
    const cases: [string, RegExp][] = [
      ['<speak>\n  Say <phoneme alphabet="ipa" ph="bɔ̃ʒuʁ">bonjour</phoneme></speak>', /line 2, column \d+: <phoneme ph="bɔ̃ʒuʁ">: the combining mark U\+0303 is not a phoneme/],
      ['<speak><phoneme alphabet="x-sampa" ph="p#">x</phoneme></speak>', /line 1, .*"#" .* not an X-SAMPA symbol/],
      ['<speak><phoneme alphabet="sapi" ph="h eh 1 l ow">hello</phoneme></speak>', /alphabet "sapi" is not supported/],
      ['<speak><phoneme>hello</phoneme></speak>', /needs a ph/],
      ['<speak><phoneme ph=" ">hello</phoneme></speak>', /needs a ph/],
    ];
    for (const [ssml, message] of cases) {
      assert.throws(
        () => readSsml(ssml),
        (err: unknown) => err instanceof ApiError && err.code === 'invalid_ssml' && message.test(err.message),
        ssml,
      );
    }
  });
});

describe('<lang>', () => {
  test('its text is a segment of its own with the language; a tag not in shape changes nothing', () => {
    assert.deepEqual(texts(segments('<speak>She said <lang xml:lang="fr-FR">Je ne parle pas français</lang> and left.</speak>')), [
      { text: 'She said ' },
      { text: 'Je ne parle pas français', language: 'fr-fr' },
      { text: ' and left.' },
    ]);
    assert.deepEqual(texts(segments('<speak>Hi <lang xml:lang="not a tag!">there</lang></speak>')), [{ text: 'Hi there' }]);
    assert.deepEqual(texts(segments('<speak><p xml:lang="de">Guten Tag</p></speak>')), [{ text: 'Guten Tag', language: 'de' }]);
    // A phoneme inside keeps the language.
    assert.deepEqual(texts(segments('<speak><lang xml:lang="es_ES">hola <phoneme ph="ˈoʊlə">hola</phoneme></lang></speak>')), [
      { text: 'hola hola', phonemes: [{ from: 5, to: 9, ipa: 'ˈoʊlə' }], language: 'es-es' },
    ]);
  });

  test('each span is normalised in its own language; one without rules keeps its digits', () => {
    assert.deepEqual(texts(segments('<speak>2 <lang xml:lang="fr">2 chats</lang></speak>')), [{ text: 'two ' }, { text: 'deux chats', language: 'fr' }]);
    assert.deepEqual(texts(segments('<speak>2 <lang xml:lang="fi">2 kissaa</lang></speak>')), [{ text: 'two ' }, { text: '2 kissaa', language: 'fi' }]);
  });

  test('languageTag takes BCP 47 in shape, in lower case', () => {
    assert.equal(languageTag(' fr-FR '), 'fr-fr');
    assert.equal(languageTag('zh_Hant_TW'), 'zh-hant-tw');
    assert.equal(languageTag('x'), null);
    assert.equal(languageTag('fr FR'), null);
    assert.equal(languageTag(''), null);
  });
});
