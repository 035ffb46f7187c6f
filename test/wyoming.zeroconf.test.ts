/**
 * @module test/wyoming.zeroconf
 * `wyoming.zeroconf: true` advertises the listener over mDNS as Home
 * Assistant browses for it: `<name>._wyoming._tcp.local.` with the port and
 * an A record, and the address found answers `describe` with `info`. The
 * gateway and the browsing client (bonjour-service's own browser, a separate
 * process) run in a network namespace the test makes, with one veth pair on
 * a documentation address (192.0.2.0/24), so no multicast leaves it.
 */
import assert from 'node:assert/strict';
import { execFileSync, execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { startGateway, TONE_MODELS } from './helpers/gateways.js';

const run = promisify(execFile);
const NS = `voicegate-mdns-${process.pid}`;
const ADDRESS = '192.0.2.1';
const dir = mkdtempSync(join(tmpdir(), 'voicegate-mdns-'));

before(() => {
  const ip = (...args: string[]) => execFileSync('ip', ['netns', 'exec', NS, 'ip', ...args]);
  execFileSync('ip', ['netns', 'add', NS]);
  ip('link', 'set', 'lo', 'up');
  ip('link', 'add', 'vg0', 'type', 'veth', 'peer', 'name', 'vg1');
  ip('addr', 'add', `${ADDRESS}/24`, 'dev', 'vg0');
  ip('link', 'set', 'vg0', 'up');
  ip('link', 'set', 'vg1', 'up');
  ip('route', 'add', 'default', 'dev', 'vg0');
});
after(() => {
  execFileSync('ip', ['netns', 'del', NS]);
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A client in the namespace: browses `_wyoming._tcp` for `name`, then sends `describe` to the address and port
 * found and reads the answer's header line. Prints what it found as JSON.
 */
function browser(name: string, timeoutMs: number): string {
  const bonjour = createRequire(import.meta.url).resolve('bonjour-service');
  const file = join(dir, 'browse.mjs');
  writeFileSync(
    file,
    `import { Bonjour } from ${JSON.stringify(bonjour)};
import { connect } from 'node:net';
const bonjour = new Bonjour();
const give = (found) => { console.log(JSON.stringify(found)); bonjour.destroy(); process.exit(0); };
setTimeout(() => give({ found: null }), ${timeoutMs});
bonjour.find({ type: 'wyoming', protocol: 'tcp' }, (service) => {
  if (service.name !== ${JSON.stringify(name)}) return;
  const address = service.addresses.find((a) => a.includes('.'));
  const socket = connect(service.port, address, () => socket.write('{"type": "describe"}\\n'));
  let text = '';
  socket.on('data', (chunk) => {
    text += chunk;
    const line = text.split('\\n')[0];
    if (text.includes('\\n')) give({ found: { name: service.name, fqdn: service.fqdn, type: service.type, protocol: service.protocol, port: service.port, addresses: service.addresses, txt: service.txt, answer: JSON.parse(line).type } });
  });
});
`,
  );
  return file;
}

test('zeroconf: Home Assistant\'s browse for _wyoming._tcp.local. finds the listener, and the address found answers describe', { timeout: 60_000 }, async () => {
  const gateway = await startGateway(
    { ...TONE_MODELS, accounts: { enabled: false }, wyoming: { port: 10200, host: '0.0.0.0', zeroconf: true, zeroconfName: 'voicegate-test' } },
    30_000,
    ['ip', 'netns', 'exec', NS],
  );
  try {
    const { stdout } = await run('ip', ['netns', 'exec', NS, process.execPath, browser('voicegate-test', 15_000)], { timeout: 30_000 });
    const { found } = JSON.parse(stdout) as { found: Record<string, unknown> | null };
    assert.ok(found, 'the service was found within 15 s');
    assert.equal(found.fqdn, 'voicegate-test._wyoming._tcp.local');
    assert.equal(found.port, 10200);
    assert.ok((found.addresses as string[]).includes(ADDRESS), `an A record for the host's address: ${JSON.stringify(found.addresses)}`);
    assert.deepEqual(found.txt, {}, 'no TXT properties, as the reference library registers');
    assert.equal(found.answer, 'info');
  } finally {
    await gateway.stop();
  }
});

test('zeroconf off (the default): nothing answers the browse', { timeout: 60_000 }, async () => {
  const gateway = await startGateway({ ...TONE_MODELS, accounts: { enabled: false }, wyoming: { port: 10200, host: '0.0.0.0' } }, 30_000, ['ip', 'netns', 'exec', NS]);
  try {
    const { stdout } = await run('ip', ['netns', 'exec', NS, process.execPath, browser('voicegate-test', 3_000)], { timeout: 30_000 });
    assert.deepEqual(JSON.parse(stdout), { found: null });
  } finally {
    await gateway.stop();
  }
});
