/**
 * @module webhooks/signature.test
 * Standard Webhooks signatures: the spec's own known answer (from its
 * reference JavaScript library's tests), a round trip, tampering and stale
 * timestamps refused, and the generated secret kept once in the data dir.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { resolveWebhookSecret, signWebhook, verifyWebhook, webhookKey, webhookSecretPath } from './signature.js';

const SPEC_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SPEC_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const SPEC_TIMESTAMP = 1614265330;
const SPEC_BODY = '{"test": 2432232314}';
const SPEC_SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';

const TIMEOUT = { timeout: 10_000 };

describe('webhook signatures', () => {
  it('matches the Standard Webhooks known answer', TIMEOUT, () => {
    const headers = signWebhook(SPEC_SECRET, SPEC_ID, SPEC_TIMESTAMP, SPEC_BODY);
    assert.deepEqual(headers, {
      'webhook-id': SPEC_ID,
      'webhook-timestamp': String(SPEC_TIMESTAMP),
      'webhook-signature': SPEC_SIGNATURE,
    });
    assert.ok(verifyWebhook(SPEC_SECRET, headers, SPEC_BODY, 300, SPEC_TIMESTAMP + 10));
  });

  it('keys a whsec_ secret by its decoded rest, any other by its UTF-8 bytes', TIMEOUT, () => {
    assert.deepEqual(webhookKey(SPEC_SECRET), Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'));
    assert.deepEqual(webhookKey('plain-secret-of-24-chars!'), Buffer.from('plain-secret-of-24-chars!'));
  });

  it('verifies a round trip and refuses tampering, another secret and stale or future timestamps', TIMEOUT, () => {
    const secret = 'a configured secret, not whsec';
    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ type: 'job.succeeded', data: { id: 'job_1' } });
    const headers = signWebhook(secret, 'msg_job_1', now, body);
    assert.ok(verifyWebhook(secret, headers, body));
    assert.ok(!verifyWebhook(secret, headers, body.replace('succeeded', 'failed')));
    assert.ok(!verifyWebhook(secret, { ...headers, 'webhook-timestamp': String(now + 1) }, body));
    assert.ok(!verifyWebhook(secret, { ...headers, 'webhook-id': 'msg_job_2' }, body));
    assert.ok(!verifyWebhook(`${secret}!`, headers, body));
    assert.ok(!verifyWebhook(secret, { ...headers, 'webhook-signature': 'v1,' }, body));
    assert.ok(!verifyWebhook(secret, { ...headers, 'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,') }, body));
    assert.ok(!verifyWebhook(secret, { ...headers, 'webhook-timestamp': 'soon' }, body));
    const { 'webhook-id': _id, ...withoutId } = headers;
    assert.ok(!verifyWebhook(secret, withoutId, body));

    const old = signWebhook(secret, 'msg_job_1', now - 301, body);
    assert.ok(!verifyWebhook(secret, old, body));
    const future = signWebhook(secret, 'msg_job_1', now + 301, body);
    assert.ok(!verifyWebhook(secret, future, body));
    assert.ok(verifyWebhook(secret, old, body, 600));
  });

  it('accepts any matching signature of several (a secret being rotated)', TIMEOUT, () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = signWebhook(SPEC_SECRET, SPEC_ID, now, SPEC_BODY);
    const several = { ...headers, 'webhook-signature': `v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= ${headers['webhook-signature']}` };
    assert.ok(verifyWebhook(SPEC_SECRET, several, SPEC_BODY));
  });

  it('generates a whsec_ secret once, keeps it with mode 0600, and prefers a configured one', TIMEOUT, () => {
    const dir = mkdtempSync(join(tmpdir(), 'voicegate-webhook-secret-'));
    try {
      const dataDir = join(dir, 'data');
      const first = resolveWebhookSecret(null, dataDir);
      assert.match(first, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.equal(webhookKey(first).length, 32);
      assert.equal(statSync(webhookSecretPath(dataDir)).mode & 0o777, 0o600);
      assert.equal(resolveWebhookSecret(null, dataDir), first);
      assert.equal(resolveWebhookSecret('configured-secret-of-24-chars', dataDir), 'configured-secret-of-24-chars');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
