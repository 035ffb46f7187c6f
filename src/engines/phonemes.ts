/**
 * @module engines/phonemes
 * Phonemes as SSML's `<phoneme>` gives them (`alphabet="ipa"` or
 * `"x-sampa"`), read into the one form every engine that takes phonemes is
 * handed (`EngineInput.phonemes`): normalised IPA over a fixed inventory of
 * sounds, with primary and secondary stress (ˈ ˌ), length folded into the
 * sounds that have a long form (iː, ɑː …), and spaces between words.
 *
 * The inventory is English's sounds (both American and British
 * transcriptions: oʊ and əʊ, ɑ and ɒ, ɚ and ɜː, ɾ …) and a few common
 * neighbours (x, ç, ʔ, ɐ, o, e); each engine that takes phonemes maps every
 * one of them (eSpeak NG: `espeak/phonemes.ts`). A symbol outside it is
 * refused with its name, so a client learns what was not understood rather
 * than hearing something else. Diacritics that do not change an English
 * phoneme (aspiration, syllable breaks, ties, non-syllabic and
 * palatalisation marks) are left out.
 */

/** The sounds, in normalised IPA (NFC). Multi-character sounds (diphthongs, affricates, long vowels) are one each. */
export const IPA_SOUNDS = [
  // Consonants.
  'p', 'b', 't', 'd', 'k', 'g', 'f', 'v', 'θ', 'ð', 's', 'z', 'ʃ', 'ʒ', 'h', 'tʃ', 'dʒ',
  'm', 'n', 'ŋ', 'l', 'ɹ', 'r', 'w', 'j', 'x', 'ʔ', 'ɾ', 'ç', 'ʍ', 'ɫ', 'n̩', 'm̩', 'l̩',
  // Vowels and diphthongs.
  'i', 'iː', 'ɪ', 'e', 'eː', 'eɪ', 'ɛ', 'ɛə', 'eə', 'æ', 'a', 'aɪ', 'aʊ', 'ɑ', 'ɑː', 'ɒ',
  'ɔ', 'ɔː', 'ɔɪ', 'o', 'oː', 'oʊ', 'əʊ', 'ʊ', 'u', 'uː', 'ʌ', 'ə', 'ɚ', 'ɝ', 'ɜ', 'ɜː',
  'ɐ', 'ɪə', 'iə', 'ʊə', 'ᵻ', 'ɨ', 'ʉ',
] as const;

export type IpaSound = (typeof IPA_SOUNDS)[number];

export type PhonemeToken = { kind: 'sound'; ipa: IpaSound } | { kind: 'stress'; primary: boolean } | { kind: 'space' };

/** Another spelling of a sound, or of a mark, in IPA as clients write it: read as the one on the right. */
const IPA_SPELLINGS: Record<string, string> = {
  'ɡ': 'g',
  'ʧ': 'tʃ',
  'ʤ': 'dʒ',
  't͡ʃ': 'tʃ',
  'd͡ʒ': 'dʒ',
  't͜ʃ': 'tʃ',
  'd͜ʒ': 'dʒ',
  'ɻ': 'ɹ',
  // A rhotic hook is an r-colouring: ɑ˞ is ɑɹ (ɚ and ɝ have their own sounds).
  '˞': 'ɹ',
  "'": 'ˈ',
  '’': 'ˈ',
  ':': 'ː',
};

/** Left out: they do not change an English phoneme. */
const IGNORED = new Set(['.', '|', '‖', '‿', 'ʰ', 'ʲ', 'ʷ', 'ˑ', '\u0306', '\u032f', '\u0329', '\u032a', '\u0325', '\u032c', '\u0361', '\u035c', '-']);

const LONGEST_FIRST = [...IPA_SOUNDS].sort((a, b) => b.length - a.length);
const SOUNDS = new Set<string>(IPA_SOUNDS);

/** What could not be read, for the client: the symbol and where it stands in `ph`. */
export class PhonemeError extends Error {}

