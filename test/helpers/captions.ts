/**
 * Reads captions with maintained parsers: WebVTT with webvtt-parser (the
 * specification's validating parser; any error it reports fails the read),
 * SRT with `subtitle`. Both give cues as `{start, end, text}` in milliseconds,
 * the text with WebVTT's markup read (entities decoded, the voice span as
 * `speaker`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseSync } from 'subtitle';
import webvtt from 'webvtt-parser';

/** The full table of named character references, as the parser's README advises (its default reads only a few, and those without their `;`). */
const entities = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('webvtt-parser/html-entities.json'), 'utf8')) as Record<string, string>;

export interface ReadCue {
  start: number;
  end: number;
  text: string;
  speaker?: string;
}

interface Node {
  type: string;
  name?: string;
  value?: string;
  annotation?: string;
  children?: Node[];
}

function textOf(nodes: readonly Node[]): string {
  return nodes.map((node) => (node.type === 'text' ? (node.value ?? '') : textOf(node.children ?? []))).join('');
}

export function readVtt(vtt: string): ReadCue[] {
  const parsed = new webvtt.WebVTTParser(entities).parse(vtt, 'metadata');
  assert.deepEqual(parsed.errors, [], `the WebVTT is invalid:\n${vtt}`);
  return parsed.cues.map((cue) => {
    const voice = cue.tree.children.find((node) => node.type === 'object' && node.name === 'v');
    return {
      start: Math.round(cue.startTime * 1000),
      end: Math.round(cue.endTime * 1000),
      text: textOf(cue.tree.children),
      ...(voice ? { speaker: voice.value } : {}),
    };
  });
}

export function readSrt(srt: string): ReadCue[] {
  const cues: ReadCue[] = [];
  for (const node of parseSync(srt)) if (node.type === 'cue') cues.push({ start: node.data.start, end: node.data.end, text: node.data.text });
  return cues;
}

/** The words of captions' text, in order (a speaker prefix left out). */
export function captionWords(cues: readonly ReadCue[]): string[] {
  return cues.flatMap((cue) => cue.text.split(/\s+/).filter(Boolean));
}
