/**
 * @module test/tls
 * HTTPS on the server's own port, as the Cartesia SDK's `wss://` client needs
 * it: the self-signed development CA trusted by a client (HTTPS and a `ws`
 * client on `wss://`), plain HTTP refused on that port, the CA reused across starts, operator-supplied PEM files, and
 * `voicegate serve --tls self-signed` telling how to trust the CA.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import forge from 'node-forge';
import { WebSocket } from 'ws';
import { ConfigError } from '../src/config/load.js';
import { selfSignedPaths } from '../src/http/tls.js';
import { startServer, tempDataDir } from './helpers/server.js';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));

/** GET over HTTPS trusting only `ca`; a fresh connection each time, so nothing outlives the server. */
function httpsGet(url: string, ca?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A self-signed certificate for loopback, made the way an operator might bring their own. */
function operatorPair(dir: string): { cert: string; key: string; certPem: string } {
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicKey);
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 3_600_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  const name = [{ name: 'commonName', value: 'operator test' }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] }]);
  cert.sign(forge.pki.privateKeyFromPem(keys.privateKey), forge.md.sha256.create());
  const certPem = forge.pki.certificateToPem(cert);
  writeFileSync(join(dir, 'cert.pem'), certPem);
  writeFileSync(join(dir, 'key.pem'), keys.privateKey, { mode: 0o600 });
  return { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem'), certPem };
}

test('self-signed: HTTPS on the port for clients that trust the CA; plain HTTP and untrusting clients fail', async () => {
  const server = await startServer({ config: { server: { tls: { selfSigned: true } } } });
  try {
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(server.ca);
    const health = await httpsGet(server.url + '/healthz', server.ca);
    assert.equal(health.status, 200);
    assert.deepEqual(JSON.parse(health.body), { status: 'ok' });

    await assert.rejects(httpsGet(server.url + '/healthz'), (e: NodeJS.ErrnoException) => e.code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    await assert.rejects(fetch(server.url.replace(/^https:/, 'http:') + '/healthz'));
  } finally {
    await server.close();
  }
});

test('self-signed: the TLS handshake for localhost is trusted through the CA, over HTTP/1.1', async () => {
  const server = await startServer({ config: { server: { tls: { selfSigned: true } } } });
  try {
    assert.ok(server.ca);
    const ca = new X509Certificate(server.ca);
    const socket = connect({ host: '127.0.0.1', port: Number(new URL(server.url).port), servername: 'localhost', ca: server.ca, ALPNProtocols: ['h2', 'http/1.1'] });
    try {
      await once(socket, 'secureConnect');
      assert.equal(socket.authorized, true, String(socket.authorizationError));
      assert.notEqual(socket.alpnProtocol, 'h2');
      const peer = socket.getPeerX509Certificate();
      assert.ok(peer);
      assert.equal(peer.checkHost('localhost'), 'localhost');
      assert.equal(peer.checkIP('127.0.0.1'), '127.0.0.1');
      assert.ok(peer.checkIP('::1'));
      assert.equal(peer.issuer, ca.subject);
      assert.ok(peer.checkIssued(ca) && peer.verify(ca.publicKey));
    } finally {
      socket.destroy();
    }
  } finally {
    await server.close();
  }
});

test('self-signed: a ws client opens wss:// on the same port when it trusts the CA', async () => {
  const server = await startServer({ config: { server: { tls: { selfSigned: true } } } });
  try {
    const url = server.url.replace(/^https:/, 'wss:') + '/tts/websocket';
    const trusted = new WebSocket(url, { ca: server.ca });
    await once(trusted, 'open');
    trusted.close();
    await once(trusted, 'close');
    const untrusting = new WebSocket(url);
    const [error] = (await once(untrusting, 'error')) as [NodeJS.ErrnoException];
    assert.equal(error.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  } finally {
    await server.close();
  }
});

test('self-signed: a second start on the same data directory reuses the CA', async () => {
  const dataDir = tempDataDir();
  const fingerprints: string[] = [];
  for (let i = 0; i < 2; i++) {
    const server = await startServer({ config: { dataDir, server: { tls: { selfSigned: true } } } });
    try {
      assert.ok(server.ca);
      fingerprints.push(new X509Certificate(server.ca).fingerprint256);
      assert.equal((await httpsGet(server.url + '/healthz', server.ca)).status, 200);
    } finally {
      await server.close();
    }
  }
  assert.equal(fingerprints[0], fingerprints[1]);
});

test('configured certificate and key files serve HTTPS; an unreadable one stops start-up naming it', async () => {
  const dir = tempDataDir();
  const pair = operatorPair(dir);
  const server = await startServer({ config: { server: { tls: { cert: pair.cert, key: pair.key } } } });
  try {
    assert.match(server.url, /^https:/);
    assert.equal(server.ca, undefined);
    assert.equal((await httpsGet(server.url + '/healthz', pair.certPem)).status, 200);
  } finally {
    await server.close();
  }

  const missing = join(dir, 'missing-key.pem');
  await assert.rejects(
    startServer({ config: { server: { tls: { cert: pair.cert, key: missing } } } }),
    (e: unknown) => e instanceof ConfigError && e.message.includes(`cannot read TLS key ${missing}`),
  );
});

test('voicegate serve --tls self-signed prints where the CA is and how to trust it', async () => {
  const dataDir = tempDataDir();
  const env = { PATH: process.env.PATH, PORT: '0', VOICEGATE_DATA_DIR: dataDir, VOICEGATE_ACCOUNTS: 'off', VOICEGATE_ESPEAK_WORKERS: '1' };
  const child = spawn(process.execPath, [MAIN, 'serve', '--tls', 'self-signed'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    let out = '';
    child.stdout.setEncoding('utf8');
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: string) => {
        out += chunk;
        if (out.includes('voicegate ready')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
    });
    const caPath = selfSignedPaths(dataDir).ca;
    assert.ok(out.includes(`NODE_EXTRA_CA_CERTS=${caPath}`), out);
    assert.ok(out.includes(`curl --cacert ${caPath} https://`), out);
    const ready = JSON.parse(out.split('\n').find((line) => line.includes('voicegate ready')) ?? '{}') as { address: string; tlsCa: string };
    assert.match(ready.address, /^https:\/\//);
    assert.equal(ready.tlsCa, caPath);
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
  }

  const usage = await promisify(execFile)(process.execPath, [MAIN, 'serve', '--tls', 'on'], { env }).then(
    () => assert.fail('--tls on was accepted'),
    (e: { code: number; stderr: string }) => e,
  );
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--tls takes only self-signed/);
});
