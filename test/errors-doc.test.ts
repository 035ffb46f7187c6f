/**
 * @module test/errors-doc
 * The error registry and `docs/errors.md` list the same codes with the same
 * statuses and titles.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERRORS } from '../src/errors/registry.js';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| ([^|]+?) \| (.+) \|$/gm)].map((m) => ({
  code: m[1],
  status: Number(m[2]),
  title: m[3],
  when: m[4],
}));

test('every registered code is documented with its status and title', () => {
  for (const [code, def] of Object.entries(ERRORS)) {
    const row = rows.find((r) => r.code === code);
    assert.ok(row, `${code} is missing from docs/errors.md`);
    assert.equal(row.status, def.status, `${code} status`);
    assert.equal(row.title, def.title, `${code} title`);
    assert.ok(row.when.length > 10, `${code} says when it happens`);
  }
});

test('the doc lists no code the registry lacks, and none twice', () => {
  const codes = rows.map((r) => r.code);
  assert.deepEqual(codes.filter((c) => !(c in ERRORS)), []);
  assert.equal(new Set(codes).size, codes.length);
  assert.ok(codes.length >= 18);
});