function describe(char: string): string {
  const code = `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  return /\p{M}/u.test(char) ? `the combining mark ${code}` : `"${char}" (${code})`;
}

/** The tokens of an IPA string; throws `PhonemeError` naming the first symbol outside the inventory. */
export function ipaTokens(ipa: string): PhonemeToken[] {
  let text = ipa.normalize('NFC');
  for (const [spelling, sound] of Object.entries(IPA_SPELLINGS)) text = text.split(spelling).join(sound);
  const tokens: PhonemeToken[] = [];
  let at = 0;
  outer: while (at < text.length) {
    const char = String.fromCodePoint(text.codePointAt(at)!);
    if (/\s/u.test(char)) {
      if (tokens.length > 0 && tokens.at(-1)!.kind !== 'space') tokens.push({ kind: 'space' });
      at += char.length;
      continue;
    }
    if (char === 'ˈ' || char === 'ˌ') {
      tokens.push({ kind: 'stress', primary: char === 'ˈ' });
      at += 1;
      continue;
    }
    if (char === 'ː') {
      // Length makes a sound its long form where it has one (i → iː); elsewhere it changes nothing here.
      const last = tokens.at(-1);
      if (last?.kind === 'sound' && SOUNDS.has(`${last.ipa}ː`)) last.ipa = `${last.ipa}ː` as IpaSound;
      at += 1;
      continue;
    }
    for (const sound of LONGEST_FIRST) {
      if (text.startsWith(sound, at)) {
        tokens.push({ kind: 'sound', ipa: sound });
        at += sound.length;
        continue outer;
      }
    }
    if (IGNORED.has(char)) {
      at += char.length;
      continue;
    }
    throw new PhonemeError(`${describe(char)} is not a phoneme this server knows`);
  }
  while (tokens.at(-1)?.kind === 'space') tokens.pop();
  if (!tokens.some((token) => token.kind === 'sound')) throw new PhonemeError('there is no phoneme in it');
  return tokens;
}

/** The tokens written out as normalised IPA: the form `EngineInput.phonemes` carries. */
export function ipaOf(tokens: readonly PhonemeToken[]): string {
  return tokens.map((token) => (token.kind === 'sound' ? token.ipa : token.kind === 'stress' ? (token.primary ? 'ˈ' : 'ˌ') : ' ')).join('');
}

/**
 * X-SAMPA to IPA, after the X-SAMPA chart (John Wells, 1995): every symbol with its IPA, longest
 * first when read. A symbol with no entry is refused.
 */
const X_SAMPA: Record<string, string> = {
  a: 'a', b: 'b', 'b_<': 'ɓ', c: 'c', d: 'd', 'd`': 'ɖ', 'd_<': 'ɗ', e: 'e', f: 'f', g: 'ɡ', 'g_<': 'ɠ', h: 'h', 'h\\': 'ɦ',
  i: 'i', j: 'j', 'j\\': 'ʝ', k: 'k', l: 'l', 'l`': 'ɭ', 'l\\': 'ɺ', m: 'm', n: 'n', 'n`': 'ɳ', o: 'o', p: 'p', 'p\\': 'ɸ',
  q: 'q', r: 'r', 'r`': 'ɽ', 'r\\': 'ɹ', 'r\\`': 'ɻ', s: 's', 's`': 'ʂ', 's\\': 'ɕ', t: 't', 't`': 'ʈ', u: 'u', v: 'v',
  'v\\': 'ʋ', w: 'w', x: 'x', 'x\\': 'ɧ', y: 'y', z: 'z', 'z`': 'ʐ', 'z\\': 'ʑ',
  A: 'ɑ', B: 'β', 'B\\': 'ʙ', C: 'ç', D: 'ð', E: 'ɛ', F: 'ɱ', G: 'ɣ', 'G\\': 'ɢ', 'G\\_<': 'ʛ', H: 'ɥ', 'H\\': 'ʜ',
  I: 'ɪ', 'I\\': 'ᵻ', J: 'ɲ', 'J\\': 'ɟ', 'J\\_<': 'ʄ', K: 'ɬ', 'K\\': 'ɮ', L: 'ʎ', 'L\\': 'ʟ', M: 'ɯ', 'M\\': 'ɰ',
  N: 'ŋ', 'N\\': 'ɴ', O: 'ɔ', 'O\\': 'ʘ', P: 'ʋ', Q: 'ɒ', R: 'ʁ', 'R\\': 'ʀ', S: 'ʃ', T: 'θ', U: 'ʊ', 'U\\': 'ᵿ',
  V: 'ʌ', W: 'ʍ', X: 'χ', 'X\\': 'ħ', Y: 'ʏ', Z: 'ʒ',
  '.': '.', '"': 'ˈ', '%': 'ˌ', "'": 'ʲ', ':': 'ː', ':\\': 'ˑ', '@': 'ə', '@\\': 'ɘ', '@`': 'ɚ', '{': 'æ', '}': 'ʉ',
  '1': 'ɨ', '2': 'ø', '3': 'ɜ', '3\\': 'ɞ', '3`': 'ɝ', '4': 'ɾ', '5': 'ɫ', '6': 'ɐ', '7': 'ɤ', '8': 'ɵ', '9': 'œ', '&': 'ɶ',
  '?': 'ʔ', '?\\': 'ʕ', '<\\': 'ʢ', '>\\': 'ʡ', '!\\': 'ǃ', '|\\': 'ǀ', '||': '‖', '|': '|', '|\\|\\': 'ǁ', '=\\': 'ǂ',
  '-\\': '‿', '-': '',
  // Diacritics (after the symbol they change) and the tie.
  '_h': 'ʰ', '_w': 'ʷ', '_j': 'ʲ', '_=': '\u0329', '=': '\u0329', '_~': '\u0303', '~': '\u0303', '_0': '\u0325',
  '_v': '\u032c', '_d': '\u032a', '_^': '\u032f', '_>': 'ʼ', '`': '˞', '_G': 'ˠ', '_?\\': 'ˤ', '_': '\u0361',
};
const X_SAMPA_LONGEST_FIRST = Object.keys(X_SAMPA).sort((a, b) => b.length - a.length);

