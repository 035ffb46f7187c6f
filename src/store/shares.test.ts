/**
 * @module store/shares.test
 * The share book alone: what the spare grants without the database, how big
 * the spare is, when a share's row is rewritten, lapses, and that a rolled
 * back transaction leaves the book as it was.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ShareBook } from './shares.js';

const TTL = 60_000;
const req = (id: string, credits: number, orgId = 'org_a', ttlMs = TTL) => ({ id, orgId, credits, ttlMs });

/** A book with one decided hold of `credits` on `balance`, committed. */
function decided(balance: number, credits: number, now = 1_000) {
  const book = new ShareBook('share_test', 0);
  book.begin();
  const result = book.decide(req('h1', credits), balance, 0, now);
  const changed = book.changed().map((s) => ({ credits: s.credits, expiresAt: s.expiresAt }));
  book.commit();
  return { book, result, changed };
}

describe('ShareBook', () => {
  it('under steady traffic whose charges refill the spare, asks the database to resize it once recent grants want twice as much; not again for a while after that call failed', () => {
    const book = new ShareBook('share_steady');
    let now = 1_000;
    let decisions = 0;
    for (let i = 0; i < 800; i++) {
      const r = req(`s${i}`, 42);
      if (!book.grantFromSpare(r, now)) {
        decisions++;
        book.begin();
        book.decide(r, 100_000_000 - 42 * i, 0, now);
        book.commit();
      }
      book.begin();
      book.settle(`s${i}`, 'org_a', 100_000_000 - 42 * (i + 1));
      book.commit();
      now += 5;
    }
    const share = book.share('org_a')!;
    assert.ok(decisions <= 8, `a few resizes, not a call per request (${decisions})`);
    assert.ok(share.spare * 2 >= book.outageSpare('org_a', now), `the spare follows the recent grants (${share.spare} of ${book.outageSpare('org_a', now)})`);
    // The next resize is due: a failed call leaves the spare granting without asking for a while.
    for (let i = 0; book.grantFromSpare(req(`r${i}`, 42), now) !== null && i < 1_000; i++);
    assert.equal(book.grantFromSpare(req('due', 42), now), null, 'a resize is asked for');
    book.undecided('org_a');
    assert.ok(book.grantFromSpare(req('after', 42), now + 1), 'granted from the spare while the database is away');
  });

  it('keeps at least the outage spare: 1,000 credits, or the last minute of grants if more, never more than a quarter of what is left', () => {
    const book = new ShareBook('share_outage');
    book.begin();
    book.decide(req('o1', 10), 100_000, 0, 1_000);
    const [share] = book.changed();
    book.commit();
    assert.equal(share.spare, 1_000, '16 holds of 10 would be 160');
    // A minute of grants worth more than 1,000 sizes it instead (the spare grants 100 holds of 10).
    for (let i = 0; i < 150; i++) book.grantFromSpare(req(`g${i}`, 10), 2_000);
    assert.equal(book.outageSpare('org_a', 2_000), 1_010);
    assert.equal(book.outageSpare('org_a', 1_000 + 3 * 60_000), 1_000, 'grants older than two minutes are forgotten');
    const capped = new ShareBook('share_capped');
    capped.begin();
    capped.decide(req('c1', 10), 2_010, 0, 1_000);
    assert.equal(capped.changed()[0].spare, 500, 'a quarter of the 2,000 left');
    capped.commit();
    const configured = new ShareBook('share_configured', 4_000);
    configured.begin();
    configured.decide(req('k1', 10), 100_000, 0, 1_000);
    assert.equal(configured.changed()[0].spare, 4_000, 'accounts.outageShareCredits');
    configured.commit();
  });

  it('the database grants while balance − (others + open) > 0, and the share keeps a spare of at most 16 such holds and a quarter of what is left', () => {
    const { book, result, changed } = decided(1_000, 10);
    assert.deepEqual([result.ok, result.balance, result.reserved], [true, 1_000, 0]);
    // Left after the hold: 990; a quarter is 247, 16 holds of 10 are 160.
    assert.deepEqual(changed, [{ credits: 170, expiresAt: 1_000 + TTL * 1.25 }]);
    assert.equal(book.open('org_a', 1_000), 10);

    const low = decided(30, 10).changed;
    assert.equal(low[0].credits, 10 + 5, 'a quarter of the 20 left');
    const overdrawn = decided(5, 10);
    assert.equal(overdrawn.result.ok, true, 'granted while anything is left, even though it overshoots');
    assert.equal(overdrawn.changed[0].credits, 10, 'no spare once the balance is used up');
  });

  it('a hold that fits into the spare is granted without the database; one that does not, or would outlive the row, is not', () => {
    const { book } = decided(1_000, 10);
    const spare = book.grantFromSpare(req('h2', 100), 2_000);
    assert.ok(spare?.ok);
    assert.deepEqual([spare.balance, spare.reserved, spare.reservation.credits], [1_000, 10, 100]);
    assert.equal(book.open('org_a', 2_000), 110);
    assert.equal(book.grantFromSpare(req('h3', 61), 2_000), null, '60 credits of spare left');
    assert.equal(book.grantFromSpare(req('h4', 1, 'org_b'), 2_000), null, 'no share for that organisation');
    assert.equal(book.grantFromSpare(req('h5', 1, 'org_a', TTL * 2), 2_000), null, 'the row would lapse before the hold');
    // A repeated id holds nothing twice, and never for another organisation.
    assert.equal(book.grantFromSpare(req('h2', 100), 2_000)?.ok, true);
    assert.equal(book.open('org_a', 2_000), 110);
    assert.throws(() => book.grantFromSpare(req('h2', 100, 'org_b'), 2_000), /another organization/);
  });

  it('a refusal gives the spare back', () => {
    const book = new ShareBook('share_test', 0);
    book.begin();
    book.decide(req('h1', 10), 100, 0, 1_000);
    book.commit();
    book.begin();
    const refused = book.decide(req('h2', 10), 100, 95, 1_000);
    assert.deepEqual(refused, { ok: false, balance: 100, reserved: 105 });
    assert.deepEqual(book.changed().map((s) => s.credits), [10]);
    book.commit();
  });

  it('charged holds leave their credits as spare until the row holds more than twice its spare', () => {
    const { book } = decided(10_000, 10);
    for (let i = 2; i <= 17; i++) assert.ok(book.grantFromSpare(req(`h${i}`, 10), 2_000)?.ok);
    assert.equal(book.grantFromSpare(req('h18', 10), 2_000), null, 'the 160 credits of spare are used');
    const settles: boolean[] = [];
    book.begin();
    for (let i = 1; i <= 17; i++) {
      assert.equal(book.settle(`h${i}`, 'org_a', 10_000 - 10 * i), true);
      settles.push(book.changed().length > 0);
    }
    const share = book.changed()[0];
    book.commit();
    // The row (170) is rewritten once the spare in it passes 2 × 160 — it never does here: 170 − 0 ≤ 320.
    assert.deepEqual(settles, Array(17).fill(false));
    assert.equal(share, undefined);
    assert.equal(book.open('org_a', 2_000), 0);
    assert.equal(book.share('org_a')?.balance, 10_000 - 170);
    assert.equal(book.settle('h1', 'org_a', 0), false, 'a hold already charged');
    assert.equal(book.settle('nope', 'org_a', 0), false);
  });

  it('a release that leaves too much spare asks for the row to shrink', () => {
    const book = new ShareBook('share_test', 0);
    book.begin();
    book.decide(req('h1', 10), 44, 0, 1_000); // spare: a quarter of the 34 left → 8
    book.decide(req('h2', 10), 44, 0, 1_000); // open 20, 24 left → spare 6, row 26
    book.commit();
    assert.equal(book.release('h1'), true, '16 credits beyond the open hold, more than 2 × 6');
    book.begin();
    book.shrink('org_a', 1_000);
    assert.deepEqual(book.changed().map((s) => s.credits), [16]);
    book.commit();
    assert.equal(book.release('h1'), false, 'released already');
  });

  it('holds lapse, and so does a share whose row has lapsed', () => {
    const book = new ShareBook('share_test', 0);
    book.begin();
    book.decide(req('h1', 10, 'org_a', 40), 1_000, 0, 1_000);
    book.commit();
    assert.equal(book.open('org_a', 1_039), 10);
    assert.equal(book.open('org_a', 1_040), 0);
    // The row (expiring at 1,050) still covers a hold until 1,050.
    assert.ok(book.grantFromSpare(req('h2', 10, 'org_a', 5), 1_041)?.ok);
    assert.equal(book.grantFromSpare(req('h3', 10, 'org_a', 40), 1_041), null);
    book.begin();
    const again = book.decide(req('h3', 10, 'org_a', 40), 1_000, 0, 1_060);
    assert.equal(again.ok, true);
    assert.equal(again.reserved, 0, 'the lapsed holds no longer count');
    assert.ok(book.changed()[0].expiresAt >= 1_060 + 40);
    book.commit();
  });

  it('a rolled-back transaction leaves the book as it was; rolling back to a mark undoes only what came after it', () => {
    const { book } = decided(1_000, 10);
    const before = { ...book.share('org_a')!, holds: undefined };
    book.begin();
    book.decide(req('h2', 50), 1_000, 0, 1_500);
    const mark = book.mark();
    book.decide(req('h3', 20), 1_000, 0, 1_500);
    book.decide(req('x1', 5, 'org_b'), 100, 0, 1_500);
    book.rollbackTo(mark);
    assert.equal(book.hold('h3'), null);
    assert.equal(book.share('org_b'), null);
    assert.equal(book.open('org_a', 1_500), 60);
    book.settle('h1', 'org_a', 990);
    book.rollback();
    assert.deepEqual({ ...book.share('org_a')!, holds: undefined }, before);
    assert.ok(book.hold('h1'));
    assert.equal(book.hold('h2'), null);
    assert.equal(book.open('org_a', 1_500), 10);
  });
});
