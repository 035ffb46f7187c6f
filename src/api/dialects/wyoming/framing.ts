/**
 * @module api/wyoming/framing
 * The Wyoming protocol's framing, as its reference library (the Python
 * `wyoming` package that Home Assistant uses) writes and reads it: one JSON
 * header line (`type`, optional `data`, `data_length`, `payload_length`),
 * then `data_length` bytes of JSON merged over the header's `data`, then
 * `payload_length` bytes of payload. The decoder is incremental (events may
 * arrive split across reads, or several in one) and bounded: a header line,
 * a data block and a payload each have a cap, and nothing is allocated for a
 * length before its bytes have arrived. The encoder keeps each header line
 * short, because readers use asyncio's default 64 KiB line limit: data over
 * 8 KiB (a large `info`) goes in the data block.
 */

/** The protocol version written in each header, as the reference writer does (the version that added streaming synthesis). */
export const PROTOCOL_VERSION = '1.7.0';

/** Data up to this size (its JSON's bytes) is written inline in the header; larger data goes in the data block. */
export const INLINE_DATA_BYTES = 8192;

export interface WyomingEvent {
  type: string;
  /** The header's `data` with the data block merged over it (`{}` when neither was sent). */
  data: Record<string, unknown>;
  /** The payload; null when `payload_length` was absent or 0. */
  payload: Buffer | null;
}

export interface DecoderLimits {
  /** A header line longer than this (without its newline) is malformed. */
  maxHeaderBytes: number;
  maxDataBytes: number;
  maxPayloadBytes: number;
}

export const DEFAULT_LIMITS: DecoderLimits = { maxHeaderBytes: 65536, maxDataBytes: 1 << 20, maxPayloadBytes: 1 << 20 };

/** The stream cannot be read further: what follows cannot be told apart from garbage. */
export class FramingError extends Error {
  constructor(
    message: string,
    /** The registry code it is reported with. */
    readonly code: 'invalid_message' | 'payload_too_large',
    /** The cap a length went over (`payload_too_large`). */
    readonly limit?: number,
  ) {
    super(message);
  }
}

interface Header {
  type: string;
  data: Record<string, unknown>;
  dataLength: number;
  payloadLength: number;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A length field: absent, null or a non-negative integer (0 means none). */
function lengthField(value: unknown, name: string, max: number): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new FramingError(`${name} must be a non-negative integer`, 'invalid_message');
  if (value > max) throw new FramingError(`${name} ${value} is over the limit of ${max} bytes`, 'payload_too_large', max);
  return value;
}

function parseJsonObject(bytes: Buffer, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new FramingError(`the ${what} is not valid JSON`, 'invalid_message');
  }
  if (!isObject(value)) throw new FramingError(`the ${what} is not a JSON object`, 'invalid_message');
  return value;
}

/** Reads events from a byte stream. After a `FramingError` the decoder is unusable (the stream is out of step). */
export class EventDecoder {
  private buffer: Buffer = Buffer.alloc(0);
  private header: Header | null = null;
  private failed = false;

  constructor(private readonly limits: DecoderLimits = DEFAULT_LIMITS) {}

  /** Bytes received but not yet part of a whole event. */
  get buffered(): number {
    return this.buffer.length;
  }

  /** Takes the next bytes and returns the events they complete; throws `FramingError` on malformed input. */
  push(chunk: Buffer): WyomingEvent[] {
    if (this.failed) throw new FramingError('the stream is no longer readable', 'invalid_message');
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const events: WyomingEvent[] = [];
    try {
      for (;;) {
        const event = this.next();
        if (!event) break;
        events.push(event);
      }
    } catch (err) {
      this.failed = true;
      this.buffer = Buffer.alloc(0);
      throw err;
    }
    return events;
  }

  private next(): WyomingEvent | null {
    if (!this.header) {
      const newline = this.buffer.indexOf(0x0a);
      if (newline < 0) {
        if (this.buffer.length > this.limits.maxHeaderBytes) throw new FramingError(`a header line is over ${this.limits.maxHeaderBytes} bytes`, 'invalid_message');
        return null;
      }
      if (newline > this.limits.maxHeaderBytes) throw new FramingError(`a header line is over ${this.limits.maxHeaderBytes} bytes`, 'invalid_message');
      const line = this.buffer.subarray(0, newline);
      this.buffer = this.buffer.subarray(newline + 1);
      // A blank line between events carries nothing (a reader that strips lines would skip it too).
      if (line.toString('utf8').trim() === '') return this.next();
      this.header = this.readHeader(line);
    }
    const { dataLength, payloadLength } = this.header;
    if (this.buffer.length < dataLength + payloadLength) return null;
    const header = this.header;
    this.header = null;
    let data = header.data;
    if (dataLength > 0) data = { ...data, ...parseJsonObject(this.buffer.subarray(0, dataLength), 'data block') };
    // The payload is copied out, so the read buffer behind it can be let go.
    const payload = payloadLength > 0 ? Buffer.from(this.buffer.subarray(dataLength, dataLength + payloadLength)) : null;
    this.buffer = this.buffer.subarray(dataLength + payloadLength);
    if (this.buffer.length === 0) this.buffer = Buffer.alloc(0);
    return { type: header.type, data, payload };
  }

  private readHeader(line: Buffer): Header {
    const fields = parseJsonObject(line, 'header line');
    if (typeof fields.type !== 'string' || fields.type.length === 0 || fields.type.length > 256) throw new FramingError('the header has no type', 'invalid_message');
    const data = fields.data ?? {};
    if (!isObject(data)) throw new FramingError('the header’s data is not a JSON object', 'invalid_message');
    return {
      type: fields.type,
      data,
      dataLength: lengthField(fields.data_length, 'data_length', this.limits.maxDataBytes),
      payloadLength: lengthField(fields.payload_length, 'payload_length', this.limits.maxPayloadBytes),
    };
  }
}

/**
 * One event's bytes: the header line, the data block when the data is too large to sit inline, and
 * the payload. Empty data and an empty payload are left out, as the reference writer leaves them.
 */
export function encodeEvent(type: string, data: Record<string, unknown> | null = null, payload: Buffer | null = null): Buffer[] {
  const header: Record<string, unknown> = { type, version: PROTOCOL_VERSION };
  let block: Buffer | null = null;
  if (data && Object.keys(data).length > 0) {
    const json = JSON.stringify(data);
    if (Buffer.byteLength(json) <= INLINE_DATA_BYTES) header.data = data;
    else {
      block = Buffer.from(json, 'utf8');
      header.data_length = block.length;
    }
  }
  if (payload && payload.length > 0) header.payload_length = payload.length;
  const out: Buffer[] = [Buffer.from(JSON.stringify(header) + '\n', 'utf8')];
  if (block) out.push(block);
  if (payload && payload.length > 0) out.push(payload);
  return out;
}
