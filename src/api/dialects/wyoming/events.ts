/**
 * @module api/wyoming/events
 * The Wyoming events the listener writes, as the reference library's
 * dataclasses shape them: `info` with one TTS program (every field its
 * reader requires, all seven service lists), audio events whose every chunk
 * carries the format (Home Assistant reads it from the first chunk), and
 * `error` with the registry's code.
 */
import type { ApiError } from '../../../errors/api-error.js';
import { encodeEvent } from './framing.js';
import type { OfferedVoice } from './voices.js';

/** Bytes per sample: 16-bit PCM. */
export const WIDTH = 2;
const CHANNELS = 1;

/** The reader requires a url; the product names no public address of its own. */
const ATTRIBUTION = { name: 'Voicegate', url: '' };

export function infoEvent(voices: readonly OfferedVoice[], version: string): Buffer[] {
  const tts = {
    name: 'voicegate',
    attribution: ATTRIBUTION,
    installed: true,
    description: 'Voicegate text-to-speech',
    version,
    voices: voices.map((v) => ({
      name: v.name,
      attribution: ATTRIBUTION,
      installed: true,
      // Home Assistant shows the description (else the name) in its voice list.
      description: v.name === v.voice.id ? `${v.voice.name} (${v.model.name})` : `${v.voice.name} (${v.model.name}, ${v.name})`,
      version: null,
      languages: [v.language],
      speakers: null,
    })),
    supports_synthesize_streaming: true,
  };
  return encodeEvent('info', { asr: [], tts: [tts], handle: [], intent: [], wake: [], mic: [], snd: [] });
}

export function audioStart(rate: number): Buffer[] {
  return encodeEvent('audio-start', { rate, width: WIDTH, channels: CHANNELS });
}

export function audioChunk(rate: number, pcm: Buffer): Buffer[] {
  return encodeEvent('audio-chunk', { rate, width: WIDTH, channels: CHANNELS }, pcm);
}

export function audioStop(): Buffer[] {
  return encodeEvent('audio-stop');
}

export function synthesizeStopped(): Buffer[] {
  return encodeEvent('synthesize-stopped');
}

export function errorEvent(error: ApiError): Buffer[] {
  return encodeEvent('error', { text: error.message, code: error.code });
}

export function pongEvent(text: string | null): Buffer[] {
  return encodeEvent('pong', text === null ? null : { text });
}
