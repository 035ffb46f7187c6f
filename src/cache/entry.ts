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
  pieces: CachedPiece[];
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

export function makeEntry(pieces: CachedPiece[]): CachedAudio {
  return { pieces, size: entrySize(pieces) };
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
    let at = 4 + headerLength;
    const pieces: CachedPiece[] = [];
    for (const p of header.pieces) {
      if (at + p.n > body.length) return null;
      const piece: CachedPiece = { audio: Buffer.from(body.subarray(at, at + p.n)), seconds: p.s };
      if (p.w) piece.words = p.w;
      pieces.push(piece);
      at += p.n;
    }
    return at === body.length ? makeEntry(pieces) : null;
  } catch {
    return null;
  }
}
