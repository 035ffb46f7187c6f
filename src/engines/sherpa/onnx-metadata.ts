/**
 * @module engines/sherpa/onnx-metadata
 * Reads an ONNX file's top-level structure and its `metadata_props` without
 * loading the model: sherpa-onnx aborts the whole process on a corrupt file
 * or on a Piper export that lacks its metadata, so both are checked first.
 * The file is walked field by field with positional reads (the graph, most
 * of the bytes, is skipped by its length, never read), which also proves the
 * top level is intact up to the last byte. Only the few protobuf wire rules
 * of `ModelProto` are needed, so this is a reader of its own rather than a
 * protobuf runtime in the server.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

export interface OnnxSummary {
  irVersion: number;
  hasGraph: boolean;
  metadata: Record<string, string>;
}

/** Thrown with a sentence that names what is wrong with the file. */
export class OnnxFormatError extends Error {}

const GRAPH = 7;
const METADATA = 14;
/** Metadata entries are small; anything larger is not a metadata entry. */
const MAX_ENTRY = 1 << 20;

export function readOnnxSummary(path: string): OnnxSummary {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) throw new OnnxFormatError('the file is empty');
    const reader = new FileReader(fd, size);
    const summary: OnnxSummary = { irVersion: 0, hasGraph: false, metadata: {} };
    while (reader.position < size) {
      const tag = reader.varint();
      const field = Math.floor(tag / 8);
      const wire = tag & 7;
      if (field === 0) throw new OnnxFormatError(`field number 0 at byte ${reader.position}`);
      if (wire === 0) {
        const value = reader.varint();
        if (field === 1) summary.irVersion = value;
      } else if (wire === 2) {
        const length = reader.varint();
        if (reader.position + length > size) throw new OnnxFormatError(`field ${field} runs ${reader.position + length - size} bytes past the end (truncated?)`);
        if (field === METADATA) {
          if (length > MAX_ENTRY) throw new OnnxFormatError('a metadata entry is implausibly large');
          const [key, value] = entry(reader.bytes(length));
          summary.metadata[key] = value;
        } else {
          if (field === GRAPH) summary.hasGraph = length > 0;
          reader.advance(length);
        }
      } else if (wire === 1) reader.advance(8);
      else if (wire === 5) reader.advance(4);
      else throw new OnnxFormatError(`unknown wire type ${wire} at byte ${reader.position}`);
    }
    if (reader.position !== size) throw new OnnxFormatError('the last field runs past the end (truncated?)');
    if (summary.irVersion < 1 || summary.irVersion > 100) throw new OnnxFormatError(`IR version ${summary.irVersion} is not an ONNX IR version`);
    if (!summary.hasGraph) throw new OnnxFormatError('it has no graph');
    return summary;
  } finally {
    closeSync(fd);
  }
}

const GRAPH_INPUT = 11;

/**
 * The names of the graph's inputs (`GraphProto.input`, each a `ValueInfoProto` whose name is field
 * 1), read as the summary is: the nodes and weights are skipped by their lengths, never read. A
 * Piper graph takes `sid` only when it was trained with several speakers.
 */
export function readGraphInputs(path: string): string[] {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const reader = new FileReader(fd, size);
    const names: string[] = [];
    let graphEnd = -1;
    while (reader.position < size) {
      if (graphEnd >= 0 && reader.position >= graphEnd) {
        graphEnd = -1;
        continue;
      }
      const tag = reader.varint();
      const field = Math.floor(tag / 8);
      const wire = tag & 7;
      const inGraph = graphEnd >= 0;
      if (wire === 0) reader.varint();
      else if (wire === 2) {
        const length = reader.varint();
        if (reader.position + length > size) throw new OnnxFormatError(`field ${field} runs ${reader.position + length - size} bytes past the end (truncated?)`);
        if (!inGraph && field === GRAPH) graphEnd = reader.position + length; // walk into the graph
        else if (inGraph && field === GRAPH_INPUT && length <= MAX_ENTRY) names.push(valueInfoName(reader.bytes(length)));
        else reader.advance(length);
      } else if (wire === 1) reader.advance(8);
      else if (wire === 5) reader.advance(4);
      else throw new OnnxFormatError(`unknown wire type ${wire} at byte ${reader.position}`);
    }
    return names;
  } finally {
    closeSync(fd);
  }
}

