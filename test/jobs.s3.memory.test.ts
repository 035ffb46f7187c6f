/**
 * A 1,000,000-character job's result stitched into a bucket in flat memory.
 * The job's plan is the real one (a million characters cut into its ~1,000
 * segments); its segments' audio is synthetic 16-bit PCM put straight into
 * the bucket (10 s each at 8 kHz, 160 MB in all) rather than synthesised,
 * which would take an engine hours; what is measured is the stitch and the
 * multipart upload the runner does at a job's end (`stitch` → `write`).
 * Live memory (heap and buffers, after a collection) is sampled as the
 * result streams out: it stays within a bound far below the result's size,
 * and does not grow from the first tenth to the last.
 */
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, test } from 'node:test';
import { resultKey, segmentAudioKey } from '../src/jobs/files.js';
import { planSegments } from '../src/jobs/plan.js';
import { stitch } from '../src/jobs/stitch.js';
import { startS3, type S3Server } from './helpers/s3.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MB = 1024 * 1024;
const SEGMENT_BYTES = 160_000;
const WORDS = ['river', 'stone', 'garden', 'window', 'silver', 'morning', 'quiet', 'harbour', 'lantern', 'meadow'];

/** Segment `index`'s synthetic PCM: a pattern of its own, so a misplaced segment shows. */
function pcm(index: number): Buffer {
  const samples = new Int16Array(SEGMENT_BYTES / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = ((i * 31 + index * 977) % 20_000) - 10_000;
  return Buffer.from(samples.buffer);
}

function live(): number {
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

let s3: S3Server;
before(async () => {
  s3 = await startS3();
});
after(() => s3?.dispose());

test('a 1,000,000-character job is stitched into the bucket with live memory flat, far below its size', { timeout: 600_000 }, async (t) => {
  let text = '';
  for (let i = 0; text.length < 1_000_000; i++) text += `The ${WORDS[i % 10]} and the ${WORDS[(i * 7 + 3) % 10]} rest by the ${WORDS[(i * 3 + 1) % 10]}. `;
  const segments = planSegments([{ transcript: text.slice(0, 1_000_000) }], 1000, 1);
  assert.ok(segments.length >= 1000, `segments: ${segments.length}`);
  const blobs = s3.storage('memory');
  const jobId = 'job_000000000000000000000001';
  try {
    for (let at = 0; at < segments.length; at += 16) {
      await Promise.all(segments.slice(at, at + 16).map((_, i) => blobs.put(segmentAudioKey(jobId, at + i), pcm(at + i))));
    }
    const expected = 44 + segments.length * SEGMENT_BYTES;

    const baseline = live();
    const samples: number[] = [];
    let streamed = 0;
    let next = 0;
    const stitched = await stitch(blobs, jobId, segments, { container: 'wav', encoding: 'pcm_s16le', sampleRate: 8000 });
    async function* measured(): AsyncGenerator<Buffer> {
      for await (const chunk of stitched.audio) {
        streamed += chunk.length;
        if (streamed >= next) {
          samples.push(live() - baseline);
          next += expected / 20;
        }
        yield chunk;
      }
    }
    assert.equal(await blobs.write(resultKey(jobId), measured()), expected);
    assert.ok(samples.length >= 19, `samples: ${samples.length}`);
    const peak = Math.max(...samples);
    const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
    const seen = samples.map(mb).join(', ');
    t.diagnostic(`live memory over the baseline at each twentieth of ${mb(expected)}: ${seen}`);
    // Two 5 MiB parts in flight, a segment, the SDK's buffers: tens of megabytes at most, for a 160 MB result.
    assert.ok(peak < 40 * MB, `live memory over the baseline while ${mb(expected)} streamed: ${seen}`);
    const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
    assert.ok(mean(samples.slice(-5)) - mean(samples.slice(1, 6)) < 12 * MB, `live memory grew with the result: ${seen}`);

    assert.equal((await blobs.stat(resultKey(jobId)))?.size, expected);
    const header = await blobs.read(resultKey(jobId), { start: 0, end: 43 });
    const chunks: Buffer[] = [];
    for await (const chunk of header!) chunks.push(chunk as Buffer);
    const wav = Buffer.concat(chunks);
    assert.equal(wav.toString('latin1', 0, 4) + wav.toString('latin1', 8, 12), 'RIFFWAVE');
    assert.equal(wav.readUInt32LE(24), 8000);
    assert.equal(wav.readUInt32LE(40), expected - 44, 'the header carries the whole length');
    // A segment deep in the result is where its place says, whole.
    const index = 777;
    const start = 44 + index * SEGMENT_BYTES;
    const part: Buffer[] = [];
    for await (const chunk of (await blobs.read(resultKey(jobId), { start, end: start + SEGMENT_BYTES - 1 }))!) part.push(chunk as Buffer);
    assert.ok(Buffer.concat(part).equals(pcm(index)), `segment ${index} in its place`);
  } finally {
    blobs.close();
  }
});
