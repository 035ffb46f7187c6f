/**
 * @module test/helpers/change-bus-contract
 * The contract every change bus keeps: a change published on one bus reaches
 * every subscriber of every bus within a second, exactly once (the publisher's
 * own listeners included), in order; unsubscribing stops delivery; a listener
 * that throws does not keep the change from the others.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AccountsChange, ChangeBus } from '../../src/cluster/change-bus.js';
import { eventually } from './redis.js';

export interface ChangeBusSubject {
  /** Two buses as two servers would have them (the same object for an in-process bus). */
  a: ChangeBus;
  b: ChangeBus;
  /** Resolves once the subscriptions made so far are live. */
  settle(): Promise<void>;
  dispose(): Promise<void>;
}

function recorder(bus: ChangeBus): { seen: AccountsChange[]; stop: () => void } {
  const seen: AccountsChange[] = [];
  return { seen, stop: bus.subscribe((change) => seen.push(change)) };
}

async function withSubject(open: () => Promise<ChangeBusSubject>, body: (subject: ChangeBusSubject) => Promise<void>): Promise<void> {
  const subject = await open();
  try {
    await body(subject);
  } finally {
    await subject.dispose();
  }
}

export function changeBusContract(name: string, open: () => Promise<ChangeBusSubject>): void {
  describe(`change bus contract: ${name}`, () => {
    test('a change published on one bus reaches every subscriber within 1 s, exactly once and in order', { timeout: 20_000 }, () =>
      withSubject(open, async ({ a, b, settle }) => {
        const onA = recorder(a);
        const onB = recorder(b);
        await settle();
        const first = { keyId: 'key_0123456789abcdef' };
        const second = { orgId: 'org_0123456789abcdef' };
        const started = performance.now();
        await a.publish(first);
        assert.deepEqual(onA.seen, [first], 'the publisher’s own listeners hear it before publish settles');
        await a.publish(second);
        assert.ok(await eventually(() => onB.seen.length >= 2, 1000, 5), 'the other bus heard both within 1 s');
        assert.ok(performance.now() - started < 1000);
        assert.deepEqual(onB.seen, [first, second]);
        // A change from b that reaches a comes after any echo of a's own changes would have.
        const third = { orgId: 'org_fedcba9876543210', keyId: 'key_fedcba9876543210' };
        await b.publish(third);
        assert.ok(await eventually(() => onA.seen.length >= 3, 1000, 5));
        assert.deepEqual(onA.seen, [first, second, third], 'no echo, no duplicate');
        assert.deepEqual(onB.seen, [first, second, third]);
      }),
    );

    test('unsubscribing stops delivery; a throwing listener does not stop the others', { timeout: 20_000 }, () =>
      withSubject(open, async ({ a, b, settle }) => {
        const gone = recorder(b);
        const stays = recorder(b);
        b.subscribe(() => {
          throw new Error('listener failure');
        });
        const late = recorder(b);
        await settle();
        gone.stop();
        await a.publish({ orgId: 'org_1' });
        assert.ok(await eventually(() => stays.seen.length === 1 && late.seen.length === 1, 1000, 5));
        assert.deepEqual(gone.seen, []);
      }),
    );
  });
}
