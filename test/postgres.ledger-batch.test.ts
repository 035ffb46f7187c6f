/**
 * @module test/postgres.ledger-batch
 * The rules of one organisation's batch of ledger writes on PostgreSQL, one
 * call of `ledger_write_batch_v4`, with the batch laid out by hand rather than
 * left to timing: settlements before reservations; the first write of a
 * charge key inserts and a repeat is its duplicate, at the balance now (the
 * other organisation's when the key is theirs); each inserted row reports the
 * balance after it; holds granted in queue order while balance − (other rows
 * + the share's open holds) > 0, lapsed rows swept, the share written with
 * its spare, or only its holds when nothing is granted, and shrunk when
 * asked; an unknown organisation refused; a statement that fails throws,
 * writes nothing and leaves the share book as it was. (What a share grants
 * without the database is in src/store/shares.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openDb, type Db } from '../src/store/postgres/db.js';
import { ledgerBatchWriter, type LedgerWrite, type Outcome } from '../src/store/postgres/ledger-batch.js';
import { ShareBook } from '../src/store/shares.js';
import { migrate } from '../src/store/postgres/migrate.js';
import type { AppendResult, NewLedgerEntry, ReserveResult } from '../src/store/store.js';
import { dropSchema, freshSchemaName, TEST_DATABASE_URL } from './helpers/postgres.js';

const T = { timeout: 20_000 };
const schema = freshSchemaName();
const options = { url: TEST_DATABASE_URL, schema, poolSize: 2, timeoutMs: 5000 };
let db: Db;

before(async () => {
  await migrate(options);
  db = openDb(options);
});
after(async () => {
  await db?.end();
  await dropSchema(schema);
});

async function org(id: string, balance: number): Promise<void> {
  await db.query('INSERT INTO orgs (id, name, balance) VALUES ($1, $1, $2)', [id, balance]);
}

function entry(orgId: string, credits: number, chargeKey: string | null): NewLedgerEntry {
  return {
    orgId,
    kind: credits < 0 ? 'charge' : 'credit',
    credits,
    keyId: 'key_1',
    requestId: chargeKey,
    chargeKey,
    clientRequestId: null,
    model: 'sonic',
    endpoint: 'tts_bytes',
    characters: Math.abs(credits),
    reason: null,
  };
}

const settle = (reservationId: string, e: NewLedgerEntry): LedgerWrite => ({ kind: 'settle', reservationId, entry: e });
const reserve = (orgId: string, id: string, credits: number, ttlMs = 60_000): LedgerWrite => ({ kind: 'reserve', request: { id, orgId, credits, ttlMs } });

function value<V>(outcome: Outcome): V {
  assert.equal(outcome.ok, true, outcome.ok ? '' : String(outcome.err));
  return (outcome as { value: V }).value;
}

/** A writer with a share book of its own (one server), and the shrinks it asks for; `outage`: its least spare (0: none, the 16-hold rule alone). */
function server(name: string, outage: number | null = 0) {
  const book = new ShareBook(`share_${name}`, outage);
  const shrinks: string[] = [];
  return { book, shrinks, write: ledgerBatchWriter(book, (orgId) => shrinks.push(orgId)) };
}
const writeLedgerBatch = (run: Db['query'], orgId: string, writes: LedgerWrite[]) => server('t').write(run, orgId, writes);

const balanceOf = async (id: string) => (await db.query<{ balance: number }>('SELECT balance FROM orgs WHERE id = $1', [id]))[0].balance;

