/**
 * @module test/helpers/job-crash
 * The crash a long-form job must survive, whatever its storage: a 60,000-
 * character job on a first gateway, `kill -9` of it a good way in, and a
 * second gateway on the same store and storage that resumes it at its first
 * unpersisted segment — making exactly the segments not persisted before,
 * counted through its segment metric — with audio of the right length and
 * one charge. `atKill` and `atEnd` check what the storage holds then.
 */
import assert from 'node:assert/strict';
import type { JobSpec } from '../../src/jobs/plan.js';
import type { Store } from '../../src/store/store.js';
import { adminOrg, type Gateway } from './gateways.js';
import { eventually } from './redis.js';

const WORDS = ['river', 'stone', 'garden', 'window', 'silver', 'morning', 'quiet', 'harbour', 'lantern', 'meadow'];

export function prose(characters: number, seed = 0): string {
  let text = '';
  for (let i = 0; text.length < characters; i++) text += `The ${WORDS[(i + seed) % 10]} and the ${WORDS[(i * 7 + 3 + seed) % 10]} rest. `;
  return text.slice(0, characters).trim();
}

/** Segments the gateway made and persisted, from its metrics. */
export async function segmentsMade(gateway: Gateway): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('voicegate_job_segments_total '));
  return line ? Number(line.split(' ')[1]) : 0;
}

/** A WAV at 8 kHz of the tone engine (10 ms a character) through the Cartesia body. */
export const toneJobBody = (transcript: string) => ({
  model_id: 'gepard-1.0',
  voice: { mode: 'id', id: 'sarah' },
  output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 8000 },
  transcript,
});

export async function crashMidJob(options: {
  start: () => Promise<Gateway>;
  store: Store;
  adminToken: string;
  atKill?: (jobId: string, segmentsDone: number) => Promise<void>;
  atEnd?: (jobId: string) => Promise<void>;
}): Promise<void> {
  const { store } = options;
  const first = await options.start();
  const org = await adminOrg(first, options.adminToken, { credits: 1_000_000 });
  const submitted = await fetch(`${first.url}/tts/jobs`, { method: 'POST', headers: { ...org.auth, 'content-type': 'application/json' }, body: JSON.stringify(toneJobBody(prose(60_000))) });
  assert.equal(submitted.status, 202, await submitted.clone().text());
  const { id, progress } = (await submitted.json()) as { id: string; progress: { segments_total: number } };
  const total = progress.segments_total;
  assert.ok(total >= 500, `segments: ${total}`);

  // Killed a good way in, well before the end.
  assert.ok(await eventually(async () => (await store.jobs.get(id))!.segmentsDone >= 60, 60_000, 10), 'the first gateway made progress');
  first.process.kill('SIGKILL');
  await first.exited;
  const atKill = (await store.jobs.get(id))!;
  assert.equal(atKill.status, 'running');
  assert.ok(atKill.segmentsDone < total, `the job was still running at the kill (${atKill.segmentsDone}/${total})`);
  assert.equal(atKill.billing, 'held');
  await options.atKill?.(id, atKill.segmentsDone);

  const second = await options.start();
  const read = async () => (await fetch(`${second.url}/tts/jobs/${id}`, { headers: org.auth })).json() as Promise<{ status: string }>;
  assert.ok(await eventually(async () => (await read()).status === 'succeeded', 120_000, 50), JSON.stringify(await read()));
  const done = (await store.jobs.get(id))!;
  assert.equal(done.attempts, 2, 'claimed twice: once by each gateway');
  assert.equal(await segmentsMade(second), total - atKill.segmentsDone, 'the second gateway made exactly the segments not persisted before the kill');

  const audio = Buffer.from(await (await fetch(`${second.url}/tts/jobs/${id}/audio`, { headers: org.auth })).arrayBuffer());
  assert.equal(audio.length, done.result!.bytes);
  const seconds = (audio.length - 44) / 2 / 8000;
  const spoken = (done.spec as JobSpec).segments.reduce((sum, s) => sum + s.text.length, 0) * 0.01;
  assert.ok(Math.abs(seconds - spoken) < spoken * 0.01, `result ${seconds} s, text speaks ${spoken} s: no segment lost or doubled`);

  // The charge is written just after the end is recorded.
  assert.ok(await eventually(async () => (await store.jobs.get(id))!.billing === 'charged', 10_000, 20));
  const charges = (await store.ledger.list(org.orgId, { limit: 100 })).data.filter((row) => row.kind === 'charge');
  assert.equal(charges.length, 1);
  assert.equal(charges[0].chargeKey, id);
  assert.equal(charges[0].credits, -60_000);
  assert.equal(await store.ledger.sum(org.orgId), 1_000_000 - 60_000);
  await options.atEnd?.(id);
  // Only the gateways a later test starts poll the queue.
  await second.stop();
}
