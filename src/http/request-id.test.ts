/** @module http/request-id.test — the id format every test and client relies on, uniqueness, and order. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { newRequestId } from './request-id.js';

it('makes unique req_ + 24 lowercase hex ids', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 100_000; i++) {
    const id = newRequestId();
    assert.match(id, /^req_[0-9a-f]{24}$/);
    seen.add(id);
  }
  assert.equal(seen.size, 100_000);
});

it('sorts as it was made within a process, so charge keys go into the ledger indexes at one end', () => {
  const ids = Array.from({ length: 10_000 }, () => newRequestId());
  assert.deepEqual([...ids].sort(), ids);
});