/** A `ValueInfoProto`'s name (field 1); its type, further on, is not needed. */
function valueInfoName(bytes: Buffer): string {
  if (bytes[0] !== 0x0a) return '';
  let length = 0;
  let at = 1;
  for (let shift = 0; at < bytes.length && shift < 35; shift += 7) {
    const b = bytes[at++];
    length += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) break;
  }
  return bytes.subarray(at, at + length).toString('utf8');
}

/**
 * The bytes that, appended to an ONNX file, add `entries` to its `metadata_props` (field 14): a
 * protobuf message may repeat a field anywhere, so the file itself is copied untouched, as
 * `onnx.save` after `metadata_props.add()` would make it read.
 */
export function metadataBytes(entries: Record<string, string>): Buffer {
  const varint = (n: number) => {
    const out: number[] = [];
    while (n >= 0x80) {
      out.push((n & 0x7f) | 0x80);
      n = Math.floor(n / 128);
    }
    out.push(n);
    return Buffer.from(out);
  };
  const field = (tag: number, body: Buffer) => Buffer.concat([Buffer.from([tag]), varint(body.length), body]);
  return Buffer.concat(
    Object.entries(entries).map(([key, value]) => field((METADATA << 3) | 2, Buffer.concat([field(0x0a, Buffer.from(key, 'utf8')), field(0x12, Buffer.from(value, 'utf8'))]))),
  );
}

/** A `StringStringEntryProto`: key = 1, value = 2. */
function entry(bytes: Buffer): [string, string] {
  let key = '';
  let value = '';
  let at = 0;
  const varint = () => {
    let result = 0;
    for (let shift = 0; ; shift += 7) {
      if (at >= bytes.length || shift > 35) throw new OnnxFormatError('a metadata entry is malformed');
      const b = bytes[at++];
      result += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return result;
    }
  };
  while (at < bytes.length) {
    const tag = varint();
    if ((tag & 7) !== 2) throw new OnnxFormatError('a metadata entry is malformed');
    const length = varint();
    if (at + length > bytes.length) throw new OnnxFormatError('a metadata entry is malformed');
    const text = bytes.subarray(at, at + length).toString('utf8');
    at += length;
    if (tag >> 3 === 1) key = text;
    else if (tag >> 3 === 2) value = text;
  }
  return [key, value];
}

class FileReader {
  position = 0;
  private readonly small = Buffer.alloc(10);

  constructor(
    private readonly fd: number,
    private readonly size: number,
  ) {}

  varint(): number {
    const n = readSync(this.fd, this.small, 0, Math.min(10, this.size - this.position), this.position);
    let result = 0;
    for (let i = 0; i < n; i++) {
      const b = this.small[i];
      result += (b & 0x7f) * 2 ** (7 * i);
      if (b < 0x80) {
        this.position += i + 1;
        if (!Number.isSafeInteger(result)) throw new OnnxFormatError('a length is out of range');
        return result;
      }
    }
    throw new OnnxFormatError(`a malformed number at byte ${this.position} (truncated?)`);
  }

  bytes(length: number): Buffer {
    const buffer = Buffer.alloc(length);
    const n = readSync(this.fd, buffer, 0, length, this.position);
    if (n !== length) throw new OnnxFormatError('the file ends early (truncated?)');
    this.position += length;
    return buffer;
  }

  advance(length: number): void {
    if (this.position + length > this.size) throw new OnnxFormatError('the file ends early (truncated?)');
    this.position += length;
  }
}
