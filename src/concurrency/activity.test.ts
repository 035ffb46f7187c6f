/** @module concurrency/activity.test — counts follow this server's events only, and never go below zero. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { diagnostics } from '../synthesis/diagnostics.js';
import { Activity } from './activity.js';

const admitted = (instance: string, requestId: string, orgId: string | null, endpoint = 'tts.bytes') =>
  diagnostics.admitted.publish({ instance, requestId, endpoint, orgId, keyId: null, model: 'm', engine: 'e', characters: 3, admitMs: 1 });
const ended = (instance: string, requestId: string) =>
  diagnostics.end.publish({ instance, requestId, endpoint: 'tts.bytes', orgId: null, model: 'm', engine: 'e', status: 200 });

test('syntheses count from admission to end, by organisation and endpoint; other servers are ignored', () => {
  const activity = new Activity('a');
  try {
    admitted('a', 'r1', 'org_1');
    admitted('a', 'r2', 'org_1', 'tts.sse');
    admitted('a', 'r3', 'org_2');
    admitted('b', 'r4', 'org_1');
    assert.equal(activity.syntheses('org_1'), 2);
    assert.equal(activity.syntheses('org_2'), 1);
    assert.deepEqual([...activity.synthesesByEndpoint()].sort(), [['tts.bytes', 2], ['tts.sse', 1]]);
    ended('a', 'r1');
    ended('a', 'r1');
    ended('a', 'never-admitted');
    ended('b', 'r2');
    assert.equal(activity.syntheses('org_1'), 1);
    ended('a', 'r2');
    ended('a', 'r3');
    assert.equal(activity.syntheses('org_1'), 0);
    assert.equal(activity.synthesesByEndpoint().size, 0);
  } finally {
    activity.stop();
  }
});

test('WebSocket connections count from open to close, by organisation', () => {
  const activity = new Activity('a');
  try {
    diagnostics.websocketOpen.publish({ instance: 'a', connectionId: 'c1', orgId: 'org_1' });
    diagnostics.websocketOpen.publish({ instance: 'a', connectionId: 'c2', orgId: 'org_1' });
    diagnostics.websocketOpen.publish({ instance: 'b', connectionId: 'c3', orgId: 'org_1' });
    assert.equal(activity.websockets('org_1'), 2);
    assert.equal(activity.websocketTotal(), 2);
    diagnostics.websocketClose.publish({ instance: 'a', connectionId: 'c1', orgId: 'org_1' });
    diagnostics.websocketClose.publish({ instance: 'a', connectionId: 'c1', orgId: 'org_1' });
    assert.equal(activity.websockets('org_1'), 1);
    activity.stop();
    diagnostics.websocketClose.publish({ instance: 'a', connectionId: 'c2', orgId: 'org_1' });
    assert.equal(activity.websockets('org_1'), 1, 'a stopped tracker no longer listens');
  } finally {
    activity.stop();
  }
});

test('background work (a job’s segments) is counted apart from the organisation’s requests', () => {
  const activity = new Activity('a');
  try {
    admitted('a', 'r1', 'org_1');
    diagnostics.admitted.publish({ instance: 'a', requestId: 'job_1/0', endpoint: 'tts.jobs', orgId: 'org_1', keyId: null, model: 'm', engine: 'e', characters: 3, admitMs: 1, background: true });
    assert.equal(activity.syntheses('org_1'), 1);
    assert.equal(activity.background('org_1'), 1);
    assert.deepEqual([...activity.synthesesByEndpoint()].sort(), [['tts.bytes', 1], ['tts.jobs', 1]]);
    diagnostics.end.publish({ instance: 'a', requestId: 'job_1/0', endpoint: 'tts.jobs', orgId: 'org_1', model: 'm', engine: 'e', status: 200 });
    assert.equal(activity.background('org_1'), 0);
    assert.equal(activity.syntheses('org_1'), 1);
  } finally {
    activity.stop();
  }
});
