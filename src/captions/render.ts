/**
 * @module captions/render
 * Cues as files: WebVTT (a `WEBVTT` header, `hh:mm:ss.ttt` timings, `&`,
 * `<` and `>` escaped, a dialogue's speaker as a `<v Name>` span) and SRT
 * (numbered from 1, `hh:mm:ss,ttt` timings, the speaker as a `Name: ` prefix
 * when it leaves room on the line). Both print the cues `cues.ts` built, so the
 * two files of one audio hold the same cues, lines and times.
 */
import { ApiError } from '../errors/api-error.js';
import { buildCues, DEFAULT_MAX_LINE_CHARS, MAX_LINE_CHARS, MIN_LINE_CHARS, speakerPrefixWidth, validLineChars, type CaptionOptions, type CaptionWord, type Cue } from './cues.js';

export type CaptionFormat = 'vtt' | 'srt';

export const CAPTION_CONTENT_TYPES: Record<CaptionFormat, string> = {
  vtt: 'text/vtt; charset=utf-8',
  srt: 'application/x-subrip',
};

/** `format` as a request gives it: `vtt` (absent: the default) or `srt`; anything else is `invalid_caption_format`. */
export function captionFormat(value: unknown): CaptionFormat {
  if (value === undefined || value === null || value === '') return 'vtt';
  if (value === 'vtt' || value === 'srt') return value;
  throw new ApiError('invalid_caption_format', { format: typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value });
}

/** `maxLineChars` as a request gives it (a number, or a query's string): 20–80, absent 42; else `invalid_caption_options`. */
export function captionLineChars(value: unknown): number {
  if (value === undefined || value === null || value === '') return DEFAULT_MAX_LINE_CHARS;
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (!validLineChars(number)) throw new ApiError('invalid_caption_options', { reason: `maxLineChars must be a whole number from ${MIN_LINE_CHARS} to ${MAX_LINE_CHARS}` });
  return number;
}

/** The captions of the words spoken, in one format. */
export function captions(words: readonly CaptionWord[], format: CaptionFormat, options: CaptionOptions = {}): string {
  const cues = buildCues(words, options);
  const max = options.maxLineChars ?? DEFAULT_MAX_LINE_CHARS;
  return format === 'srt' ? srt(cues, max) : webVtt(cues);
}

/** `hh:mm:ss.ttt` (WebVTT) or `hh:mm:ss,ttt` (SRT) of whole milliseconds. */
export function timestamp(ms: number, separator: '.' | ','): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor(ms / 60_000) % 60;
  const seconds = Math.floor(ms / 1000) % 60;
  return `${pad(hours)}:${pad(minutes)}:${pad(seconds)}${separator}${pad(ms % 1000, 3)}`;
}

/** Text as WebVTT cue text: its markup characters escaped. */
export function escapeVtt(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function webVtt(cues: readonly Cue[]): string {
  const blocks = cues.map((cue) => {
    const lines = cue.lines.map(escapeVtt);
    if (cue.speaker !== undefined) lines[0] = `<v ${escapeVtt(cue.speaker.replace(/\s+/g, ' '))}>${lines[0]}`;
    return `${timestamp(cue.start, '.')} --> ${timestamp(cue.end, '.')}\n${lines.join('\n')}${cue.speaker !== undefined ? '</v>' : ''}`;
  });
  return ['WEBVTT', ...blocks].join('\n\n') + '\n';
}

export function srt(cues: readonly Cue[], maxLineChars: number): string {
  return cues
    .map((cue, index) => {
      const lines = [...cue.lines];
      if (speakerPrefixWidth(cue.speaker, maxLineChars) > 0) lines[0] = `${cue.speaker}: ${lines[0]}`;
      return `${index + 1}\n${timestamp(cue.start, ',')} --> ${timestamp(cue.end, ',')}\n${lines.join('\n')}\n`;
    })
    .join('\n');
}
