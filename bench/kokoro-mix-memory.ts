/**
 * @module bench/kokoro-mix-memory
 * What a Kokoro mix costs in memory. A Kokoro model mixes through rows of its
 * style table (`engines/sherpa/style-mix.ts`), which sherpa-onnx keeps in
 * memory in every worker. Each round loads the stand-in Kokoro v1 model
 * (53 speakers, the real table's shape: 510 × 256 floats a speaker) with 0
 * and with 64 mix rows, each in a fresh child process, and reports the
 * resident memory after the load and one generation; the baseline is the
 * same model with no mix rows. Run: `node dist/bench/kokoro-mix-memory.js`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StyleTable } from '../src/engines/sherpa/style-mix.js';
import { KOKORO_STYLE_DIM, KOKORO_V1_SPEAKERS, kokoroStandIn, removeRunDir } from '../test/helpers/sherpa-model.js';
import { isMain } from './lib/load.js';
import { machineLine } from './lib/machine.js';

const SLOTS = [0, 64];
const ROUNDS = 3;

/** In the child: loads the model (its files as the parent prepared them), speaks once, prints the RSS in bytes. */
async function child(model: string, onnx: string, voices: string, slots: number): Promise<void> {
  const { default: sherpa } = await import('sherpa-onnx-node');
  const speakers = KOKORO_V1_SPEAKERS.length;
  const files = { model: onnx, voices };
  const tts = new sherpa.OfflineTts({
    model: { kokoro: { ...files, tokens: join(model, 'tokens.txt'), dataDir: join(model, 'espeak-ng-data'), lexicon: join(model, 'lexicon-us-en.txt') }, numThreads: 1 },
    maxNumSentences: 1,
  });
  tts.generate({ text: 'Hello world.', sid: 0, speed: 1, generationConfig: { sid: speakers + slots - 1, speed: 1 } });
  globalThis.gc?.();
  process.stdout.write(`${process.memoryUsage().rss}\n`);
}

function main(): void {
  const model = kokoroStandIn();
  const script = fileURLToPath(import.meta.url);
  const rss: Record<number, number[]> = Object.fromEntries(SLOTS.map((s) => [s, []]));
  // The tables are written here, so the children hold only what sherpa-onnx loads.
  const files = Object.fromEntries(
    SLOTS.map((slots) => [
      slots,
      slots === 0
        ? { model: join(model, 'model.onnx'), voices: join(model, 'voices.bin') }
        : new StyleTable({ model: join(model, 'model.onnx'), voices: join(model, 'voices.bin') }, KOKORO_V1_SPEAKERS.length, slots, { rows: KOKORO_STYLE_DIM[0], width: KOKORO_STYLE_DIM[2] }, mkdtempSync(join(tmpdir(), 'mix-')), async () => {}).files,
    ]),
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (const slots of SLOTS) {
      const out = execFileSync(process.execPath, ['--expose-gc', script, 'child', model, files[slots].model, files[slots].voices, String(slots)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      rss[slots].push(Number(out.trim()));
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const base = median(rss[0]);
  const mixed = median(rss[SLOTS[1]]);
  const perSlot = (mixed - base) / SLOTS[1];
  console.log(machineLine());
  console.log(`RSS with 0 mix rows: ${(base / 2 ** 20).toFixed(1)} MiB; with ${SLOTS[1]}: ${(mixed / 2 ** 20).toFixed(1)} MiB (medians of ${ROUNDS})`);
  console.log(`per mix row: ${(perSlot / 1024).toFixed(0)} KiB measured; ${((KOKORO_STYLE_DIM[0] * KOKORO_STYLE_DIM[2] * 4) / 1024).toFixed(0)} KiB of style values`);
  removeRunDir();
}

if (process.argv[2] === 'child') await child(process.argv[3], process.argv[4], process.argv[5], Number(process.argv[6]));
else if (isMain(import.meta.url)) main();
