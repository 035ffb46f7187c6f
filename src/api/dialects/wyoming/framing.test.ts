/**
 * @module api/wyoming/framing.test
 * The Wyoming framing against the bytes the reference library writes: data
 * in a data block or inline (both merged, the block winning), split and
 * joined reads, large data written as a block, and every malformed input
 * refused with a registry code instead of buffered without end.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EventDecoder, encodeEvent, FramingError, INLINE_DATA_BYTES, type WyomingEvent } from './framing.js';

/** Bytes exactly as the reference writer (wyoming 1.9.0) produces them, Python's separators included. */
const REFERENCE = [
  '{"type": "describe", "version": "1.9.0"}\n',
  '{"type": "synthesize", "version": "1.9.0", "data_length": 66}\n{"text": "Hello world.", "voice": {"name": "en_US-lessac-medium"}}',
  '{"type": "synthesize-start", "version": "1.9.0", "data_length": 24}\n{"voice": {"name": "x"}}',
  '{"type": "synthesize-chunk", "version": "1.9.0", "data_length": 16}\n{"text": "Hi. "}',
  '{"type": "synthesize-stop", "version": "1.9.0"}\n',
];

function decodeAll(chunks: (string | Buffer)[], decoder = new EventDecoder()): WyomingEvent[] {
  return chunks.flatMap((chunk) => decoder.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, 'utf8')));
}

test('reads what the reference library writes, with its data blocks', () => {
  const events = decodeAll(REFERENCE);
  assert.deepEqual(
    events.map((e) => [e.type, e.data]),
    [
      ['describe', {}],
      ['synthesize', { text: 'Hello world.', voice: { name: 'en_US-lessac-medium' } }],
      ['synthesize-start', { voice: { name: 'x' } }],
      ['synthesize-chunk', { text: 'Hi. ' }],
      ['synthesize-stop', {}],
    ],
  );
});

test('the same bytes read one byte at a time, or all in one read, give the same events', () => {
  const whole = Buffer.from(REFERENCE.join(''), 'utf8');
  const byByte = decodeAll([...whole].map((b) => Buffer.from([b])));
  assert.deepEqual(byByte, decodeAll([whole]));
  assert.equal(byByte.length, 5);
});

test('inline data is read, and a data block is merged over it', () => {
  const events = decodeAll([
    '{"type":"synthesize","data":{"text":"inline"}}\n',
    '{"type":"synthesize","data":{"text":"inline","voice":{"name":"a"}},"data_length":16}\n{"text":"block"}',
    '{"type":"describe","data_length":0,"payload_length":null}\n',
  ]);
  assert.deepEqual(events[0].data, { text: 'inline' });
  assert.deepEqual(events[1].data, { text: 'block', voice: { name: 'a' } });
  assert.deepEqual(events[2], { type: 'describe', data: {}, payload: null });
});

test('a payload is read after the data block, with a multi-byte character counted in bytes', () => {
  const data = Buffer.from('{"text":"é"}', 'utf8');
  const events = decodeAll([Buffer.concat([Buffer.from(`{"type":"x","data_length":${data.length},"payload_length":3}\n`), data, Buffer.from([1, 2, 3]), Buffer.from('{"type":"y"}\n')])]);
  assert.deepEqual(events[0].data, { text: 'é' });
  assert.deepEqual([...events[0].payload!], [1, 2, 3]);
  assert.equal(events[1].type, 'y');
});

test('small data is written inline; data over 8 KiB goes in the data block, and the header line stays short', () => {
  const small = Buffer.concat(encodeEvent('audio-start', { rate: 22050, width: 2, channels: 1 }));
  assert.equal(small.toString(), '{"type":"audio-start","version":"1.7.0","data":{"rate":22050,"width":2,"channels":1}}\n');
  const voices = Array.from({ length: 2000 }, (_, i) => ({ name: `voice-${i}`, languages: ['en-US'] }));
  const parts = encodeEvent('info', { tts: [{ voices }] });
  const line = parts[0].toString('utf8');
  assert.ok(line.length < 200, line);
  assert.ok(parts[1].length > INLINE_DATA_BYTES);
  assert.deepEqual(JSON.parse(line), { type: 'info', version: '1.7.0', data_length: parts[1].length });
  const [event] = decodeAll(parts, new EventDecoder({ maxHeaderBytes: 65536, maxDataBytes: 1 << 22, maxPayloadBytes: 1 }));
  assert.equal((event.data.tts as { voices: unknown[] }[])[0].voices.length, 2000);
});

test('a payload is written with its length; no data and no payload write neither field', () => {
  const parts = encodeEvent('audio-chunk', { rate: 16000, width: 2, channels: 1 }, Buffer.from([0, 1, 2, 3]));
  assert.deepEqual(JSON.parse(parts[0].toString()), { type: 'audio-chunk', version: '1.7.0', data: { rate: 16000, width: 2, channels: 1 }, payload_length: 4 });
  assert.deepEqual([...parts[1]], [0, 1, 2, 3]);
  assert.equal(Buffer.concat(encodeEvent('synthesize-stopped')).toString(), '{"type":"synthesize-stopped","version":"1.7.0"}\n');
  const [event] = decodeAll(parts);
  assert.deepEqual([...event.payload!], [0, 1, 2, 3]);
});

function refused(chunks: (string | Buffer)[], code: string, pattern: RegExp, limits?: ConstructorParameters<typeof EventDecoder>[0]): void {
  assert.throws(
    () => decodeAll(chunks, new EventDecoder(limits)),
    (err: unknown) => err instanceof FramingError && err.code === code && pattern.test(err.message),
  );
}

test('malformed input is refused with a code, never buffered without end', () => {
  refused(['not json\n'], 'invalid_message', /not valid JSON/);
  refused(['[1,2]\n'], 'invalid_message', /not a JSON object/);
  refused(['{"data":{}}\n'], 'invalid_message', /no type/);
  refused(['{"type":"x","data":[1]}\n'], 'invalid_message', /data is not/);
  refused(['{"type":"x","data_length":-1}\n'], 'invalid_message', /data_length/);
  refused(['{"type":"x","payload_length":"3"}\n'], 'invalid_message', /payload_length/);
  refused(['{"type":"x","data_length":5}\nnope!'], 'invalid_message', /data block is not valid JSON/);
  refused(['{"type":"x","data_length":999999999999}\n'], 'payload_too_large', /data_length/);
  refused(['{"type":"x","payload_length":2000000}\n'], 'payload_too_large', /payload_length/);
  // A header line with no newline is refused once it passes the cap, not kept growing.
  refused(['{"type":"' + 'a'.repeat(70000)], 'invalid_message', /header line is over 65536/);
  refused(['{"type":"x"}' + ' '.repeat(100) + '\n'], 'invalid_message', /header line/, { maxHeaderBytes: 50, maxDataBytes: 10, maxPayloadBytes: 10 });
});

test('after a framing error the decoder refuses everything', () => {
  const decoder = new EventDecoder();
  assert.throws(() => decoder.push(Buffer.from('garbage\n')), FramingError);
  assert.throws(() => decoder.push(Buffer.from('{"type":"describe"}\n')), FramingError);
});

test('an event still arriving is held until its last byte', () => {
  const decoder = new EventDecoder();
  assert.deepEqual(decoder.push(Buffer.from('{"type":"x","payload_length":4}\n\x00\x01')), []);
  assert.equal(decoder.buffered, 2);
  const [event] = decoder.push(Buffer.from('\x02\x03{"type"'));
  assert.deepEqual([...event.payload!], [0, 1, 2, 3]);
  assert.equal(decoder.buffered, 7);
});
