/**
 * @module test/word-timestamps
 * Word timestamps name exactly the words the client sent — whitespace-
 * separated, tags removed, punctuation attached — each once, in order, with
 * starts that never go backwards and ends not before starts, whatever eSpeak
 * makes of numbers, contractions, abbreviations, symbols and emoji. One table
 * runs on SSE, on the WebSocket as one message, and on the WebSocket as a
 * token stream cut every few characters (mid-word, as LLM tokens arrive).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, ttsBody, type TestServer } from './helpers/server.js';
import { TestSocket, type Event } from './helpers/ws-client.js';

let server: TestServer;
let dictId: string;
before(async () => {
  server = await startServer();
  const response = await server.post('/pronunciation-dicts', {
    name: 'words',
    items: [
      { text: 'Voicegate', alias: 'voice gate' },
      { text: 'NASA', alias: 'N A S A' },
    ],
  });
  assert.equal(response.status, 200, await response.clone().text());
  dictId = ((await response.json()) as { id: string }).id;
});
after(() => server.close());

const RATE = 22050;
const OUTPUT = { container: 'raw', encoding: 'pcm_s16le', sample_rate: RATE };

interface Row {
  transcript: string;
  words: string[];
  dictionary?: boolean;
}

const TABLE: Row[] = [
  // Contractions and repeated words.
  { transcript: "Don't worry, it's fine.", words: ["Don't", 'worry,', "it's", 'fine.'] },
  { transcript: "They're sure we can't go.", words: ["They're", 'sure', 'we', "can't", 'go.'] },
  { transcript: 'The the the cat sat on the the mat.', words: ['The', 'the', 'the', 'cat', 'sat', 'on', 'the', 'the', 'mat.'] },
  { transcript: 'I think it is what it is', words: ['I', 'think', 'it', 'is', 'what', 'it', 'is'] },
  { transcript: 'This text lights up as it is spoken.', words: ['This', 'text', 'lights', 'up', 'as', 'it', 'is', 'spoken.'] },
  // Numbers, ordinals, money, phone numbers, e-mail addresses and URLs.
  { transcript: 'Room 204 is on the 5th floor.', words: ['Room', '204', 'is', 'on', 'the', '5th', 'floor.'] },
  { transcript: 'It costs $5.50, or €1,234.56 in all.', words: ['It', 'costs', '$5.50,', 'or', '€1,234.56', 'in', 'all.'] },
  { transcript: 'Call 555-0199 today.', words: ['Call', '555-0199', 'today.'] },
  { transcript: 'Mail bob@example.com or visit https://example.com/a?b=1 now.', words: ['Mail', 'bob@example.com', 'or', 'visit', 'https://example.com/a?b=1', 'now.'] },
  // Abbreviations with dots, quotes and brackets.
  { transcript: 'Meet me on Elm St. near the U.S. border', words: ['Meet', 'me', 'on', 'Elm', 'St.', 'near', 'the', 'U.S.', 'border'] },
  { transcript: 'She said "yes" (twice) [really], e.g. today.', words: ['She', 'said', '"yes"', '(twice)', '[really],', 'e.g.', 'today.'] },
  // Ellipses and dashes.
  { transcript: 'Wait... what? Well — maybe…not.', words: ['Wait...', 'what?', 'Well', '—', 'maybe…not.'] },
  { transcript: 'Pages 10–20 are a well-known read - mostly.', words: ['Pages', '10–20', 'are', 'a', 'well-known', 'read', '-', 'mostly.'] },
  // Non-ASCII letters and emoji.
  { transcript: 'Crème brûlée in Zürich, naïve señor.', words: ['Crème', 'brûlée', 'in', 'Zürich,', 'naïve', 'señor.'] },
  { transcript: 'Hello 😀 world 🎉!', words: ['Hello', '😀', 'world', '🎉!'] },
  // A pronunciation-dictionary alias, <spell> and a <break>.
  { transcript: 'Voicegate reads NASA news.', words: ['Voicegate', 'reads', 'NASA', 'news.'], dictionary: true },
  { transcript: 'Your code is <spell>XQ7</spell>. Thanks!', words: ['Your', 'code', 'is', 'XQ7.', 'Thanks!'] },
  { transcript: 'Hello.<break time="300ms"/>Goodbye now.', words: ['Hello.', 'Goodbye', 'now.'] },
];

interface Timestamps {
  words: string[];
  start: number[];
  end: number[];
  /** Seconds of audio the answer carried. */
  seconds: number;
}

function collect(events: Event[]): Timestamps {
  const stamps = events.filter((e) => e.type === 'timestamps').map((e) => e.word_timestamps);
  const bytes = events.filter((e) => e.type === 'chunk').reduce((sum, e) => sum + Buffer.from(e.data, 'base64').length, 0);
  return { words: stamps.flatMap((t) => t.words), start: stamps.flatMap((t) => t.start), end: stamps.flatMap((t) => t.end), seconds: bytes / 2 / RATE };
}

