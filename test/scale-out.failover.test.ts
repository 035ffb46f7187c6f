/**
 * @module test/scale-out.failover
 * Two gateway processes keep speaking through a PostgreSQL outage (a private
 * cluster this test starts and stops with `pg_ctl stop -m immediate`): clips,
 * SSE streams and WebSocket turns of an organisation they both served before
 * are admitted from last-known-good keys and the credit their shares hold,
 * their charges journaled on each gateway's disk; what does not fit is 503
 * `store_unavailable` with `Retry-After` within a second, as are a new voice
 * clone and a job submission. At least 99 % of the requests of the
 * organisation they hold credit for are served during the outage (those cut
 * by the kill not counted; a refused connection is tried on the other
 * gateway, as a balancer does). One gateway is
 * killed with SIGKILL during the outage and restarted on the same data
 * directory once PostgreSQL is back: its journal is written before it is
 * ready. The other's drains within 10 s. The ledger then holds every
 * completed request exactly once for its characters, a turn that ended
 * during the outage included, and no charge key twice.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { adminOrg, startGateway, TONE_MODELS, type Gateway } from './helpers/gateways.js';
import { allRows, RAW } from './helpers/mixed-load.js';
import { canRunPrivatePostgres, startPostgres, type PrivatePostgres } from './helpers/private-servers.js';
import { eventually } from './helpers/redis.js';
import { ttsBody } from './helpers/server.js';
import { TestSocket } from './helpers/ws-client.js';

const ADMIN_TOKEN = 'failover-admin-token-0123456789ab';
let postgres: PrivatePostgres | null = null;
let gateways: Gateway[] = [];
const dataDir = mkdtempSync(join(tmpdir(), 'voicegate-failover-'));
let config: Record<string, unknown> = {};

before(async () => {
  assert.ok(canRunPrivatePostgres(), 'the PostgreSQL server binaries (initdb, pg_ctl) are installed (VOICEGATE_TEST_PG_BIN points elsewhere)');
  postgres = await startPostgres();
  config = {
    ...TONE_MODELS,
    store: { databaseUrl: postgres.url, schema: 'voicegate', poolSize: 4, timeoutMs: 1000 },
    accounts: { enabled: true, adminToken: ADMIN_TOKEN, tokenSecret: 'a shared access-token secret of 32+ chars', startingCredits: 0, outageMaxSeconds: 120 },
    metrics: { enabled: true, public: true },
  };
  gateways = await Promise.all([startGateway({ ...config, dataDir: join(dataDir, 'a') }), startGateway(config)]);
});

after(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await postgres?.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  requestId: string;
  code: string | null;
  retryAfter: string | null;
  complete: boolean;
  characters: number;
  ms: number;
  /** The connection was refused (the gateway is gone): a balancer tries the other. */
  refused?: boolean;
}

const TEXT = 'A short sentence spoken through a failover.';

