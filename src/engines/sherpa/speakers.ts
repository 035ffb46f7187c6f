/**
 * @module engines/sherpa/speakers
 * The named speakers of a multi-speaker model and what their names say.
 * Kokoro's archives list their speakers in the ONNX metadata
 * (`speaker_names`, in `voices.bin` order), and a Kokoro v1 name starts with
 * its language and gender: `af_bella` is American English and feminine,
 * `bm_george` British English and masculine, `zf_xiaoxiao` Mandarin, and so
 * on (hexgrad/Kokoro-82M `VOICES.md`). A multi-lingual Kokoro model (ONNX
 * metadata `version` ≥ 2) is told per sentence which language to read the
 * text in: eSpeak NG's name for it (`KOKORO_LANGUAGES`).
 */
import type { Gender } from '../../voices/voice.js';

export interface KokoroLanguage {
  /** The voice's language as the voice list shows it (lower-case BCP 47). */
  language: string;
  /** The eSpeak NG voice sherpa-onnx phonemizes that language with. */
  espeak: string;
}

/** A Kokoro v1 speaker name's first letter → its language. */
export const KOKORO_LANGUAGES: Readonly<Record<string, KokoroLanguage>> = {
  a: { language: 'en-us', espeak: 'en-us' },
  b: { language: 'en-gb', espeak: 'en' },
  e: { language: 'es', espeak: 'es' },
  f: { language: 'fr', espeak: 'fr' },
  h: { language: 'hi', espeak: 'hi' },
  i: { language: 'it', espeak: 'it' },
  j: { language: 'ja', espeak: 'ja' },
  p: { language: 'pt-br', espeak: 'pt-br' },
  z: { language: 'zh', espeak: 'cmn' },
};

const GENDER_LETTER: Readonly<Record<string, Gender>> = { f: 'feminine', m: 'masculine' };

/** The model's speaker names, when its metadata lists one for each speaker. */
export function speakerNames(metadata: Record<string, string>, numSpeakers: number): string[] | undefined {
  const names = (metadata.speaker_names ?? '').split(',').map((n) => n.trim());
  if (numSpeakers < 2 || names.length !== numSpeakers || names.some((n) => !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(n))) return undefined;
  return new Set(names).size === names.length ? names : undefined;
}

/** What a Kokoro-style name (`af_bella`) says of its speaker; undefined for other names. */
export function describeSpeaker(name: string): { language: string; gender: Gender; label: string } | undefined {
  const match = /^([a-z])([fm])_(.+)$/.exec(name);
  if (!match || !KOKORO_LANGUAGES[match[1]]) return undefined;
  const label = match[3].charAt(0).toUpperCase() + match[3].slice(1);
  return { language: KOKORO_LANGUAGES[match[1]].language, gender: GENDER_LETTER[match[2]], label };
}

/**
 * The eSpeak NG language a multi-lingual Kokoro model reads a sentence in: the request's language
 * when the model speaks it (the voice's own accent kept when the language is the voice's, so `en`
 * with `bf_emma` stays British), else the voice's. Undefined leaves sherpa-onnx's default.
 */
export function kokoroLanguage(requested: string | undefined, voiceLanguage: string): string | undefined {
  const all = Object.values(KOKORO_LANGUAGES);
  const voice = all.find((l) => l.language === voiceLanguage.toLowerCase());
  const wanted = requested?.toLowerCase();
  if (wanted) {
    const base = wanted.split('-')[0];
    if (voice && (voice.language === wanted || voice.language.split('-')[0] === wanted)) return voice.espeak;
    const exact = all.find((l) => l.language === wanted) ?? all.find((l) => l.language.split('-')[0] === base);
    if (exact) return exact.espeak;
  }
  return voice?.espeak;
}