/** X-SAMPA as IPA; throws `PhonemeError` for a symbol X-SAMPA does not have. */
export function xSampaToIpa(xsampa: string): string {
  let out = '';
  let at = 0;
  outer: while (at < xsampa.length) {
    const char = xsampa[at];
    if (/\s/u.test(char)) {
      out += ' ';
      at += 1;
      continue;
    }
    for (const symbol of X_SAMPA_LONGEST_FIRST) {
      if (xsampa.startsWith(symbol, at)) {
        out += X_SAMPA[symbol];
        at += symbol.length;
        continue outer;
      }
    }
    throw new PhonemeError(`${describe(String.fromCodePoint(xsampa.codePointAt(at)!))} is not an X-SAMPA symbol`);
  }
  return out;
}

/** The alphabets `<phoneme alphabet>` takes (absent: IPA). */
export const PHONEME_ALPHABETS = ['ipa', 'x-sampa'] as const;

/**
 * `ph` in `alphabet` as normalised IPA over the inventory. Throws `PhonemeError` when the alphabet is
 * not one of `PHONEME_ALPHABETS`, or a symbol cannot be read or has no sound in the inventory.
 */
export function normalisePhonemes(ph: string, alphabet: string): string {
  const name = alphabet.trim().toLowerCase();
  if (name !== 'ipa' && name !== 'x-sampa') throw new PhonemeError(`the alphabet "${alphabet}" is not supported (use ipa or x-sampa)`);
  const ipa = name === 'x-sampa' ? xSampaToIpa(ph) : ph;
  try {
    return ipaOf(ipaTokens(ipa));
  } catch (err) {
    // Name the X-SAMPA symbol's IPA too, so the client sees which sound it asked for.
    if (err instanceof PhonemeError && name === 'x-sampa') throw new PhonemeError(`${err.message} (as IPA: ${ipa})`);
    throw err;
  }
}
