/**
 * @module http/tls
 * TLS material for the HTTP server, so HTTPS and WSS share its port: a
 * configured certificate and key (PEM files), or a self-signed development
 * setup — a local CA and a server certificate it signs, kept under
 * `<dataDir>/tls/` and reused across starts, so clients trust the CA once.
 * Keys come from node:crypto; node-forge builds and signs the certificates.
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import forge from 'node-forge';
import { ConfigError } from '../config/load.js';
import type { Config } from '../config/schema.js';

export interface TlsMaterial {
  key: string;
  cert: string;
  /** The development CA that clients must trust (self-signed mode only). */
  caPath?: string;
  /** This start made a new CA, so clients that trusted an older one must trust it again. */
  caCreated?: boolean;
}

const DAY_MS = 86_400_000;
/** Certificates this close to expiry are replaced at start. */
const RENEW_WITHIN_MS = 30 * DAY_MS;
const CA_LIFETIME_MS = 10 * 365 * DAY_MS;
/** Apple clients reject server certificates valid for longer than 825 days, even from a trusted local CA. */
const SERVER_LIFETIME_MS = 825 * DAY_MS;
/** Tolerates clients whose clocks run a little behind. */
const BACKDATE_MS = 3_600_000;
const ORGANIZATION = 'Voicegate development';

/** Where self-signed mode keeps its files; absolute, because clients use the CA path from elsewhere. */
export function selfSignedPaths(dataDir: string): { dir: string; ca: string; caKey: string; cert: string; key: string } {
  const dir = resolve(dataDir, 'tls');
  return { dir, ca: join(dir, 'ca.pem'), caKey: join(dir, 'ca-key.pem'), cert: join(dir, 'server.pem'), key: join(dir, 'server-key.pem') };
}

/** The names the development certificate covers: loopback in every spelling, and the configured host. */
export function serverNames(host: string): string[] {
  const names = ['localhost', '127.0.0.1', '::1'];
  // A wildcard bind address is no name a client dials.
  if (host && host !== '0.0.0.0' && host !== '::' && !names.includes(host)) names.push(host);
  return names;
}

/**
 * The configured TLS material, or null for plain HTTP. Fails start-up with a
 * ConfigError naming the file when a configured certificate or key cannot be
 * used; self-signed mode creates or renews what it needs.
 */
export function resolveTls(config: Pick<Config, 'server' | 'dataDir'>, now: Date = new Date()): TlsMaterial | null {
  const tls = config.server.tls;
  if (!tls) return null;
  if ('selfSigned' in tls) return ensureSelfSigned(config.dataDir, serverNames(config.server.host), now);
  return loadConfigured(tls.cert, tls.key);
}

