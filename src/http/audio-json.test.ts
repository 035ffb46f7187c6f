/** @module api/audio-json.test — the spliced text is `JSON.stringify`'s, for every event shape that carries audio. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonWithAudio, sseFrameWithAudio } from './audio-json.js';

const audio = Buffer.from(Array.from({ length: 3001 }, (_, i) => (i * 37) % 256)).toString('base64');

describe('jsonWithAudio', () => {
  it('writes exactly what JSON.stringify writes', () => {
    const events: [Record<string, unknown>, string][] = [
      [{ type: 'chunk', data: audio, done: false, status_code: 206, step_time: 1.25, context_id: 'ctx "1"' }, 'data'],
      [{ type: 'chunk', data: '', done: false, status_code: 206, step_time: 0, context_id: null }, 'data'],
      [{ type: 'speech.audio.delta', audio }, 'audio'],
      // The same key nested, and text that looks like the placeholder's neighbours.
      [{ type: 'chunk', meta: { data: 'inner', note: '\u0000\u0001audio' }, data: audio, context_id: 'x' }, 'data'],
      [{ data: audio }, 'data'],
      // A client's context id that is the placeholder itself, before and after the audio.
      [{ type: 'chunk', data: audio, context_id: '\u0000\u0001audio\u0001\u0000' }, 'data'],
      [{ context_id: '\u0000\u0001audio\u0001\u0000', data: audio }, 'data'],
    ];
    for (const [event, field] of events) assert.equal(jsonWithAudio(event, field), JSON.stringify(event));
  });

  it('frames an SSE event as the bytes of its JSON text, non-ASCII text around the audio included', () => {
    const events: [Record<string, unknown>, string][] = [
      [{ type: 'chunk', data: audio, done: false, status_code: 206, step_time: 1.25, context_id: 'ctx "1"' }, 'data'],
      [{ type: 'chunk', data: audio, done: false, status_code: 206, step_time: 0, context_id: 'é – 日本 🎧' }, 'data'],
      [{ type: 'chunk', data: '', context_id: null }, 'data'],
      [{ type: 'speech.audio.delta', audio }, 'audio'],
      [{ type: 'chunk', data: audio, context_id: '\u0000\u0001audio\u0001\u0000' }, 'data'],
      [{ type: 'done', done: true }, 'data'],
    ];
    for (const [event, field] of events) assert.ok(sseFrameWithAudio(event, field).equals(Buffer.from(`data: ${JSON.stringify(event)}\n\n`)), JSON.stringify(event).slice(0, 80));
  });

  it('falls back to JSON.stringify when the field holds no string', () => {
    const event = { type: 'done', done: true, status_code: 200, context_id: 'c' };
    assert.equal(jsonWithAudio(event, 'data'), JSON.stringify(event));
    assert.equal(jsonWithAudio({ data: 12 }, 'data'), '{"data":12}');
  });

  it('parses back to the event', () => {
    const event = { type: 'chunk', data: audio, done: false, status_code: 206, step_time: 3.5, context_id: 'c' };
    assert.deepEqual(JSON.parse(jsonWithAudio(event, 'data')), event);
  });
});
