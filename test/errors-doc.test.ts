/**
 * @module test/errors-doc
 * The error registry and `docs/errors.md` list the same codes with the same
 * statuses, titles and retry rule (`x-should-retry`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERRORS, isRetryable, type ErrorCode } from '../src/errors/registry.js';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| ([^|]+?) \| (yes|no) \| (.+) \|$/gm)].map((m) => ({
  code: m[1],
  status: Number(m[2]),
  title: m[3],
  retry: m[4] === 'yes',
  when: m[5],
}));

test('every registered code is documented with its status, title and retry rule', () => {
  for (const [code, def] of Object.entries(ERRORS)) {
    const row = rows.find((r) => r.code === code);
    assert.ok(row, `${code} is missing from docs/errors.md (rows are | code | status | title | yes/no | when |)`);
    assert.equal(row.status, def.status, `${code} status`);
    assert.equal(row.title, def.title, `${code} title`);
    assert.equal(row.retry, isRetryable(code as ErrorCode), `${code} retry`);
    assert.ok(row.when.length > 10, `${code} says when it happens`);
  }
});

test('the doc lists no code the registry lacks, and none twice', () => {
  const codes = rows.map((r) => r.code);
  assert.deepEqual(codes.filter((c) => !(c in ERRORS)), []);
  assert.equal(new Set(codes).size, codes.length);
  assert.ok(codes.length >= 18);
  // A table row the pattern above misses (a column too few, say) would hide a code from both checks.
  const tableRows = doc.split('\n').filter((line) => line.startsWith('| `'));
  assert.equal(tableRows.length, rows.length, 'every row of the codes table has five columns');
});

test('the retry rule in the Envelope section names exactly the codes that break it', () => {
  const rule = /The rule: [^\n]*(?:\n[^\n]+)*?\)\./.exec(doc)?.[0];
  assert.ok(rule, 'docs/errors.md states the retry rule');
  const named = [...rule.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]).filter((c) => c in ERRORS).sort();
  const exceptions = Object.entries(ERRORS)
    .filter(([code, def]) => isRetryable(code as ErrorCode) !== (def.status === 429 || def.status >= 500))
    .map(([code]) => code)
    .sort();
  assert.deepEqual(named, exceptions);
});
