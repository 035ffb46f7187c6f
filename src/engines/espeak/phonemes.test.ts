/**
 * @module engines/espeak/phonemes.test
 * The IPA → eSpeak table against eSpeak NG itself (the bundled build): every sound's mnemonic is one
 * its English phoneme tables read, two sounds side by side are read as two (checked against the
 * tables' mnemonics, as eSpeak reads phoneme input: longest first), and the anchors' examples are
 * spoken as the phonemes asked (eSpeak's own phoneme events, on this thread).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { before, test } from 'node:test';
import { IPA_SOUNDS, ipaTokens, normalisePhonemes } from '../phonemes.js';
import { ESPEAK_ENGLISH, espeakMnemonics } from './phonemes.js';

interface Speaker {
  set_voice(name: string): number;
  synthesize(text: string, callback: (pcm: Int16Array, events: { type: string; id?: string }[] | undefined) => boolean): void;
}
let espeak: Speaker;
let voiceInUse = '';
before(async () => {
  const { default: factory } = await import('@echogarden/espeak-ng-emscripten');
  const module = (await factory()) as { eSpeakNGWorker: new () => Speaker };
  espeak = new module.eSpeakNGWorker();
});

/** The phonemes eSpeak says it spoke for `text`, as its IPA names. */
function spoken(text: string, voice = 'en-us'): string[] {
  // Setting a voice loads it: only when it changes.
  if (voice !== voiceInUse) espeak.set_voice(voice);
  voiceInUse = voice;
  const phonemes: string[] = [];
  espeak.synthesize(text, (_pcm, events) => {
    for (const event of events ?? []) if (event.type === 'phoneme' && event.id) phonemes.push(event.id);
    return false;
  });
  return phonemes;
}

/**
 * The mnemonics each English phoneme table of this eSpeak NG build can read (its own and those of the
 * tables it includes), from its compiled `phontab`: per table a count, the index + 1 of the table it
 * includes, a 32-byte name, then 16 bytes per phoneme with the mnemonic (up to 4 bytes) first.
 */
function englishTables(): Map<string, Set<string>> {
  const dir = dirname(createRequire(import.meta.url).resolve('@echogarden/espeak-ng-emscripten/package.json'));
  const loader = readFileSync(join(dir, 'espeak-ng.js'), 'utf8');
  const range = /\{filename:"[^"]*\/phontab",start:(\d+),end:(\d+)\}/u.exec(loader)!;
  const bytes = readFileSync(join(dir, 'espeak-ng.data')).subarray(Number(range[1]), Number(range[2]));
  const tables: { name: string; includes: number; mnemonics: string[] }[] = [];
  let at = 4;
  for (let t = 0; t < bytes[0]; t++) {
    const [count, includes] = [bytes[at], bytes[at + 1]];
    const name = bytes.subarray(at + 4, at + 36).toString('latin1').replace(/\0.*$/su, '');
    at += 36;
    const mnemonics: string[] = [];
    for (let i = 0; i < count; i++, at += 16) mnemonics.push(bytes.subarray(at, at + 4).toString('latin1').replace(/\0.*$/su, ''));
    tables.push({ name, includes, mnemonics });
  }
  const chains = new Map<string, Set<string>>();
  for (const table of tables.filter((t) => t.name === 'en' || t.name.startsWith('en-'))) {
    const readable = new Set<string>();
    for (let t: (typeof tables)[number] | undefined = table; t; t = t.includes > 0 ? tables[t.includes - 1] : undefined) {
      for (const mnemonic of t.mnemonics) if (mnemonic) readable.add(mnemonic);
    }
    chains.set(table.name, readable);
  }
  return chains;
}

/** How eSpeak reads phoneme input: the longest mnemonic at each place, `|` a boundary only. */
function readAs(input: string, mnemonics: Set<string>): string[] {
  const read: string[] = [];
  for (let at = 0; at < input.length; ) {
    if (input[at] === '|') {
      at++;
      continue;
    }
    let length = Math.min(4, input.length - at);
    while (length > 0 && !mnemonics.has(input.slice(at, at + length))) length--;
    assert.ok(length > 0, `eSpeak reads nothing at ${input.slice(at)}`);
    read.push(input.slice(at, at + length));
    at += length;
  }
  return read;
}

test('every mnemonic of the table is one each English phoneme table of eSpeak NG reads', () => {
  const chains = englishTables();
  assert.ok(chains.has('en') && chains.has('en-us') && chains.has('en-rp'), [...chains.keys()].join());
  for (const [table, readable] of chains) {
    for (const sound of IPA_SOUNDS) assert.ok(readable.has(ESPEAK_ENGLISH[sound]), `${table}: ${sound} → ${ESPEAK_ENGLISH[sound]}`);
  }
});

test('two sounds side by side are read as two mnemonics in every English table, never as one', () => {
  let pairs = 0;
  for (const [table, readable] of englishTables()) {
    for (const a of IPA_SOUNDS) {
      for (const b of IPA_SOUNDS) {
        const tokens = ipaTokens(a + b);
        // Read as other sounds (e + ɪ is eɪ, i + əʊ is iə ʊ): not this pair.
        if (tokens.length !== 2 || tokens[0].kind !== 'sound' || tokens[0].ipa !== a || tokens[1].kind !== 'sound' || tokens[1].ipa !== b) continue;
        pairs++;
        assert.deepEqual(readAs(espeakMnemonics(a + b), readable), [ESPEAK_ENGLISH[a], ESPEAK_ENGLISH[b]], `${table}: ${a} + ${b} → ${espeakMnemonics(a + b)}`);
      }
    }
  }
  assert.ok(pairs > 3000 * 8, `${pairs} pairs`);
});

test('the anchors’ examples are spoken as the phonemes asked', () => {
  assert.deepEqual(spoken(`[[${espeakMnemonics(normalisePhonemes('pɪˈkɑːn', 'ipa'))}]]`, 'en-gb-x-rp'), ['p', 'ɪ', 'k', 'ˈɑː', 'n']);
  assert.deepEqual(spoken(`[[${espeakMnemonics(normalisePhonemes('pI"kA:n', 'x-sampa'))}]]`, 'en-gb-x-rp'), ['p', 'ɪ', 'k', 'ˈɑː', 'n']);
  const tomato = (ipa: string) => spoken(`[[${espeakMnemonics(normalisePhonemes(ipa, 'ipa'))}]]`).filter(Boolean);
  assert.deepEqual(tomato('təˈmeɪtoʊ'), ['t', 'ə', 'm', 'ˈeɪ', 'ɾ', 'oʊ']);
  assert.deepEqual(tomato('təˈmɑːtoʊ'), ['t', 'ə', 'm', 'ˈɑː', 'ɾ', 'oʊ']);
  // The IPA of "hello" is what eSpeak says for the word.
  assert.deepEqual(spoken(`[[${espeakMnemonics(normalisePhonemes('həˈloʊ', 'ipa'))}]]`), spoken('hello'));
  // Sounds that would read as one mnemonic are parted: æ then ɪ is not aɪ.
  assert.equal(espeakMnemonics('æɪ'), 'a|I');
  assert.deepEqual(spoken(`[[${espeakMnemonics('ˈæɪ')}]]`).filter(Boolean), ['ˈæ', 'i']);
});
