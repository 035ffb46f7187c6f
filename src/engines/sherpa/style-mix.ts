/**
 * @module engines/sherpa/style-mix
 * Kokoro voice mixes as rows of the model's own style table. Kokoro speaks a
 * speaker from its style table (`voices.bin`: per speaker, a 256-value style
 * vector for every token count up to 510), and a mix is the weighted mean of
 * its speakers' tables. sherpa-onnx-node takes only a speaker id per call and
 * reads the table once, when a model loads, checking its size against the
 * model's `n_speakers` metadata; so the engine loads a copy of the model whose
 * `n_speakers` counts `slots` more speakers (one metadata entry appended to
 * the file: onnxruntime keeps the last of a key) and a table with as many
 * rows after the speakers'. A mix takes a free slot (or the least recently
 * used one no request is speaking), its rows are written there, and the
 * workers load the model again, once for every mix that arrived meanwhile;
 * a mix already in the table is served at once, with no reload. Each slot
 * costs 510 × 256 × 4 = 522,240 bytes in every worker (sherpa keeps the table
 * in memory), and the copy of the model its size on disk.
 */
import { appendFileSync, closeSync, copyFileSync, existsSync, mkdirSync, openSync, readSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Speaker ids and their shares (summing to 1), largest first. */
export type StyleMix = readonly (readonly [sid: number, weight: number])[];

interface Slot {
  key: string;
  index: number;
  /** In the table the workers have loaded. */
  loaded: boolean;
  /** Requests speaking it now: a slot in use is never given to another mix. */
  users: number;
  lastUsed: number;
}

export interface StyleTableFiles {
  model: string;
  voices: string;
}

/** The style table's shape from Kokoro's `style_dim` metadata (`510,1,256`), or undefined. */
export function styleShape(metadata: Record<string, string>): { rows: number; width: number } | undefined {
  const dims = (metadata.style_dim ?? '').split(',').map(Number);
  if (dims.length !== 3 || !dims.every((d) => Number.isInteger(d) && d > 0)) return undefined;
  return { rows: dims[0], width: dims[2] };
}

export class StyleTable {
  private readonly slots: (Slot | null)[];
  private readonly byKey = new Map<string, Slot>();
  private readonly pending = new Set<Slot>();
  private reloading: Promise<void> | null = null;
  private readonly rowBytes: number;
  /** The copy of the model and the table the workers load. */
  readonly files: StyleTableFiles;

  /**
   * Prepares `dir` for a model with `speakers` speakers and `slots` mix rows: the model copied (kept
   * from an earlier start when the original has not changed since) with its `n_speakers` raised, and
   * the table with every slot holding speaker 0 until a mix takes it.
   */
  constructor(
    private readonly source: StyleTableFiles,
    private readonly speakers: number,
    slotCount: number,
    shape: { rows: number; width: number },
    dir: string,
    /** Loads the table again in every worker (a new pool in place of the old). */
    private readonly reload: () => Promise<void>,
  ) {
    this.rowBytes = shape.rows * shape.width * 4;
    this.slots = Array.from({ length: slotCount }, () => null);
    mkdirSync(dir, { recursive: true });
    this.files = { model: join(dir, 'model.onnx'), voices: join(dir, 'voices.bin') };
    const extra = metadataEntry('n_speakers', String(speakers + slotCount));
    const original = statSync(source.model);
    const copy = existsSync(this.files.model) ? statSync(this.files.model) : null;
    if (!copy || copy.size !== original.size + extra.length || copy.mtimeMs < original.mtimeMs) {
      copyFileSync(source.model, this.files.model);
      appendFileSync(this.files.model, extra);
    }
    const table = Buffer.alloc(this.rowBytes * (speakers + slotCount));
    const fd = openSync(source.voices, 'r');
    try {
      readSync(fd, table, 0, this.rowBytes * speakers, 0);
    } finally {
      closeSync(fd);
    }
    for (let i = 0; i < slotCount; i++) table.copy(table, this.rowBytes * (speakers + i), 0, this.rowBytes);
    writeFileSync(this.files.voices, table);
  }

  /** Mix rows the table holds. */
  get capacity(): number {
    return this.slots.length;
  }

  /**
   * The speaker id `mix` is spoken with, written into the table and loaded by the workers first
   * when it is not there yet; `release` when the request is done with it.
   */
  async acquire(mix: StyleMix): Promise<{ sid: number; release(): void }> {
    const key = mix.map(([sid, weight]) => `${sid}:${weight.toFixed(6)}`).join(',');
    let slot = this.byKey.get(key);
    if (!slot) slot = this.take(key, mix);
    slot.users++;
    slot.lastUsed = performance.now();
    const taken = slot;
    try {
      while (!taken.loaded) await this.load();
    } catch (err) {
      taken.users--;
      throw err;
    }
    return { sid: this.speakers + taken.index, release: () => void taken.users-- };
  }

  private take(key: string, mix: StyleMix): Slot {
    let index = this.slots.findIndex((s) => s === null);
    if (index < 0) {
      const idle = this.slots.filter((s): s is Slot => s !== null && s.users === 0 && !this.pending.has(s)).sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (!idle) throw new MixTableFull(this.slots.length);
      this.byKey.delete(idle.key);
      index = idle.index;
    }
    const slot: Slot = { key, index, loaded: false, users: 0, lastUsed: performance.now() };
    this.slots[index] = slot;
    this.byKey.set(key, slot);
    this.write(index, mix);
    this.pending.add(slot);
    return slot;
  }

  /** The weighted mean of the speakers' rows, written at the slot's place in the table. */
  private write(index: number, mix: StyleMix): void {
    const row = Buffer.alloc(this.rowBytes);
    const sum = new Float32Array(this.rowBytes / 4);
    const fd = openSync(this.source.voices, 'r');
    try {
      for (const [sid, weight] of mix) {
        readSync(fd, row, 0, this.rowBytes, sid * this.rowBytes);
        const values = new Float32Array(row.buffer, row.byteOffset, sum.length);
        for (let i = 0; i < sum.length; i++) sum[i] += weight * values[i];
      }
    } finally {
      closeSync(fd);
    }
    const out = openSync(this.files.voices, 'r+');
    try {
      writeSync(out, new Uint8Array(sum.buffer), 0, this.rowBytes, (this.speakers + index) * this.rowBytes);
    } finally {
      closeSync(out);
    }
  }

  /** One reload for every mix written before it starts; a mix written during it waits for the next. */
  private load(): Promise<void> {
    this.reloading ??= (async () => {
      const batch = [...this.pending];
      this.pending.clear();
      try {
        await this.reload();
        for (const slot of batch) slot.loaded = true;
      } catch (err) {
        for (const slot of batch) this.pending.add(slot);
        throw err;
      } finally {
        this.reloading = null;
      }
    })();
    return this.reloading;
  }
}

const varint = (n: number): Buffer => {
  const bytes: number[] = [];
  for (; n > 0x7f; n >>>= 7) bytes.push((n & 0x7f) | 0x80);
  bytes.push(n);
  return Buffer.from(bytes);
};

/** One `ModelProto.metadata_props` entry (field 14: a `StringStringEntryProto` of key 1 and value 2) as protobuf bytes. */
export function metadataEntry(key: string, value: string): Buffer {
  const k = Buffer.from(key);
  const v = Buffer.from(value);
  const entry = Buffer.concat([Buffer.from([0x0a]), varint(k.length), k, Buffer.from([0x12]), varint(v.length), v]);
  return Buffer.concat([Buffer.from([(14 << 3) | 2]), varint(entry.length), entry]);
}

/** Every mix row is spoken by a request right now. */
export class MixTableFull extends Error {
  constructor(readonly slots: number) {
    super(`all ${slots} mix slots are in use`);
  }
}
