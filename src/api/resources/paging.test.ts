/**
 * @module api/paging.test
 * Cursor paging: limits, both directions, the empty page past the end, and
 * the 400s for bad parameters.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../errors/api-error.js';
import { pageByCursor } from './paging.js';

const items = Array.from({ length: 25 }, (_, i) => ({ id: `id${i}` }));
const ids = (page: { data: { id: string }[] }) => page.data.map((item) => item.id);

function rejects400(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ApiError);
    assert.equal(err.code, 'invalid_request');
    assert.equal(err.status, 400);
    assert.match(err.message, pattern);
    return true;
  });
}

test('the first page has the default limit of 10', () => {
  const page = pageByCursor(items, {});
  assert.deepEqual(ids(page), items.slice(0, 10).map((i) => i.id));
  assert.equal(page.has_more, true);
});

test('limit is read from a query string or a number', () => {
  assert.equal(pageByCursor(items, { limit: '3' }).data.length, 3);
  assert.equal(pageByCursor(items, { limit: 100 }).data.length, 25);
  assert.equal(pageByCursor(items, { limit: '25' }).has_more, false);
  assert.equal(pageByCursor(items, { limit: '24' }).has_more, true);
});

test('starting_after pages forward to an empty page past the end', () => {
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const page = pageByCursor(items, { limit: '7', ...(cursor ? { starting_after: cursor } : {}) });
    pages++;
    if (page.data.length === 0) {
      assert.equal(page.has_more, false);
      break;
    }
    seen.push(...ids(page));
    assert.equal(page.has_more, seen.length < items.length);
    cursor = page.data[page.data.length - 1].id;
  }
  assert.deepEqual(seen, items.map((i) => i.id));
  assert.equal(pages, 5);
});

test('ending_before returns the limit items just before the cursor, in listing order', () => {
  assert.deepEqual(ids(pageByCursor(items, { limit: '3', ending_before: 'id10' })), ['id7', 'id8', 'id9']);
  assert.equal(pageByCursor(items, { limit: '3', ending_before: 'id10' }).has_more, true);
  const first = pageByCursor(items, { limit: '3', ending_before: 'id2' });
  assert.deepEqual(ids(first), ['id0', 'id1']);
  assert.equal(first.has_more, false);
  assert.deepEqual(pageByCursor(items, { ending_before: 'id0' }), { data: [], has_more: false });
});

test('an empty list pages to an empty page', () => {
  assert.deepEqual(pageByCursor([], {}), { data: [], has_more: false });
});

test('empty cursors are ignored', () => {
  assert.equal(pageByCursor(items, { starting_after: '', ending_before: '' }).data[0].id, 'id0');
});

test('bad parameters are 400 invalid_request', () => {
  for (const limit of ['0', '101', '-1', '1.5', 'ten', 0, 101, 2.5, ['1', '2']]) {
    rejects400(() => pageByCursor(items, { limit }), /limit must be an integer from 1 to 100/);
  }
  rejects400(() => pageByCursor(items, { starting_after: 'nope' }), /starting_after: no item with id nope/);
  rejects400(() => pageByCursor(items, { ending_before: 'nope' }), /ending_before: no item with id nope/);
  rejects400(() => pageByCursor(items, { starting_after: 'id1', ending_before: 'id5' }), /not both/);
  rejects400(() => pageByCursor(items, { starting_after: ['id1', 'id2'] }), /given once/);
});
