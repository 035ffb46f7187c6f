/**
 * @module http/tls.test
 * TLS material: the development CA and server certificate (names, issuer,
 * key file modes, reuse and renewal), configured PEM files and the start-up
 * failures that name them, and `server.tls` from the environment.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../config/load.js';
import type { TlsConfig } from '../config/schema.js';
import { resolveTls, selfSignedPaths, serverNames } from './tls.js';

const DAY_MS = 86_400_000;

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'voicegate-tls-'));
}

function config(dataDir: string, tls: TlsConfig, host = '127.0.0.1') {
  return { dataDir, server: { ...loadConfig({ env: {} }).server, host, tls } };
}

function certs(dataDir: string): { ca: X509Certificate; server: X509Certificate } {
  const paths = selfSignedPaths(dataDir);
  return { ca: new X509Certificate(readFileSync(paths.ca)), server: new X509Certificate(readFileSync(paths.cert)) };
}

test('plain HTTP needs no TLS material', () => {
  assert.equal(resolveTls(config(tempDir(), null)), null);
});

test('self-signed: a local CA signs a server certificate for loopback and the configured host', () => {
  const dataDir = tempDir();
  const material = resolveTls(config(dataDir, { selfSigned: true }, 'voicegate.test'));
  assert.ok(material);
  const paths = selfSignedPaths(dataDir);
  assert.equal(material.caPath, paths.ca);
  assert.equal(material.caCreated, true);
  assert.equal(material.cert, readFileSync(paths.cert, 'utf8'));
  assert.equal(material.key, readFileSync(paths.key, 'utf8'));
  for (const keyFile of [paths.caKey, paths.key]) assert.equal(statSync(keyFile).mode & 0o777, 0o600, keyFile);

  const { ca, server } = certs(dataDir);
  assert.equal(ca.ca, true);
  assert.equal(server.ca, false);
  assert.ok(server.checkIssued(ca));
  assert.ok(server.verify(ca.publicKey));
  assert.equal(server.issuer, ca.subject);
  assert.equal(server.checkHost('localhost'), 'localhost');
  assert.equal(server.checkHost('voicegate.test'), 'voicegate.test');
  assert.equal(server.checkIP('127.0.0.1'), '127.0.0.1');
  assert.ok(server.checkIP('::1'));
  assert.equal(server.checkHost('example.com'), undefined);
  const lifetimeDays = (Date.parse(server.validTo) - Date.now()) / DAY_MS;
  assert.ok(lifetimeDays > 800 && lifetimeDays <= 825, `server certificate lives ${lifetimeDays} days`);
});

test('the configured host becomes an IP or DNS name; wildcard addresses are left out', () => {
  assert.deepEqual(serverNames('127.0.0.1'), ['localhost', '127.0.0.1', '::1']);
  assert.deepEqual(serverNames('0.0.0.0'), ['localhost', '127.0.0.1', '::1']);
  assert.deepEqual(serverNames('::'), ['localhost', '127.0.0.1', '::1']);
  const dataDir = tempDir();
  resolveTls(config(dataDir, { selfSigned: true }, '10.1.2.3'));
  const { server } = certs(dataDir);
  assert.match(server.subjectAltName ?? '', /IP Address:10\.1\.2\.3/);
  assert.doesNotMatch(server.subjectAltName ?? '', /DNS:10\.1\.2\.3/);
});

test('a later start reuses the CA and certificate; a new host reissues only the certificate', () => {
  const dataDir = tempDir();
  const first = resolveTls(config(dataDir, { selfSigned: true }));
  const before = certs(dataDir);
  const again = resolveTls(config(dataDir, { selfSigned: true }));
  assert.equal(again?.caCreated, false);
  assert.equal(again?.cert, first?.cert);
  assert.equal(certs(dataDir).ca.fingerprint256, before.ca.fingerprint256);

  const moved = resolveTls(config(dataDir, { selfSigned: true }, 'dev.voicegate.test'));
  assert.equal(moved?.caCreated, false);
  assert.notEqual(moved?.cert, first?.cert);
  const after = certs(dataDir);
  assert.equal(after.ca.fingerprint256, before.ca.fingerprint256);
  assert.equal(after.server.checkHost('dev.voicegate.test'), 'dev.voicegate.test');
  assert.ok(after.server.checkIssued(after.ca));
});

test('certificates within 30 days of expiry are renewed at start', () => {
  const dataDir = tempDir();
  resolveTls(config(dataDir, { selfSigned: true }));
  const original = certs(dataDir);

  // The server certificate nears its end first: a new one from the same CA.
  const serverEnd = new Date(Date.parse(original.server.validTo) - 10 * DAY_MS);
  assert.equal(resolveTls(config(dataDir, { selfSigned: true }), serverEnd)?.caCreated, false);
  const renewed = certs(dataDir);
  assert.equal(renewed.ca.fingerprint256, original.ca.fingerprint256);
  assert.notEqual(renewed.server.fingerprint256, original.server.fingerprint256);

  const caEnd = new Date(Date.parse(original.ca.validTo) - 10 * DAY_MS);
  assert.equal(resolveTls(config(dataDir, { selfSigned: true }), caEnd)?.caCreated, true);
  const replaced = certs(dataDir);
  assert.notEqual(replaced.ca.fingerprint256, original.ca.fingerprint256);
  assert.ok(replaced.server.checkIssued(replaced.ca));
});

test('a damaged or mismatched server key is replaced, keeping the CA', () => {
  const dataDir = tempDir();
  resolveTls(config(dataDir, { selfSigned: true }));
  const paths = selfSignedPaths(dataDir);
  const caBefore = certs(dataDir).ca.fingerprint256;
  writeFileSync(paths.key, readFileSync(paths.caKey));
  const material = resolveTls(config(dataDir, { selfSigned: true }));
  assert.equal(material?.caCreated, false);
  assert.equal(certs(dataDir).ca.fingerprint256, caBefore);
  assert.notEqual(readFileSync(paths.key, 'utf8'), readFileSync(paths.caKey, 'utf8'));
});

test('configured PEM files are used as they are', () => {
  const source = tempDir();
  const made = resolveTls(config(source, { selfSigned: true }));
  assert.ok(made);
  const paths = selfSignedPaths(source);
  const material = resolveTls(config(tempDir(), { cert: paths.cert, key: paths.key }));
  assert.deepEqual(material, { cert: made.cert, key: made.key });
});

test('configured files that cannot be used fail start-up naming the file', () => {
  const source = tempDir();
  resolveTls(config(source, { selfSigned: true }));
  const paths = selfSignedPaths(source);
  const missing = join(source, 'nope.pem');
  const garbage = join(source, 'garbage.pem');
  writeFileSync(garbage, 'not a certificate\n');
  const fails = (tls: TlsConfig, pattern: RegExp) =>
    assert.throws(() => resolveTls(config(tempDir(), tls)), (e: unknown) => e instanceof ConfigError && pattern.test(e.message));
  fails({ cert: missing, key: paths.key }, new RegExp(`cannot read TLS certificate ${missing}`));
  fails({ cert: paths.cert, key: missing }, new RegExp(`cannot read TLS key ${missing}`));
  fails({ cert: garbage, key: paths.key }, new RegExp(`TLS certificate ${garbage} holds no PEM certificate`));
  fails({ cert: paths.cert, key: garbage }, new RegExp(`TLS key ${garbage} holds no unencrypted PEM private key`));
  fails({ cert: paths.ca, key: paths.key }, new RegExp(`TLS key ${paths.key} does not match certificate ${paths.ca}`));
});

test('server.tls from the file, VOICEGATE_TLS*, and --tls', () => {
  assert.equal(loadConfig({ env: {} }).server.tls, null);
  assert.deepEqual(loadConfig({ env: { VOICEGATE_TLS: 'self-signed' } }).server.tls, { selfSigned: true });
  assert.deepEqual(loadConfig({ env: { VOICEGATE_TLS_CERT: '/c.pem', VOICEGATE_TLS_KEY: '/k.pem' } }).server.tls, { cert: '/c.pem', key: '/k.pem' });
  assert.deepEqual(loadConfig({ env: {}, tls: 'self-signed' }).server.tls, { selfSigned: true });

  const path = join(tempDir(), 'config.json');
  writeFileSync(path, JSON.stringify({ server: { tls: { cert: '/c.pem', key: '/k.pem' } } }));
  assert.deepEqual(loadConfig({ file: path, env: {} }).server.tls, { cert: '/c.pem', key: '/k.pem' });
  // The environment and --tls replace the file's setting whole rather than merging into it.
  assert.deepEqual(loadConfig({ file: path, env: { VOICEGATE_TLS: 'self-signed' } }).server.tls, { selfSigned: true });
  assert.equal(loadConfig({ file: path, env: { VOICEGATE_TLS: 'off' } }).server.tls, null);
  assert.deepEqual(loadConfig({ file: path, env: { VOICEGATE_TLS_CERT: '/c2.pem', VOICEGATE_TLS_KEY: '/k2.pem' }, tls: 'self-signed' }).server.tls, { selfSigned: true });

  const rejects = (env: NodeJS.ProcessEnv, pattern: RegExp) =>
    assert.throws(() => loadConfig({ env }), (e: unknown) => e instanceof ConfigError && pattern.test(e.message));
  rejects({ VOICEGATE_TLS_CERT: '/c.pem' }, /VOICEGATE_TLS_CERT and VOICEGATE_TLS_KEY must be set together/);
  rejects({ VOICEGATE_TLS: 'yes' }, /VOICEGATE_TLS must be self-signed or off/);
  rejects({ VOICEGATE_TLS: 'self-signed', VOICEGATE_TLS_CERT: '/c.pem', VOICEGATE_TLS_KEY: '/k.pem' }, /not both/);
  writeFileSync(path, JSON.stringify({ server: { tls: { selfSigned: true, cert: '/c.pem' } } }));
  assert.throws(() => loadConfig({ file: path, env: {} }), (e: unknown) => e instanceof ConfigError && /server\.tls/.test(e.message));
});
