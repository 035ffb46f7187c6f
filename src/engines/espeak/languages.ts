/**
 * @module engines/espeak/languages
 * Which of the voices eSpeak NG ships speaks a language: a BCP 47 tag is
 * looked up in the voices' language lists, the whole tag first and then
 * shorter (`fr-ca` → `fr`), the voice that lists it with the best priority
 * winning (`fr` → `roa/fr`, not `roa/fr-BE`). A profile's voice name is
 * found the same way when it is not a voice's own name (the per-language
 * voices are named by language: `fr-fr` is `roa/fr`).
 */
import type { EspeakListedVoice } from '../../voices/builtin.js';

export class EspeakVoices {
  constructor(private readonly listed: readonly EspeakListedVoice[]) {}

  /** The voice speaking `tag` (lower case), or null when none does. */
  forLanguage(tag: string): EspeakListedVoice | null {
    const subtags = tag.toLowerCase().split('-');
    for (let n = subtags.length; n > 0; n--) {
      const wanted = subtags.slice(0, n).join('-');
      let best: { voice: EspeakListedVoice; priority: number } | null = null;
      for (const voice of this.listed) {
        const entry = voice.languages.find((language) => language.name.toLowerCase() === wanted);
        if (entry && (!best || entry.priority < best.priority)) best = { voice, priority: entry.priority };
      }
      if (best) return best.voice;
    }
    return null;
  }

  /** The voice a profile names: by its identifier (`gmw/en-US`), the identifier's last part (`en-us`) or a language. */
  byName(name: string): { voice: EspeakListedVoice; byLanguage: boolean } | null {
    const wanted = name.toLowerCase();
    const own = this.listed.find((voice) => voice.identifier.toLowerCase() === wanted || voice.identifier.split('/').pop()!.toLowerCase() === wanted);
    if (own) return { voice: own, byLanguage: false };
    const voice = this.forLanguage(wanted);
    return voice ? { voice, byLanguage: true } : null;
  }
}

/** A voice's language without its region: `en` for `gmw/en-US`. */
export function primaryLanguage(voice: EspeakListedVoice): string {
  return (voice.languages[0]?.name ?? voice.identifier.split('/').pop() ?? '').toLowerCase().split('-')[0];
}