function readPem(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read TLS ${what} ${path}: ${(err as Error).message}`);
  }
}

function loadConfigured(certPath: string, keyPath: string): TlsMaterial {
  const cert = readPem(certPath, 'certificate');
  const key = readPem(keyPath, 'key');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new ConfigError(`TLS certificate ${certPath} holds no PEM certificate`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError(`TLS key ${keyPath} holds no unencrypted PEM private key`);
  }
  if (!x509.checkPrivateKey(privateKey)) throw new ConfigError(`TLS key ${keyPath} does not match certificate ${certPath}`);
  return { key, cert };
}

interface Pair {
  certPem: string;
  keyPem: string;
  x509: X509Certificate;
}

/** A certificate and its key from disk, or null when either is missing, unparsable, or they do not match. */
function readPair(certPath: string, keyPath: string): Pair | null {
  if (!existsSync(certPath) || !existsSync(keyPath)) return null;
  try {
    const certPem = readFileSync(certPath, 'utf8');
    const keyPem = readFileSync(keyPath, 'utf8');
    const x509 = new X509Certificate(certPem);
    return x509.checkPrivateKey(createPrivateKey(keyPem)) ? { certPem, keyPem, x509 } : null;
  } catch {
    return null;
  }
}

function fresh(x509: X509Certificate, now: Date): boolean {
  return Date.parse(x509.validTo) - now.getTime() > RENEW_WITHIN_MS && Date.parse(x509.validFrom) <= now.getTime();
}

function covers(x509: X509Certificate, names: string[]): boolean {
  return names.every((name) => (isIP(name) ? x509.checkIP(name) : x509.checkHost(name)) !== undefined);
}

function ensureSelfSigned(dataDir: string, names: string[], now: Date): TlsMaterial {
  const paths = selfSignedPaths(dataDir);
  let ca = readPair(paths.ca, paths.caKey);
  const caCreated = !ca || !ca.x509.ca || !fresh(ca.x509, now);
  if (!ca || caCreated) {
    ca = createCa(now);
    // Key before certificate: a start cut off in between leaves a mismatch, which the next start replaces.
    writeFiles(paths.dir, [
      [paths.caKey, ca.keyPem, 0o600],
      [paths.ca, ca.certPem, 0o644],
    ]);
  }
  let server = readPair(paths.cert, paths.key);
  const reuse = server && fresh(server.x509, now) && server.x509.checkIssued(ca.x509) && server.x509.verify(ca.x509.publicKey) && covers(server.x509, names);
  if (!server || !reuse) {
    server = createServerCert(ca, names, now);
    writeFiles(paths.dir, [
      [paths.key, server.keyPem, 0o600],
      [paths.cert, server.certPem, 0o644],
    ]);
  }
  return { key: server.keyPem, cert: server.certPem, caPath: paths.ca, caCreated };
}

/** Writes each file whole (temporary file, then rename) with its mode, so readers never see half a key. */
function writeFiles(dir: string, files: [string, string, number][]): void {
  try {
    mkdirSync(dir, { recursive: true });
    for (const [path, text, mode] of files) {
      const temp = `${path}.${process.pid}.tmp`;
      writeFileSync(temp, text, { mode });
      chmodSync(temp, mode);
      renameSync(temp, path);
    }
  } catch (err) {
    throw new ConfigError(`cannot write the development TLS files under ${dir}: ${(err as Error).message}`);
  }
}

function rsaKeys(): { publicKey: string; privateKey: string } {
  // Native key generation: forge's pure-JS RSA keygen takes seconds.
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

function newCertificate(publicKeyPem: string, now: Date, lifetimeMs: number): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKeyPem);
  // A leading 01 keeps the random serial positive and of fixed length.
  cert.serialNumber = '01' + randomBytes(15).toString('hex');
  cert.validity.notBefore = new Date(now.getTime() - BACKDATE_MS);
  cert.validity.notAfter = new Date(now.getTime() + lifetimeMs);
  return cert;
}

function toPair(cert: forge.pki.Certificate, keyPem: string): Pair {
  const certPem = forge.pki.certificateToPem(cert);
  return { certPem, keyPem, x509: new X509Certificate(certPem) };
}

function createCa(now: Date): Pair {
  const keys = rsaKeys();
  const cert = newCertificate(keys.publicKey, now, CA_LIFETIME_MS);
  // A random suffix tells apart the CAs of different installs in a trust store.
  const subject = [
    { name: 'commonName', value: `Voicegate development CA ${randomBytes(4).toString('hex')}` },
    { name: 'organizationName', value: ORGANIZATION },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(keys.privateKey), forge.md.sha256.create());
  return toPair(cert, keys.privateKey);
}

function createServerCert(ca: Pair, names: string[], now: Date): Pair {
  const keys = rsaKeys();
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const cert = newCertificate(keys.publicKey, now, SERVER_LIFETIME_MS);
  cert.setSubject([
    { name: 'commonName', value: 'Voicegate development server' },
    { name: 'organizationName', value: ORGANIZATION },
  ]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    // Clients match names against these only; the common name is for people.
    { name: 'subjectAltName', altNames: names.map((name) => (isIP(name) ? { type: 7, ip: name } : { type: 2, value: name })) },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(ca.keyPem), forge.md.sha256.create());
  return toPair(cert, keys.privateKey);
}
