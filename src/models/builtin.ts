/**
 * @module models/builtin
 * The two shipped model profiles. Each reproduces one seed API document:
 * `gepard-1.0` (2,000 characters, raw/wav, no mp3 or f32) and `omnivoice`
 * (5,000 characters, wav/mp3/raw, f32 allowed, default voice `sarah`), and
 * `voicegate-1.0`, Voicegate's own: every format streams too (MP3, Ogg Opus and
 * FLAC as well as PCM; 32 kHz and 48 kbit/s MP3 for Deepgram's clients), speed applies on streams, 10,000 characters. ElevenLabs' model ids map
 * to it by default, since their clients stream MP3 and set a speed.
 * Config may rebind their engine or override any field.
 */
import type { FormatRules, ModelProfile } from './profile.js';

const SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000];
const MP3_BIT_RATES = [32000, 64000, 96000, 128000, 192000, 256000, 320000];
const OPUS_BIT_RATES = [32000, 64000, 96000, 128000, 192000];

/** `voicegate-1.0`'s formats, for clips and streams alike. */
const EVERY_FORMAT: FormatRules = {
  containers: ['mp3', 'opus', 'wav', 'raw', 'flac'],
  encodings: ['pcm_s16le', 'pcm_f32le', 'pcm_mulaw', 'pcm_alaw'],
  // 32 kHz and 48 kbit/s MP3 too: Deepgram's clients ask for them.
  sampleRates: [8000, 16000, 22050, 24000, 32000, 44100, 48000],
  defaultEncoding: 'pcm_s16le',
  mp3BitRates: [32000, 48000, ...MP3_BIT_RATES.slice(1)],
  defaultMp3BitRate: 128000,
  opusBitRates: OPUS_BIT_RATES,
  defaultOpusBitRate: 64000,
};

export const BUILTIN_MODELS: Record<string, ModelProfile> = {
  'gepard-1.0': {
    id: 'gepard-1.0',
    name: 'Gepard 1.0',
    description: 'Dialogue-native model, tuned for conversational speech and low-latency streaming.',
    engine: 'espeak',
    maxTranscriptChars: 2000,
    clip: { containers: ['raw', 'wav'], encodings: ['pcm_s16le', 'pcm_mulaw', 'pcm_alaw'], sampleRates: SAMPLE_RATES, mp3BitRates: [] },
    stream: { containers: ['raw'], encodings: ['pcm_s16le', 'pcm_mulaw', 'pcm_alaw'], sampleRates: SAMPLE_RATES, mp3BitRates: [] },
    creditMultiplier: 1,
    speed: { min: 0.6, max: 1.5 },
    volume: { min: 0.5, max: 2.0 },
    streaming: true,
    defaultVoice: null,
    languages: ['en'],
  },
  omnivoice: {
    id: 'omnivoice',
    name: 'OmniVoice',
    description: 'Open text-to-speech model with voice cloning; English.',
    engine: 'espeak',
    maxTranscriptChars: 5000,
    clip: {
      containers: ['wav', 'mp3', 'raw'],
      encodings: ['pcm_f32le', 'pcm_s16le', 'pcm_mulaw', 'pcm_alaw'],
      sampleRates: SAMPLE_RATES,
      defaultEncoding: 'pcm_s16le',
      mp3BitRates: MP3_BIT_RATES,
      defaultMp3BitRate: 128000,
    },
    stream: {
      containers: ['wav', 'raw'],
      encodings: ['pcm_f32le', 'pcm_s16le', 'pcm_mulaw', 'pcm_alaw'],
      sampleRates: SAMPLE_RATES,
      defaultEncoding: 'pcm_s16le',
      mp3BitRates: [],
    },
    creditMultiplier: 1,
    speed: { min: 0.6, max: 1.5 },
    volume: { min: 0.5, max: 2.0 },
    streaming: true,
    defaultVoice: 'sarah',
    languages: ['en'],
  },
  'voicegate-1.0': {
    id: 'voicegate-1.0',
    name: 'Voicegate 1.0',
    description: 'Every format, streamed too (MP3 and Ogg Opus included), with speed on streams; 10,000 characters. What ElevenLabs model ids map to.',
    engine: 'espeak',
    maxTranscriptChars: 10000,
    // Streams offer what whole clips do.
    clip: EVERY_FORMAT,
    stream: EVERY_FORMAT,
    creditMultiplier: 1,
    speed: { min: 0.5, max: 2.0 },
    volume: { min: 0.5, max: 2.0 },
    streaming: true,
    speedOnStreams: true,
    defaultVoice: 'sarah',
    languages: ['en'],
  },
};