test('settlements: the first write of a key inserts, a repeat is its duplicate at the balance now; rows report the balance after them', T, async () => {
  await org('org_s', 100);
  await org('org_other', 7);
  await db.query(`INSERT INTO ledger (org_id, kind, credits, charge_key) VALUES ('org_other', 'charge', -3, 'theirs/0')`);
  const outcomes = await writeLedgerBatch(db.query, 'org_s', [
    settle('req_a/0', entry('org_s', -10, 'req_a/0')),
    settle('x', entry('org_s', -1, null)),
    settle('req_a/0', entry('org_s', -10, 'req_a/0')),
    settle('theirs/0', entry('org_s', -5, 'theirs/0')),
    settle('y', entry('org_s', 20, null)),
  ]);
  const [a, unkeyed1, again, theirs, unkeyed2] = outcomes.map((o) => value<AppendResult>(o));
  assert.deepEqual([a.duplicate, a.balance, a.entry.credits, a.entry.orgId], [false, 90, -10, 'org_s']);
  assert.deepEqual([unkeyed1.duplicate, unkeyed1.balance, unkeyed1.entry.credits], [false, 89, -1]);
  assert.deepEqual([unkeyed2.duplicate, unkeyed2.balance, unkeyed2.entry.credits], [false, 109, 20]);
  assert.ok(a.entry.id < unkeyed1.entry.id && unkeyed1.entry.id < unkeyed2.entry.id, 'ledger ids in queue order');
  assert.deepEqual(again, { ...a, balance: 109, duplicate: true });
  // Another organisation's key: its row, its balance, nothing written here.
  assert.deepEqual([theirs.duplicate, theirs.entry.orgId, theirs.entry.credits, theirs.balance], [true, 'org_other', -3, 7]);
  assert.equal(await balanceOf('org_s'), 109);
  assert.ok(!Number.isNaN(Date.parse(a.entry.createdAt)));
  const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger WHERE org_id = 'org_s'`);
  assert.equal(n, 3);
});

test('reservations: after the settlements, in queue order while balance − (other rows + open holds) > 0; the share takes the holds and its spare', T, async () => {
  await org('org_r', 10);
  await db.query(`INSERT INTO reservations (id, org_id, credits, expires_at) VALUES ('res_kept', 'org_r', 4, 9e15), ('res_settled', 'org_r', 50, 9e15),
    ('res_lapsed', 'org_r', 100, 1)`);
  const { book, write } = server('r');
  const outcomes = await write(db.query, 'org_r', [
    reserve('org_r', 'res_1', 3),
    settle('res_settled', entry('org_r', 5, 'credit/0')),
    reserve('org_r', 'res_2', 20),
    reserve('org_r', 'res_3', 1),
  ]);
  // The settlement ran first: balance 15, its row gone, the lapsed one swept; another server's 4 held before the batch.
  assert.equal(value<AppendResult>(outcomes[1]).balance, 15);
  const first = value<ReserveResult>(outcomes[0]);
  assert.ok(first.ok);
  assert.deepEqual([first.balance, first.reserved, first.reservation.id, first.reservation.orgId, first.reservation.credits], [15, 4, 'res_1', 'org_r', 3]);
  assert.ok(Math.abs(first.reservation.expiresAt - (Date.now() + 60_000)) < 5_000);
  const second = value<ReserveResult>(outcomes[2]);
  assert.deepEqual([second.ok, second.reserved], [true, 7], '15 − 7 > 0: granted, though it overshoots');
  assert.deepEqual(value<ReserveResult>(outcomes[3]), { ok: false, balance: 15, reserved: 27 });
  // The share holds the two granted holds and no spare: nothing was left.
  const held = await db.query<{ id: string; credits: number }>(`SELECT id, credits FROM reservations WHERE org_id = 'org_r' ORDER BY id`);
  assert.deepEqual(held, [
    { id: 'res_kept', credits: 4 },
    { id: book.rowId('org_r'), credits: 23 },
  ]);
  assert.equal(book.open('org_r', Date.now()), 23);
});

test('a share keeps at least its outage credit of spare, never more than a quarter of what is left', T, async () => {
  await org('org_out', 100_000);
  const { book, write } = server('out', null);
  const rowOf = async () => (await db.query<{ credits: number }>('SELECT credits FROM reservations WHERE id = $1', [book.rowId('org_out')]))[0]?.credits;
  const [granted] = await write(db.query, 'org_out', [reserve('org_out', 'res_o1', 10)]);
  assert.equal(value<ReserveResult>(granted).ok, true);
  assert.ok((await rowOf())! >= 10 + 1_000, `16 holds of 10 would be 160; the outage spare is at least 1,000 (${await rowOf()})`);
  await org('org_small', 2_000);
  const small = server('small', 5_000);
  await small.write(db.query, 'org_small', [reserve('org_small', 'res_s1', 10)]);
  const [row] = await db.query<{ credits: number }>('SELECT credits FROM reservations WHERE id = $1', [small.book.rowId('org_small')]);
  assert.equal(row.credits, 10 + Math.floor((2_000 - 10) / 4), 'a balance smaller than the outage credit: a quarter of what is left, never more');
});

test('a share keeps a spare of at most 16 holds of the last size and a quarter of what is left, grants from it without a write, and shrinks when asked', T, async () => {
  await org('org_sp', 1_000);
  const { book, shrinks, write } = server('sp');
  const rowOf = async () => (await db.query<{ credits: number }>('SELECT credits FROM reservations WHERE id = $1', [book.rowId('org_sp')]))[0]?.credits;
  const [granted] = await write(db.query, 'org_sp', [reserve('org_sp', 'res_a', 10)]);
  assert.equal(value<ReserveResult>(granted).ok, true);
  assert.equal(await rowOf(), 10 + 160, '990 left: a quarter is 247, 16 holds of 10 are 160');
  assert.ok(book.grantFromSpare({ id: 'res_b', orgId: 'org_sp', credits: 150, ttlMs: 60_000 }, Date.now())?.ok);
  assert.equal(await rowOf(), 170, 'granted from the spare: nothing written');
  // The charge of the first hold and the release of the second leave 170 credits of spare, within 2 × 160; a refusal gives them back.
  const [charged] = await write(db.query, 'org_sp', [settle('res_a', entry('org_sp', -10, 'res_a'))]);
  assert.equal(value<AppendResult>(charged).balance, 990);
  assert.deepEqual(shrinks, []);
  assert.equal(book.release('res_b'), false);
  await db.query(`INSERT INTO reservations (id, org_id, credits, expires_at) VALUES ('res_other', 'org_sp', 2000, 9e15)`);
  const [refused] = await write(db.query, 'org_sp', [reserve('org_sp', 'res_c', 10)]);
  assert.deepEqual(value<ReserveResult>(refused), { ok: false, balance: 990, reserved: 2000 });
  assert.equal(await rowOf(), undefined, 'no holds, no spare: the share row is gone');
  await db.query(`DELETE FROM reservations WHERE id = 'res_other'`);

  // A spare that grows too large after releases is shrunk by a write of its own.
  const [again] = await write(db.query, 'org_sp', [reserve('org_sp', 'res_d', 100), reserve('org_sp', 'res_e', 100)]);
  assert.equal(value<ReserveResult>(again).ok, true);
  assert.equal(await rowOf(), 200 + 197, '790 left: a quarter is 197');
  assert.equal(book.release('res_d'), false);
  assert.equal(book.release('res_e'), true, '397 held beyond no holds: more than 2 × 197');
  await write(db.query, 'org_sp', [{ kind: 'shrink' }]);
  assert.equal(await rowOf(), 197);
  assert.equal(book.unwritten('org_sp'), false);
});

test('an unknown organisation: every settlement fails, every reservation is refused, nothing is written', T, async () => {
  const outcomes = await writeLedgerBatch(db.query, 'org_missing', [reserve('org_missing', 'res_m', 1), settle('res_m', entry('org_missing', -1, 'm/0'))]);
  assert.deepEqual(value<ReserveResult>(outcomes[0]), { ok: false, balance: 0, reserved: 0 });
  assert.equal(outcomes[1].ok, false);
  assert.equal((outcomes[1] as { err: Error }).err.message, 'organization org_missing does not exist');
  const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger WHERE charge_key = 'm/0'`);
  assert.equal(n, 0);
});

