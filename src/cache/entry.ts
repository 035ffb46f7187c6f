/**
 * @module cache/entry
 * A cached response: the pieces a synthesis produced, in order, each with
 * its audio bytes, the seconds of audio behind it and the word timestamps
 * that came with it, so a hit is framed exactly as its miss was.
 *
 * On disk (and in any shared tier) an entry is one blob: `VGA1`, the
 * SHA-256 of the rest, a 4-byte length, a JSON header (the pieces' sizes,
 * seconds and words) and the audio bytes one after another. A blob whose
 * digest does not match is corrupt: it decodes to null and counts as a miss.
 */
import { createHash } from 'node:crypto';
import type { WordTiming } from '../engines/engine.js';

export interface CachedPiece {
  audio: Buffer;
  /** Seconds of engine audio behind this piece (what audio seconds and billing diagnostics count). */
  seconds: number;
  words?: WordTiming[];
}

export interface CachedAudio {
  /** The pieces in order; their `audio` are views of `audio`. */
  pieces: CachedPiece[];
  /** Every piece's audio, one after another, in one buffer: a whole clip is served from it without a copy. */
  audio: Buffer;
  /** Seconds of engine audio behind every piece, summed in order. */
  seconds: number;
  /** Bytes this entry takes in memory (audio, plus an estimate for the rest). */
  size: number;
}

const MAGIC = Buffer.from('VGA1');
const DIGEST_BYTES = 32;

export function entrySize(pieces: readonly CachedPiece[]): number {
  let size = 64;
  for (const piece of pieces) size += piece.audio.length + 48 + (piece.words?.length ?? 0) * 64;
  return size;
}

/**
 * An entry made of `pieces`: their audio is copied once into one buffer, which the entry's pieces
 * then view (so a hit neither joins nor copies, and no piece holds on to a larger buffer it was cut
 * from).
 */
export function makeEntry(pieces: readonly CachedPiece[]): CachedAudio {
  let length = 0;
  for (const piece of pieces) length += piece.audio.length;
  const audio = Buffer.allocUnsafeSlow(length);
  let at = 0;
  for (const piece of pieces) {
    piece.audio.copy(audio, at);
    at += piece.audio.length;
  }
  return viewEntry(audio, pieces.map((p) => ({ length: p.audio.length, seconds: p.seconds, words: p.words })));
}

/** An entry over `audio`, cut into pieces of the given lengths (which add up to its length). */
function viewEntry(audio: Buffer, layout: readonly { length: number; seconds: number; words?: WordTiming[] }[]): CachedAudio {
  const pieces: CachedPiece[] = [];
  let at = 0;
  let seconds = 0;
  for (const { length, seconds: pieceSeconds, words } of layout) {
    const piece: CachedPiece = { audio: audio.subarray(at, at + length), seconds: pieceSeconds };
    if (words) piece.words = words;
    pieces.push(piece);
    at += length;
    seconds += pieceSeconds;
  }
  return { pieces, audio, seconds, size: entrySize(pieces) };
}

export function encodeEntry(entry: CachedAudio): Buffer {
  const header = Buffer.from(
    JSON.stringify({ pieces: entry.pieces.map((p) => (p.words && p.words.length > 0 ? { n: p.audio.length, s: p.seconds, w: p.words } : { n: p.audio.length, s: p.seconds })) }),
  );
  const length = Buffer.alloc(4);
  length.writeUInt32BE(header.length);
  const body = Buffer.concat([length, header, ...entry.pieces.map((p) => p.audio)]);
  const digest = createHash('sha256').update(body).digest();
  return Buffer.concat([MAGIC, digest, body]);
}

/** The entry in `blob`, or null when the blob is not one or its digest does not match (corrupt). */
export function decodeEntry(blob: Buffer): CachedAudio | null {
  if (blob.length < MAGIC.length + DIGEST_BYTES + 4 || !blob.subarray(0, MAGIC.length).equals(MAGIC)) return null;
  const digest = blob.subarray(MAGIC.length, MAGIC.length + DIGEST_BYTES);
  const body = blob.subarray(MAGIC.length + DIGEST_BYTES);
  if (!createHash('sha256').update(body).digest().equals(digest)) return null;
  try {
    const headerLength = body.readUInt32BE(0);
    const header = JSON.parse(body.subarray(4, 4 + headerLength).toString('utf8')) as { pieces: { n: number; s: number; w?: WordTiming[] }[] };
    const start = 4 + headerLength;
    let length = 0;
    for (const p of header.pieces) {
      if (!Number.isInteger(p.n) || p.n < 0) return null;
      length += p.n;
    }
    if (start + length !== body.length) return null;
    // One copy of the audio, not a view of the blob: the entry outlives the blob's buffer.
    return viewEntry(Buffer.from(body.subarray(start)), header.pieces.map((p) => ({ length: p.n, seconds: p.s, words: p.w })));
  } catch {
    return null;
  }
}
