/**
 * @module webhooks/url-guard.test
 * The SSRF guard of webhook URLs: scheme, credentials, length, and every
 * internal address range refused (literal or resolved) unless private
 * networks are allowed. Lookups are faked, so no test touches DNS.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../errors/api-error.js';
import { addressProblem, checkWebhookUrl, type WebhookLookup } from './url-guard.js';

const PUBLIC = '93.184.215.14';
const publicLookup: WebhookLookup = async () => [{ address: PUBLIC, family: 4 }];
const lookupOf = (...addresses: string[]): WebhookLookup => async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
const strict = { allowHttp: false, allowPrivateNetworks: false, lookup: publicLookup };
const open = { allowHttp: true, allowPrivateNetworks: true, lookup: publicLookup };

async function refusal(url: string, options: Parameters<typeof checkWebhookUrl>[1]): Promise<string> {
  try {
    await checkWebhookUrl(url, options);
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.code, 'invalid_webhook_url');
    assert.equal(err.status, 400);
    return err.message;
  }
  assert.fail(`${url} was accepted`);
}

const TIMEOUT = { timeout: 10_000 };

describe('webhook URL guard', () => {
  it('accepts an https URL whose host resolves publicly', TIMEOUT, async () => {
    const url = await checkWebhookUrl('https://hooks.example.com/voicegate?x=1', strict);
    assert.equal(url.hostname, 'hooks.example.com');
  });

  it('refuses http unless allowHttp', TIMEOUT, async () => {
    assert.match(await refusal('http://hooks.example.com/', strict), /must use https/);
    await checkWebhookUrl('http://hooks.example.com/', { ...strict, allowHttp: true });
    assert.match(await refusal('ftp://hooks.example.com/', { ...strict, allowHttp: true }), /must use https or http/);
  });

  it('refuses credentials, relative URLs and overlong URLs', TIMEOUT, async () => {
    assert.match(await refusal('https://user:pass@hooks.example.com/', open), /username or password/);
    assert.match(await refusal('https://user@hooks.example.com/', open), /username or password/);
    assert.match(await refusal('/hooks', open), /not an absolute URL/);
    assert.match(await refusal(`https://hooks.example.com/${'a'.repeat(2048)}`, open), /longer than 2048/);
  });

  it('refuses a host that does not resolve', TIMEOUT, async () => {
    const failing: WebhookLookup = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    assert.match(await refusal('https://nowhere.invalid/', { ...strict, lookup: failing }), /nowhere\.invalid does not resolve/);
    assert.match(await refusal('https://empty.example/', { ...strict, lookup: lookupOf() }), /does not resolve/);
  });

  const internal: [string, RegExp][] = [
    ['http://127.0.0.1/', /loopback address \(127\.0\.0\.1\)/],
    ['http://[::1]/', /loopback address \(::1\)/],
    ['http://10.1.2.3/', /private address \(10\.1\.2\.3\)/],
    ['http://192.168.1.1/', /private address/],
    ['http://172.16.0.1/', /private address/],
    ['http://169.254.169.254/latest/meta-data/', /link-local address \(169\.254\.169\.254\)/],
    ['http://[::ffff:127.0.0.1]/', /loopback address/],
    ['http://[::ffff:10.0.0.1]/', /private address/],
    ['http://100.64.0.1/', /carrier-grade NAT address \(100\.64\.0\.1\)/],
    ['http://0.0.0.0/', /unspecified address/],
    ['http://0.1.2.3/', /unspecified address/],
    ['http://255.255.255.255/', /broadcast address/],
    ['http://224.0.0.1/', /multicast address/],
    ['http://240.0.0.1/', /reserved address/],
    ['http://[fe80::1]/', /link-local address/],
    ['http://[fd00::1]/', /unique-local address/],
    ['http://[ff02::1]/', /multicast address/],
    ['http://[::]/', /unspecified address/],
    ['http://[64:ff9b::a00:1]/', /private address/], // NAT64 of 10.0.0.1
    ['http://2130706433/', /loopback address/], // 127.0.0.1 as one number
    ['http://0x7f.1/', /loopback address/],
  ];
  for (const [url, reason] of internal) {
    it(`refuses ${url} unless allowPrivateNetworks`, TIMEOUT, async () => {
      assert.match(await refusal(url, { ...strict, allowHttp: true }), reason);
      await checkWebhookUrl(url, open);
    });
  }

  it('refuses a name resolving to a private address, even when another address is public', TIMEOUT, async () => {
    const message = await refusal('https://internal.example.com/', { ...strict, lookup: lookupOf('10.0.0.5') });
    assert.match(message, /resolves to a private address \(10\.0\.0\.5\)/);
    assert.match(await refusal('https://mixed.example.com/', { ...strict, lookup: lookupOf(PUBLIC, '127.0.0.1') }), /loopback/);
    await checkWebhookUrl('https://internal.example.com/', { ...open, lookup: lookupOf('10.0.0.5') });
  });

  it('judges addresses: public unicast passes, mapped and NAT64 forms are unwrapped', TIMEOUT, () => {
    assert.equal(addressProblem('8.8.8.8'), null);
    assert.equal(addressProblem('2606:4700:4700::1111'), null);
    assert.equal(addressProblem('::ffff:8.8.8.8'), null);
    assert.equal(addressProblem('64:ff9b::808:808'), null);
    assert.match(addressProblem('64:ff9b::7f00:1') ?? '', /loopback/);
    assert.match(addressProblem('2002:7f00:1::1') ?? '', /reserved \(6to4\)/);
    assert.match(addressProblem('2001:db8::1') ?? '', /reserved/);
  });
});