test('a batch whose statement fails throws, writes nothing, and leaves the share book as it was', T, async () => {
  await org('org_f', 10);
  const { book, write } = server('f');
  const bad = { ...entry('org_f', -1, 'bad/0'), kind: 'refund' as 'charge' };
  await assert.rejects(write(db.query, 'org_f', [settle('a', entry('org_f', -2, 'good/0')), settle('b', bad), reserve('org_f', 'res_f', 1)]), /check constraint/);
  assert.equal(await balanceOf('org_f'), 10);
  const [{ rows, holds }] = await db.query<{ rows: number; holds: number }>(
    `SELECT (SELECT count(*)::int FROM ledger WHERE org_id = 'org_f') AS rows, (SELECT count(*)::int FROM reservations WHERE org_id = 'org_f') AS holds`,
  );
  assert.deepEqual([rows, holds], [0, 0]);
  assert.equal(book.open('org_f', Date.now()), 0);
  assert.equal(book.share('org_f')?.deciding, false, 'the share grants from its spare again');
});

test('the previous versions\' functions stay beside it, so a server not yet upgraded keeps writing in the same schema', T, async () => {
  await org('org_prev', 100);
  const [{ result }] = await db.query<{ result: { settles: unknown[]; reserves: { ok: boolean; reserved: number }[] } }>(
    `SELECT ledger_write_batch($1::text, '{}'::text[], '{}'::text[], '{}'::bigint[], '{}'::text[], '{}'::text[], '{}'::text[], '{}'::text[],
       '{}'::text[], '{}'::text[], '{}'::int[], '{}'::text[], $2::text[], $3::bigint[], $4::bigint[]) AS result`,
    ['org_prev', ['res_prev_1'], [30], [60_000]],
  );
  assert.deepEqual(result.settles, []);
  assert.equal(result.reserves[0].ok, true);
  // The current writer counts the hold the previous one made, and the previous one counts the current one's share.
  const { book, write } = server('prev');
  const [outcome] = await write(db.query, 'org_prev', [reserve('org_prev', 'res_prev_2', 10)]);
  assert.equal(value<ReserveResult>(outcome).reserved, 30);
  const [{ v3 }] = await db.query<{ v3: unknown[] }>(
    `SELECT ledger_write_batch_v3($1::text, '{}'::text[], '{}'::text[], '{}'::bigint[], '{}'::text[], '{}'::text[], '{}'::text[], '{}'::text[],
       '{}'::text[], '{}'::text[], '{}'::int[], '{}'::text[], $2::text[], $3::bigint[], $4::bigint[]) AS v3`,
    ['org_prev', ['res_prev_3'], [1], [60_000]],
  );
  const [shareRow] = await db.query<{ credits: number }>('SELECT credits FROM reservations WHERE id = $1', [book.rowId('org_prev')]);
  assert.equal((v3[8] as number[])[0], 30 + shareRow.credits);
});
