/**
 * @module engines/sherpa/style-mix.test
 * The style table of Kokoro mixes on small files: the copy of the model
 * carries the raised `n_speakers`, a mix's row is the weighted mean of its
 * speakers' rows, mixes that arrive together share one reload, a full table
 * gives the least recently used idle row to a new mix, and a table whose rows
 * are all being spoken refuses one.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readOnnxSummary } from './onnx-metadata.js';
import { metadataEntry, MixTableFull, StyleTable } from './style-mix.js';

const SHAPE = { rows: 2, width: 3 };
const ROW = SHAPE.rows * SHAPE.width;

function table(slots: number) {
  const dir = mkdtempSync(join(tmpdir(), 'style-mix-'));
  // A model file of a graph with nothing but a name, and its metadata: enough for the reader, and for the append.
  writeFileSync(join(dir, 'model.onnx'), Buffer.concat([Buffer.from([0x08, 0x07, 0x3a, 0x02, 0x12, 0x00]), metadataEntry('n_speakers', '3'), metadataEntry('model_type', 'kokoro')]));
  // Speaker s: every value s + 1.
  writeFileSync(join(dir, 'voices.bin'), Buffer.from(Float32Array.from({ length: 3 * ROW }, (_, i) => Math.floor(i / ROW) + 1).buffer));
  let reloads = 0;
  let release: () => void = () => {};
  let gate: Promise<void> = Promise.resolve();
  const styles = new StyleTable({ model: join(dir, 'model.onnx'), voices: join(dir, 'voices.bin') }, 3, slots, SHAPE, join(dir, 'mix'), async () => {
    reloads++;
    await gate;
  });
  const rows = () => new Float32Array(new Uint8Array(readFileSync(styles.files.voices)).buffer);
  const hold = () => (gate = new Promise((resolve) => (release = resolve)));
  return { styles, rows, reloads: () => reloads, hold, open: () => release() };
}

test('the copy of the model counts the mix rows; a mix row is the weighted mean of its speakers', async () => {
  const t = table(2);
  assert.equal(readOnnxSummary(t.styles.files.model).metadata.n_speakers, '5');
  assert.deepEqual([...t.rows()].slice(3 * ROW), new Array(2 * ROW).fill(1), 'unused rows hold speaker 0');
  const { sid } = await t.styles.acquire([[0, 0.75], [2, 0.25]]);
  assert.equal(sid, 3);
  assert.deepEqual([...t.rows()].slice(3 * ROW, 4 * ROW), new Array(ROW).fill(0.75 * 1 + 0.25 * 3));
  assert.equal(t.reloads(), 1);
  assert.equal((await t.styles.acquire([[0, 0.75], [2, 0.25]])).sid, 3);
  assert.equal(t.reloads(), 1, 'a mix in the table needs no reload');
});

test('mixes that arrive during a reload share the next one; a full table reuses its least recently used idle row', async () => {
  const t = table(3);
  t.hold();
  const first = t.styles.acquire([[0, 0.5], [1, 0.5]]);
  const second = t.styles.acquire([[1, 0.5], [2, 0.5]]);
  const third = t.styles.acquire([[0, 0.25], [1, 0.75]]);
  const fourth = await t.styles.acquire([[0, 0.5], [2, 0.5]]).catch((err: unknown) => err);
  assert.ok(fourth instanceof MixTableFull, 'every row is wanted by a request: a fourth mix is refused');
  t.open();
  const [a, b, c] = await Promise.all([first, second, third]);
  assert.deepEqual([a.sid, b.sid, c.sid], [3, 4, 5]);
  assert.equal(t.reloads(), 2, 'the first mix loaded alone; the two that came during its reload, together');
  for (const slot of [a, b, c]) slot.release();
  await t.styles.acquire([[1, 0.5], [2, 0.5]]);
  const d = await t.styles.acquire([[0, 0.5], [2, 0.5]]);
  assert.equal(d.sid, 3, 'the least recently used idle row');
  assert.deepEqual([...t.rows()].slice(3 * ROW, 4 * ROW), new Array(ROW).fill(2));
  assert.equal(t.reloads(), 3);
});