async function ask(url: string, auth: Record<string, string>, sse: boolean): Promise<Answer> {
  const body = ttsBody({ transcript: TEXT, output_format: sse ? { ...RAW, sample_rate: 8000 } : { container: 'wav', encoding: 'pcm_s16le', sample_rate: 8000 } });
  const began = performance.now();
  try {
    const response = await fetch(`${url}${sse ? '/tts/sse' : '/tts/bytes'}`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
    const text = Buffer.from(await response.arrayBuffer()).toString('latin1');
    const code = /"error_code":"([a-z_]+)"/.exec(text)?.[1] ?? null;
    return { status: response.status, requestId: String(response.headers.get('x-request-id')), code, retryAfter: response.headers.get('retry-after'), complete: response.status === 200 && !code, characters: [...TEXT].length, ms: performance.now() - began };
  } catch (err) {
    // Cut by the kill: not counted.
    const refused = (err as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
    return { status: 0, requestId: '', code: null, retryAfter: null, complete: false, characters: 0, ms: performance.now() - began, refused };
  }
}

async function journalEntries(gateway: Gateway): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  return Number(/^voicegate_charge_journal_entries (\d+)$/m.exec(text)?.[1] ?? NaN);
}

/** A WebSocket turn spoken whole; resolves with how it ended. */
async function turn(url: string, auth: Record<string, string>, text: string): Promise<string> {
  const socket = await TestSocket.open(url, auth);
  try {
    socket.send({ model_id: 'omnivoice', voice: { mode: 'id', id: 'sarah' }, output_format: { ...RAW, sample_rate: 8000 }, context_id: 'outage', transcript: text });
    const end = await socket.waitFor((e) => (e.type === 'done' || e.type === 'error') && e.context_id === 'outage', 10_000);
    return end.type === 'done' ? 'done' : String(end.error_code);
  } finally {
    socket.close();
  }
}

for (const mode of ['immediate', 'fast'] as const) {
  test(`PostgreSQL stopped (-m ${mode}) under load: known keys served on held credit, charges journaled, a gateway killed and restarted, exact books`, { timeout: 120_000 }, (t) => outage(t, mode));
}

async function outage(t: { diagnostic(message: string): void }, mode: 'immediate' | 'fast'): Promise<void> {
  const INITIAL = 10_000_000;
  // Never used on either gateway before the outage: it cannot be checked while the database is away.
  const stranger = await adminOrg(gateways[0], ADMIN_TOKEN, { credits: INITIAL });
  // A balance smaller than what the gateways would hold for it, and a key with a budget.
  const TIGHT = 2_000;
  const tight = await adminOrg(gateways[0], ADMIN_TOKEN, { credits: TIGHT });
  const issued = await fetch(`${gateways[0].url}/admin/orgs/${stranger.orgId}/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'budgeted', budget: { credits: 1_000_000, period: 'month' } }),
  });
  assert.ok(issued.status === 201 || issued.status === 200, `a budgeted key: ${issued.status}`);
  const budgeted = { authorization: `Bearer ${((await issued.json()) as { key: string }).key}` };
  for (const g of gateways) for (const auth of [tight.auth, budgeted]) assert.equal((await ask(g.url, auth, false)).status, 200, 'served before the outage');
  for (const g of gateways) {
    const metrics = await (await fetch(`${g.url}/metrics`)).text();
    const held = Number(new RegExp(`^voicegate_held_credits\\{org="${tight.orgId}"\\} (\\d+)$`, 'm').exec(metrics)?.[1]);
    // A quarter of what was left when the share was set, and the charged holds' credits left in it: at most half.
    assert.ok(held > 0 && held <= TIGHT / 2, `each gateway holds credit for the small balance, at most half of it (${held})`);
  }
  const org = await adminOrg(gateways[0], ADMIN_TOKEN, { credits: INITIAL });
  // Each gateway reads the key and holds a share sized by a long request (16 such holds of spare).
  for (const g of gateways) {
    const warm = await fetch(`${g.url}/tts/bytes`, { method: 'POST', headers: { 'content-type': 'application/json', ...org.auth }, body: JSON.stringify(ttsBody({ transcript: 'Warm. '.repeat(160), output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 8000 } })) });
    assert.equal(warm.status, 200);
    await warm.arrayBuffer();
  }

  const answers: Answer[] = [];
  const tightAnswers: Answer[] = [];
  let running = true;
  let retried = 0;
  const alive = () => gateways.filter((g) => g.process.exitCode === null && g.process.signalCode === null);
  const workers = Array.from({ length: 3 }, async (_, w) => {
    for (let i = 0; running; i++) {
      const live = alive();
      const url = live[(w + i) % live.length].url;
      const answer = await ask(url, org.auth, (w + i) % 2 === 0);
      // A refused connection (the gateway was just killed) is tried on the other gateway, as a balancer does.
      const other = answer.refused ? gateways.find((g) => g.url !== url) : undefined;
      if (other) retried++;
      answers.push(other ? await ask(other.url, org.auth, (w + i) % 2 === 0) : answer);
    }
  });
  try {
    assert.ok(await eventually(() => answers.filter((a) => a.complete).length >= 6, 10_000), 'served before the outage');
    await postgres!.stop(mode);
    const down = answers.length;
    // The organisation with little credit: served at most what its shares held, then refused.
    for (let i = 0; i < 80; i++) tightAnswers.push(await ask(gateways[i % 2].url, tight.auth, i % 3 === 0));
    // What cannot work is refused at once, with Retry-After: a key never seen here, a budgeted key, an admin
    // write, and, with a key the gateways know, a new voice clone and a job submission.
    const clone = new FormData();
    clone.append('clip', new Blob([toneWav(2)], { type: 'audio/wav' }), 'clip.wav');
    clone.append('name', 'Cloned during the outage');
    clone.append('language', 'en');
    for (const refused of [
      await ask(gateways[1].url, stranger.auth, false),
      await ask(gateways[0].url, budgeted, false),
      await timed(() => fetch(`${gateways[1].url}/admin/orgs`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'during', credits: 1 }) })),
      await timed(() => fetch(`${gateways[0].url}/voices/clone`, { method: 'POST', headers: org.auth, body: clone })),
      await timed(() => fetch(`${gateways[1].url}/tts/jobs`, { method: 'POST', headers: { ...org.auth, 'content-type': 'application/json' }, body: JSON.stringify(ttsBody({ transcript: 'A job submitted while the database is away.' })) })),
    ]) {
      assert.deepEqual([refused.status, refused.code], [503, 'store_unavailable']);
      assert.equal(refused.retryAfter, '1');
      assert.ok(refused.ms < 1_000, `refused within a second (${Math.round(refused.ms)} ms)`);
    }
    // A turn that ends during the outage: `done`, and charged once PostgreSQL is back.
    const turnText = 'A WebSocket turn that ends while the database is away. '.repeat(3);
    assert.equal(await turn(gateways[1].url, org.auth, turnText), 'done');
    assert.ok(await eventually(() => answers.length - down >= 30, 15_000), 'requests answered during the outage');
    // Gateway A has journaled charges on its disk; killed now, it loses none of them.
    assert.ok(await eventually(async () => (await journalEntries(gateways[0])) > 0, 5_000), 'gateway A journaled charges');
    gateways[0].process.kill('SIGKILL');
    await gateways[0].exited;
    assert.ok(await eventually(() => answers.length - down >= 45, 15_000), 'gateway B serves on');
    const during = answers.slice(down);
    const counted = during.filter((a) => a.status !== 0);
    const served = counted.filter((a) => a.complete).length;
    t.diagnostic(`during the outage: ${served} served, ${counted.length - served} refused, ${during.length - counted.length} cut by the kill, ${retried} refused connections tried on the other gateway`);
    // The organisation its gateways hold credit for: at least 99 % served, requests cut by the kill not counted.
    assert.ok(served >= 0.99 * counted.length, `at least 99 % served during the outage (${served} of ${counted.length})`);

    await postgres!.start();
    const up = performance.now();
    assert.ok(await eventually(async () => (await journalEntries(gateways[1])) === 0, 10_000, 100), 'gateway B drained its journal within 10 s of PostgreSQL answering');
    assert.ok(performance.now() - up < 10_000);
    // Restarted on the same data directory: its journal is written before it reports ready.
    gateways[0] = await startGateway({ ...config, dataDir: join(dataDir, 'a') });
    assert.equal(await journalEntries(gateways[0]), 0, 'gateway A replayed its journal before ready');
  } finally {
    running = false;
    await Promise.all(workers);
  }

  const counted = answers.filter((a) => a.status !== 0);
  const failures = counted.filter((a) => a.status !== 200 || !a.complete);
  for (const a of failures) {
    assert.equal(a.status, 503, `a documented error, not ${a.status} ${a.code}`);
    assert.equal(a.code, 'store_unavailable');
    assert.equal(a.retryAfter, '1');
    assert.ok(a.ms < 1_000, `refused within a second (${Math.round(a.ms)} ms)`);
  }
  const store = await openPostgresStore({ url: postgres!.url, schema: 'voicegate', poolSize: 2, timeoutMs: 5000 });
  try {
    const charges = (await allRows(store, org.orgId)).filter((r) => r.kind === 'charge');
    assert.equal((await store.orgs.get(org.orgId))!.balance, INITIAL + charges.reduce((sum, r) => sum + r.credits, 0), 'balance = initial − Σ charges');
    assert.equal(new Set(charges.map((r) => r.chargeKey)).size, charges.length, 'no charge key twice');
    const byRequest = new Map(charges.map((r) => [r.requestId!, r]));
    for (const a of counted.filter((x) => x.complete)) assert.equal(byRequest.get(a.requestId)?.characters, a.characters, `served ${a.requestId} is charged exactly`);
    for (const a of failures) assert.equal(byRequest.get(a.requestId), undefined, `refused ${a.requestId} is not charged`);
    const turns = charges.filter((r) => r.endpoint === 'tts.websocket');
    assert.deepEqual(turns.map((r) => r.characters), [[...'A WebSocket turn that ends while the database is away. '.repeat(3)].length], 'the turn that ended during the outage, charged exactly');
    // Only the budgeted key's requests before the outage.
    assert.equal((await allRows(store, stranger.orgId)).filter((r) => r.kind === 'charge').length, 2);
    const tightCharges = (await allRows(store, tight.orgId)).filter((r) => r.kind === 'charge');
    const tightServed = tightAnswers.filter((a) => a.complete);
    assert.ok(tightServed.length > 0 && tightServed.length < tightAnswers.length, `some served on held credit, then refused (${tightServed.length} of ${tightAnswers.length})`);
    for (const a of tightAnswers.filter((x) => !x.complete)) assert.deepEqual([a.status, a.code, a.retryAfter], [503, 'store_unavailable', '1']);
    assert.equal(tightCharges.length, tightServed.length + 2, 'every tight request served is charged, once');
    const tightBalance = (await store.orgs.get(tight.orgId))!.balance;
    assert.ok(tightBalance >= 0, `never overspent: the shares held no more than the balance (${tightBalance})`);
    t.diagnostic(`small balance: ${tightServed.length} of ${tightAnswers.length} served during the outage, balance ${TIGHT} → ${tightBalance}`);
  } finally {
    await store.close();
  }
}

/** A WAV clip of a tone, `seconds` long, 16 kHz mono 16-bit: a voice to clone. */
function toneWav(seconds: number): Buffer {
  const rate = 16_000;
  const samples = rate * seconds;
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0, 'latin1');
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVEfmt ', 8, 'latin1');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(rate, 24);
  wav.writeUInt32LE(rate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'latin1');
  wav.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++) wav.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / rate)), 44 + i * 2);
  return wav;
}

/** Any request, as an answer: its status, code, Retry-After and time. */
async function timed(send: () => Promise<Response>): Promise<Answer> {
  const began = performance.now();
  const response = await send();
  const text = await response.text();
  const code = /"error_code":"([a-z_]+)"/.exec(text)?.[1] ?? null;
  return { status: response.status, requestId: String(response.headers.get('x-request-id')), code, retryAfter: response.headers.get('retry-after'), complete: false, characters: 0, ms: performance.now() - began };
}
