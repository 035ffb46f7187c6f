/**
 * @module test/languages.audio
 * What eSpeak NG says for each language, by the audio: a German request
 * with digits sounds like the same request with the words the normaliser
 * wrote out (log-mel spectrograms correlate ≥ 0.95; eSpeak's waveform is not
 * sample-reproducible), and unlike the English reading; a German voice with
 * no `language` reads German; SSML's `<lang xml:lang="fr-FR">` inside an
 * English request reads its span in French.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { logMel, spectrogramCorrelation } from './helpers/audio.js';
import { startServer, type TestServer } from './helpers/server.js';

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(() => server.close());

const RATE = 16000;

async function spectrogram(body: Record<string, unknown>): Promise<Float64Array[]> {
  const response = await server.post('/tts/bytes', { model_id: 'gepard-1.0', output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: RATE }, cache: false, ...body });
  assert.equal(response.status, 200, await response.clone().text());
  const bytes = Buffer.from(await response.arrayBuffer());
  return logMel(new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2), RATE);
}

describe('each language read as its speakers read it (eSpeak NG)', () => {
  test('German digits sound like the German words, not the English ones', { timeout: 60_000 }, async (t) => {
    const digits = await spectrogram({ voice: 'espeak-de', language: 'de', transcript: 'Ich habe 21 Äpfel für 3,50 € am 4. Mai gekauft.' });
    const words = await spectrogram({ voice: 'espeak-de', language: 'de', transcript: 'Ich habe einundzwanzig Äpfel für drei Euro fünfzig am vierten Mai gekauft.' });
    const english = await spectrogram({ voice: 'espeak-de', language: 'de', transcript: 'Ich habe twenty-one Äpfel für three euros and fifty cents am fourth May gekauft.' });
    const same = spectrogramCorrelation(digits, words);
    const other = spectrogramCorrelation(digits, english);
    t.diagnostic(`digits vs German words ${same.toFixed(3)}, vs English words ${other.toFixed(3)}`);
    assert.ok(same >= 0.95, `digits vs German words: ${same.toFixed(3)}`);
    assert.ok(other < same - 0.1, `digits vs English words: ${other.toFixed(3)} (German: ${same.toFixed(3)})`);
  });

  test('a German voice with no language reads German', { timeout: 60_000 }, async (t) => {
    const bare = await spectrogram({ voice: 'espeak-de', transcript: 'Es sind 21 Grad.' });
    const german = await spectrogram({ voice: 'espeak-de', transcript: 'Es sind einundzwanzig Grad.' });
    const correlation = spectrogramCorrelation(bare, german);
    t.diagnostic(`digits vs German words ${correlation.toFixed(3)}`);
    assert.ok(correlation >= 0.95, `${correlation.toFixed(3)}`);
  });

  test('the request’s language is read by that language’s voice: English voice, language fr', { timeout: 60_000 }, async (t) => {
    const asked = await spectrogram({ voice: 'sarah', language: 'fr', transcript: 'Il y a 21 chats.' });
    const french = await spectrogram({ voice: 'sarah', language: 'fr', transcript: 'Il y a vingt et un chats.' });
    const english = await spectrogram({ voice: 'sarah', transcript: 'Il y a 21 chats.' });
    const same = spectrogramCorrelation(asked, french);
    t.diagnostic(`digits vs French words ${same.toFixed(3)}, vs read as English ${spectrogramCorrelation(asked, english).toFixed(3)}`);
    assert.ok(same >= 0.95, `${same.toFixed(3)}`);
    assert.ok(spectrogramCorrelation(asked, english) < same - 0.1, 'read as English');
  });

  test('SSML <lang xml:lang="fr-FR"> inside English reads its span in French', { timeout: 60_000 }, async (t) => {
    const ssml = await spectrogram({ voice: 'sarah', transcript: '<speak>I counted <lang xml:lang="fr-FR">21 chats</lang>.</speak>' });
    const written = await spectrogram({ voice: 'sarah', transcript: '<speak>I counted <lang xml:lang="fr-FR">vingt et un chats</lang>.</speak>' });
    const english = await spectrogram({ voice: 'sarah', transcript: '<speak>I counted twenty-one chats.</speak>' });
    const same = spectrogramCorrelation(ssml, written);
    t.diagnostic(`digits vs French words ${same.toFixed(3)}, vs English words ${spectrogramCorrelation(ssml, english).toFixed(3)}`);
    assert.ok(same >= 0.95, `${same.toFixed(3)}`);
    assert.ok(spectrogramCorrelation(ssml, english) < same - 0.1, 'read as English');
  });
});
