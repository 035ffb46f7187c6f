/**
 * @module engines/espeak/phonemes
 * Normalised IPA (`engines/phonemes.ts`) as eSpeak NG's own phoneme input:
 * `[[…]]` with the mnemonics of its English phoneme table, which every
 * English voice shares (each speaks them in its accent: `oU` is oʊ in en-us
 * and əʊ in en-gb-x-rp). eSpeak reads `[[…]]` inside any text (this build
 * synthesises with phoneme input on), stress marks `'` and `,` before a
 * syllable as IPA places them, and `|` between two mnemonics that would
 * otherwise read as one (`a|I` is æ then ɪ, `aI` is aɪ).
 */
import { ipaTokens, type IpaSound } from '../phonemes.js';

/** Each sound's eSpeak mnemonic in the English table; sounds English lacks are its nearest. */
export const ESPEAK_ENGLISH: Record<IpaSound, string> = {
  p: 'p', b: 'b', t: 't', d: 'd', k: 'k', g: 'g', f: 'f', v: 'v', θ: 'T', ð: 'D', s: 's', z: 'z', ʃ: 'S', ʒ: 'Z', h: 'h',
  tʃ: 'tS', dʒ: 'dZ', m: 'm', n: 'n', ŋ: 'N', l: 'l', ɹ: 'r', r: 'r', w: 'w', j: 'j', x: 'x', ʔ: '?', ɾ: 't#', ç: 'C',
  // No ʍ in the table: "which" as "witch", as most speakers say it.
  ʍ: 'w', ɫ: 'l', 'n̩': 'n-', 'm̩': 'm-', 'l̩': 'l-',
  i: 'i', iː: 'i:', ɪ: 'I', e: 'e', eː: 'e:', eɪ: 'eI', ɛ: 'E', ɛə: 'e@', eə: 'e@', æ: 'a', a: 'a', aɪ: 'aI', aʊ: 'aU',
  ɑ: 'A:', ɑː: 'A:', ɒ: '0', ɔ: 'O', ɔː: 'O:', ɔɪ: 'OI', o: 'o', oː: 'o:', oʊ: 'oU', əʊ: 'oU', ʊ: 'U', u: 'u', uː: 'u:',
  ʌ: 'V', ə: '@', ɚ: '3', ɝ: '3:', ɜ: '3:', ɜː: '3:', ɐ: 'a#', ɪə: 'i@', iə: 'i@', ʊə: 'U@', ᵻ: 'I2', ɨ: 'I2', ʉ: 'u:',
};

/** Mnemonics of eSpeak's English table, the table's above and others: two sounds side by side must not spell one of them. */
const MNEMONICS = [...new Set([...Object.values(ESPEAK_ENGLISH), 'aa', 'a#', '@L', '@2', '@5', 'I#', 'i@3', 'aI@', 'aU@', 'aI3', 'o@', 'e#', '0#', 'A@', 'O@', 'U@', 'e@', '3:', 'r-', 'l/', 'w#'])];

/** eSpeak's phoneme input for normalised IPA, without the brackets. */
export function espeakMnemonics(ipa: string): string {
  let out = '';
  let lastSound = '';
  for (const token of ipaTokens(ipa)) {
    if (token.kind === 'space') {
      out += ' ';
      lastSound = '';
    } else if (token.kind === 'stress') {
      out += token.primary ? "'" : ',';
      lastSound = '';
    } else {
      const mnemonic = ESPEAK_ENGLISH[token.ipa];
      if (lastSound && MNEMONICS.some((m) => m !== lastSound && m.startsWith(lastSound + mnemonic[0]))) out += '|';
      out += mnemonic;
      lastSound = mnemonic;
    }
  }
  return out;
}