/** Exactly these words, in order, each with a time inside the audio, starts never going backwards. */
function check(row: Row, got: Timestamps, how: string): void {
  assert.deepEqual(got.words, row.words, `${how}: ${row.transcript}`);
  assert.equal(got.start.length, got.words.length);
  assert.equal(got.end.length, got.words.length);
  for (let i = 0; i < got.words.length; i++) {
    const where = `${how}: ${row.transcript}: "${got.words[i]}" ${got.start[i]}–${got.end[i]}`;
    assert.ok(got.end[i] >= got.start[i], where);
    assert.ok(got.start[i] >= 0 && got.end[i] <= got.seconds + 0.01, `${where} within ${got.seconds} s`);
    if (i > 0) assert.ok(got.start[i] >= got.start[i - 1], `${where} after ${got.start[i - 1]}`);
  }
  assert.ok(got.end.at(-1)! > 0, `${how}: ${row.transcript}: times come from the audio`);
}

const message = (row: Row) => ({
  model_id: 'gepard-1.0',
  voice: { mode: 'id', id: 'sarah' },
  output_format: OUTPUT,
  add_timestamps: true,
  ...(row.dictionary ? { pronunciation_dict_id: dictId } : {}),
});

async function overSse(row: Row): Promise<Timestamps> {
  const response = await server.post('/tts/sse', ttsBody({ ...message(row), transcript: row.transcript }));
  assert.equal(response.status, 200);
  const events = (await response.text()).split('\n\n').filter((block) => block.trim()).map((block) => JSON.parse(block.slice(6)));
  assert.equal(events.at(-1).type, 'done');
  return collect(events);
}

/** One WebSocket turn: the transcript in `pieces`, each pushed with `continue`, then the end of input. */
async function overWebSocket(socket: TestSocket, contextId: string, row: Row, pieces: string[]): Promise<Timestamps> {
  const base = { ...message(row), context_id: contextId, max_buffer_delay_ms: 0 };
  for (const transcript of pieces) socket.send({ ...base, transcript, continue: true });
  socket.send({ ...base, transcript: '', continue: false });
  const end = await socket.waitFor((e) => e.context_id === contextId && (e.type === 'done' || e.type === 'error'), 30_000);
  assert.equal(end.type, 'done', JSON.stringify(end));
  return collect(socket.of(contextId));
}

/** Cuts text every `size` characters (code points), wherever that falls. */
function cut(text: string, size: number): string[] {
  const chars = [...text];
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''));
  return pieces;
}

describe('word timestamps name exactly the words sent (eSpeak NG)', () => {
  test('SSE', { timeout: 120_000 }, async () => {
    for (const row of TABLE) check(row, await overSse(row), 'SSE');
  });

  test('WebSocket, each transcript one message', { timeout: 120_000 }, async () => {
    const socket = await TestSocket.open(server.url);
    try {
      for (const [i, row] of TABLE.entries()) check(row, await overWebSocket(socket, `whole-${i}`, row, [row.transcript]), 'WebSocket');
    } finally {
      socket.close();
    }
  });

  test('WebSocket, each transcript streamed in pieces cut mid-word', { timeout: 180_000 }, async () => {
    const socket = await TestSocket.open(server.url);
    try {
      for (const [i, row] of TABLE.entries()) check(row, await overWebSocket(socket, `cut-${i}`, row, cut(row.transcript, 7)), 'WebSocket in pieces');
    } finally {
      socket.close();
    }
  });

  test('a word split across messages ("Hel" + "lo there") is reported once, whole; a flush ends the word it cuts', { timeout: 30_000 }, async () => {
    const socket = await TestSocket.open(server.url);
    try {
      const row = { transcript: 'Hello there', words: ['Hello', 'there'] };
      const got = await overWebSocket(socket, 'split', row, ['Hel', 'lo there']);
      check(row, got, 'WebSocket split');
      // The first piece was spoken before the rest arrived: its audio is part of the word.
      const heard = socket.of('split', 'chunk').length;
      assert.ok(heard >= 2, `${heard} chunks`);

      const base = { ...message(row), context_id: 'flushed', max_buffer_delay_ms: 0 };
      socket.send({ ...base, transcript: 'Good', continue: true, flush: true });
      socket.send({ ...base, transcript: 'bye now', continue: true });
      socket.send({ ...base, transcript: '', continue: false });
      await socket.waitFor((e) => e.context_id === 'flushed' && e.type === 'done', 20_000);
      const types = socket.of('flushed').map((e) => e.type);
      assert.ok(types.indexOf('timestamps') < types.indexOf('flush_done'), `the flushed word's time before flush_done: ${types}`);
      assert.deepEqual(collect(socket.of('flushed')).words, ['Good', 'bye', 'now']);
    } finally {
      socket.close();
    }
  });
});
