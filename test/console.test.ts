/**
 * @module test/console
 * The operator console (`GET /console`) in real headless Chromium (the
 * `@sparticuz/chromium` build the playground test uses, driven by
 * playwright-core) against a real server with accounts and an admin token:
 * sign in with the admin token; create an organisation and issue a key,
 * seen once and copied to the clipboard; speak with it through the API and find its characters in the
 * usage chart and table, and in the CSV download; add credits; see the
 * Overview's notice while `/readyz` reports the store degraded or
 * unavailable; revoke the key (then a request with it is 401); see the engines and an upstream
 * pool's healthy and unhealthy members; purge the cache; then, signed in with
 * an organisation's key, clone a voice from a clip and play it, edit a
 * dictionary and speak with it, follow a job to its end and download it,
 * cancel another, and find another organisation's data 404 in the API and
 * in the page; with the admin token again, list that organisation's voices,
 * dictionaries and jobs, cancel its job and delete its voice; a tampered or expired token returns to
 * sign-in; a failed sign-in shows the sign-in card alone with the error of the token given; with the
 * admin token, every built-in voice is listed and previewed, charged to no organisation. Every asset carries the CSP and a cache header; the browser
 * console has no errors beyond the refusals the steps ask for; screenshots
 * at 375 and 1,440 px are saved under the OS temp folder (their paths are
 * printed). The tests share one browser page and run in order: each starts
 * where the one before it left the console.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import packagedChromium from '@sparticuz/chromium';
import { chromium, type Browser, type Page } from 'playwright-core';
import { newOrg, type TestOrg } from './helpers/accounts.js';
import { startFakeUpstream, type FakeUpstream } from './helpers/fake-upstream.js';
import { closedPort, deleteKeys, TEST_REDIS_URL, testPrefix } from './helpers/redis.js';
import { startServer, tempDataDir, ttsBody, type TestServer } from './helpers/server.js';
import { standInOnnx, standInPiperJson } from './helpers/sherpa-model.js';

/** Functions passed to page.evaluate run in the page; this project compiles without the DOM types. */
declare const window: any;
declare const document: any;
declare const sessionStorage: any;

const ADMIN = 'console-admin-token-0123456789';
const T = { timeout: 60_000 };
const WAIT = { timeout: 15_000 };

let server: TestServer;
let upstream: FakeUpstream;
let deadUpstream = '';
let browser: Browser;
let page: Page;
const artefacts = tempDataDir();
const pageErrors: string[] = [];
const consoleErrors: string[] = [];
const admin = { authorization: `Bearer ${ADMIN}` };

before(async () => {
  // An upstream pool of two inference servers: one answers, the other's port is closed (its member shows unhealthy).
  upstream = await startFakeUpstream();
  deadUpstream = `http://127.0.0.1:${await closedPort()}`;
  const gpu = { type: 'openai-upstream', upstreams: [{ url: upstream.url }, { url: deadUpstream }], model: 'k2-fsa/OmniVoice', sampleRate: 24000, voices: { sarah: 'sarah_ref' }, probeIntervalMs: 500 };
  server = await startServer({
    config: {
      accounts: { enabled: true, adminToken: ADMIN },
      engines: { espeak: { type: 'espeak', workers: 1 }, tone: { type: 'tone' }, gpu } as never,
      // A model on an engine that takes any voice, so a cloned voice can be heard (eSpeak cannot clone).
      models: { 'tone-clone': { extends: 'gepard-1.0', engine: 'tone' }, omnivoice: { engine: 'gpu' } } as never,
      jobs: { pollMs: 50, segmentCharacters: 100 },
    },
  });
  browser = await chromium.launch({ executablePath: await packagedChromium.executablePath(), args: [...packagedChromium.args, '--autoplay-policy=no-user-gesture-required'] });
  // The clipboard is granted so that "Copy key" can be read back.
  page = await browser.newPage({ viewport: { width: 1440, height: 900 }, acceptDownloads: true, permissions: ['clipboard-read', 'clipboard-write'] });
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
}, T);
after(async () => {
  await browser?.close();
  await server?.close();
  await upstream?.close();
});

/** The page for the address now in the bar has been drawn (not the one before a link was followed). */
async function loaded(): Promise<void> {
  try {
    await page.waitForFunction(() => window.voicegate?.loaded === true && window.voicegate.hash === window.location.hash, undefined, WAIT);
  } catch (err) {
    const seen = await page.evaluate(() => ({ vg: { page: window.voicegate?.page, loaded: window.voicegate?.loaded, hash: window.voicegate?.hash }, at: window.location.hash, main: document.querySelector('main')?.textContent?.slice(0, 300) }));
    throw new Error(`the page did not finish loading: ${JSON.stringify(seen)}`, { cause: err });
  }
}
async function go(link: string): Promise<void> {
  await page.getByRole('navigation').getByRole('link', { name: link, exact: true }).click();
  await loaded();
}
async function signIn(token: string): Promise<void> {
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor(WAIT);
  await loaded();
}
async function signOut(): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('Token').waitFor(WAIT);
}
async function screenshot(name: string): Promise<void> {
  for (const width of [375, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    const path = join(artefacts, `console-${name}-${width}.png`);
    await page.screenshot({ path, fullPage: true });
    console.log(`console screenshot: ${path}`);
  }
  await page.setViewportSize({ width: 1440, height: 900 });
}

test('the page and its assets: a strict CSP, a cache header and an ETag on each, no inline script', T, async () => {
  const page = await fetch(`${server.url}/console`);
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  assert.doesNotMatch(html, /\son[a-z]+=/i, 'no inline handlers');
  assert.doesNotMatch(html, /\sstyle=/i, 'no inline style');
  const assets = ['/console', ...[...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1])];
  assert.deepEqual(assets.slice(1).sort(), ['/console/assets/console.css', '/console/assets/console.js']);
  for (const path of assets) {
    const response = await fetch(server.url + path);
    assert.equal(response.status, 200, path);
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'/, path);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, path);
    assert.match(csp, /default-src 'none'/, path);
    assert.match(response.headers.get('cache-control') ?? '', path === '/console' ? /^no-cache$/ : /max-age=\d+/, path);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    const etag = response.headers.get('etag');
    assert.ok(etag, path);
    await response.arrayBuffer();
    const again = await fetch(server.url + path, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304, path);
  }
  assert.match((await fetch(`${server.url}/console/assets/console.js`)).headers.get('content-type') ?? '', /^text\/javascript/);
  assert.equal((await fetch(`${server.url}/console/assets/nothing.js`)).status, 404);
  assert.equal((await fetch(`${server.url}/console/assets/console.html`)).status, 404);
});

let orgId = '';
let issuedKey = '';
const SPOKEN = 'The console counts these characters.';

test('admin: sign in, create an organisation, issue a key seen once', T, async () => {
  await page.goto(`${server.url}/console`);
  await page.getByLabel('Token').waitFor(WAIT);
  // By keyboard: the token field has focus, Enter signs in, Enter on a focused link of the navigation opens its page.
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'token');
  await page.keyboard.press('Shift+Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
  await page.keyboard.press('Tab');
  await page.keyboard.type(ADMIN);
  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'Sign out' }).waitFor(WAIT);
  await loaded();
  assert.match((await page.locator('#who').textContent()) ?? '', /Admin/);
  for (const name of ['Overview', 'Organisations', 'Keys', 'Usage', 'Voices', 'Dictionaries', 'Jobs', 'Engines', 'Cache']) {
    assert.equal(await page.getByRole('navigation').getByRole('link', { name, exact: true }).count(), 1, name);
  }
  assert.equal(await page.getByRole('link', { name: 'Playground' }).getAttribute('href'), '/playground');

  await page.getByRole('navigation').getByRole('link', { name: 'Organisations', exact: true }).focus();
  await page.keyboard.press('Enter');
  await loaded();
  assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Organisations');
  await go('Organisations');
  // The organisation the server made at its first start is listed.
  await page.getByRole('cell', { name: /^org_/ }).first().waitFor(WAIT);
  await page.getByLabel('Name').fill('Acme Radio');
  await page.getByLabel('Credits').fill('5000');
  await page.getByRole('button', { name: 'Create organisation' }).click();
  await page.getByRole('heading', { name: 'Acme Radio' }).waitFor(WAIT);
  orgId = decodeURIComponent(new URL(page.url()).hash.replace('#/orgs/', ''));
  assert.match(orgId, /^org_/);
  assert.equal(await page.locator('#org-balance').textContent(), '5,000 credits');

  await page.getByRole('link', { name: 'Keys of this organisation' }).click();
  await loaded();
  await page.getByText('No keys yet').waitFor(WAIT);
  await page.getByLabel('Name').fill('radio');
  await page.getByRole('button', { name: 'Issue key' }).click();
  await page.locator('#issued-key-value').waitFor(WAIT);
  issuedKey = (await page.locator('#issued-key-value').textContent()) ?? '';
  assert.match(issuedKey, /^sk_/);
  await page.getByRole('button', { name: 'Copy key' }).click();
  assert.equal(await page.evaluate(() => window.navigator.clipboard.readText()), issuedKey);
  await page.getByRole('cell', { name: /^radio key_/ }).waitFor(WAIT);
  // Shown once: the list and the page after a reload never show it again.
  await page.reload();
  await loaded();
  await page.getByRole('cell', { name: /^radio key_/ }).waitFor(WAIT);
  assert.doesNotMatch(await page.content(), new RegExp(issuedKey));
});

test('admin: a request with the key shows in the usage chart, table and CSV', T, async () => {
  const response = await server.post('/tts/bytes', ttsBody({ transcript: SPOKEN }), { authorization: `Bearer ${issuedKey}` });
  assert.equal(response.status, 200);
  await response.arrayBuffer();
  const characters = [...SPOKEN].length;

  await go('Usage');
  const chart = page.getByRole('img', { name: /^Usage/ });
  await chart.waitFor(WAIT);
  assert.match((await chart.getAttribute('aria-label')) ?? '', new RegExp(`^Usage by day, characters, split by model: ${characters} characters in all`));
  const table = page.locator('#usage-table');
  await table.getByRole('cell', { name: 'gepard-1.0', exact: true }).waitFor(WAIT);
  assert.equal(await table.locator('tbody tr td:nth-child(5)').first().textContent(), String(characters));

  await page.getByLabel('Split by', { exact: true }).selectOption('endpoint');
  await page.getByRole('img', { name: /^Usage by day, characters, split by endpoint/ }).waitFor(WAIT);
  await page.getByLabel('Organisation', { exact: true }).selectOption(orgId);
  await page.getByRole('img', { name: /^Usage by day, characters, split by endpoint: \d+ characters in all/ }).waitFor(WAIT);
  await page.getByLabel('Split by', { exact: true }).selectOption('key_id');
  const byKey = page.getByRole('img', { name: /^Usage by day, characters, split by key/ });
  await byKey.waitFor(WAIT);
  const issuedKeyId = ((await (await fetch(`${server.url}/admin/orgs/${orgId}/keys`, { headers: admin })).json()) as { data: { id: string }[] }).data[0].id;
  assert.match((await byKey.getAttribute('aria-label')) ?? '', new RegExp(`${issuedKeyId} ${characters}`));

  const [download] = await Promise.all([page.waitForEvent('download', WAIT), page.getByRole('button', { name: 'Download CSV' }).click()]);
  const file = join(artefacts, 'usage.csv');
  await download.saveAs(file);
  const csv = readFileSync(file, 'utf8');
  assert.match(csv.split('\r\n')[0], /characters/);
  assert.ok(csv.split('\r\n').some((line) => line.includes(orgId) && line.includes('gepard-1.0') && line.includes(`,${characters},`)), csv);
  await screenshot('usage');
});

test('admin: add credits and see the balance change, set limits; the overview draws its charts', T, async () => {
  await go('Organisations');
  await page.getByRole('link', { name: 'Acme Radio' }).click();
  await loaded();
  const before = Number(((await page.locator('#org-balance').textContent()) ?? '').replace(/\D/g, ''));
  assert.equal(before, 5000 - [...SPOKEN].length);
  await page.getByLabel('Amount').fill('1234');
  await page.getByLabel('Reason').fill('monthly top-up');
  await page.getByRole('button', { name: 'Add credits' }).click();
  await page.getByText('Added 1,234 credits.').waitFor(WAIT);
  assert.equal(await page.locator('#org-balance').textContent(), `${(before + 1234).toLocaleString('en-US')} credits`);
  await page.getByLabel('Requests at once (empty: no limit)').fill('3');
  await page.getByLabel('Rate: requests (empty: no limit)').fill('100');
  await page.getByLabel('per seconds').fill('60');
  await page.getByRole('button', { name: 'Save limits' }).click();
  await page.getByText('Limits saved.').waitFor(WAIT);
  assert.equal(await page.locator('#org-limits').textContent(), '3 at once; 100 per 60 s');
  const patched = (await (await fetch(`${server.url}/admin/orgs/${orgId}`, { headers: admin })).json()) as { limits: unknown };
  assert.deepEqual(patched.limits, { max_concurrent: 3, rate_limit: { requests: 100, per_seconds: 60 } });
  // Live: credits added elsewhere (the API) show up without a reload, at the next refresh (10 s).
  const added = await fetch(`${server.url}/admin/orgs/${orgId}/credits`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ amount: 1, reason: 'elsewhere' }) });
  assert.equal(added.status, 201);
  await page.waitForFunction((text) => document.querySelector('#org-balance')?.textContent === text, `${(before + 1235).toLocaleString('en-US')} credits`, { timeout: 20_000 });

  await go('Overview');
  for (const name of ['Requests', 'Characters', 'Credits', 'Errors']) {
    await page.getByRole('img', { name: new RegExp(`^${name}, last 7 d`) }).waitFor(WAIT);
  }
  assert.match((await page.getByRole('img', { name: /^Requests/ }).getAttribute('aria-label')) ?? '', /: 1 requests in all/);
  await page.getByRole('button', { name: '24 h' }).click();
  await page.getByRole('img', { name: /^Requests, last 24 h/ }).waitFor(WAIT);
  // Every organisation's balance: the one the server made at its first start (1,000,000 credits) and Acme Radio's.
  assert.equal(await page.locator('#stat-balance').textContent(), `${(1_000_000 + before + 1235).toLocaleString('en-US')} credits`);
  await screenshot('overview');
});

test('admin: the overview says when the database does not answer, as /readyz reports it', T, async () => {
  const real = (await (await fetch(`${server.url}/readyz`)).json()) as { store?: string };
  assert.equal(real.store, 'available');
  const notice = page.locator('#store-notice');
  await go('Usage');
  await go('Overview');
  assert.equal(await notice.textContent(), '', 'no notice while the store answers');
  // The page reads the store's state from /readyz; the answer a gateway gives during an outage is served in its place.
  for (const store of ['degraded', 'unavailable'] as const) {
    await page.route('**/readyz', (route) => route.fulfill({ json: { ...real, store } }));
    try {
      await go('Usage');
      await go('Overview');
      await notice.getByRole('alert').waitFor(WAIT);
      const text = (await notice.textContent()) ?? '';
      assert.match(text, store === 'degraded' ? /serving on held credit/ : /requests refused/);
      assert.match(text, /503 store_unavailable/);
      if (store === 'degraded') {
        assert.match(text, /admin changes, voice clones and job submissions are refused/);
        await screenshot('overview-store-degraded');
      }
    } finally {
      await page.unroute('**/readyz');
    }
  }
  await go('Usage');
  await go('Overview');
  assert.equal(await notice.textContent(), '', 'the notice goes once the store answers again');
});

test('admin: revoke the key, then a request with it is 401; engines; purge the cache', T, async () => {
  await go('Keys');
  await page.getByLabel('Organisation', { exact: true }).selectOption(orgId);
  await loaded();
  await page.getByRole('button', { name: /^Revoke radio/ }).click();
  await page.getByText('Revoked radio.').waitFor(WAIT);
  await page.getByRole('cell', { name: 'revoked' }).waitFor(WAIT);
  const refused = await server.post('/tts/bytes', ttsBody({ transcript: 'no' }), { authorization: `Bearer ${issuedKey}` });
  assert.equal(refused.status, 401);

  await go('Engines');
  const espeak = page.locator('#engines-table tbody tr').filter({ has: page.getByRole('cell', { name: 'espeak', exact: true }) });
  await espeak.waitFor(WAIT);
  // Ready, no worker busy, its one worker idle, nothing queued.
  assert.deepEqual(await espeak.locator('td').allTextContents(), ['espeak', 'espeak', 'yes', '0', '1', '0', '']);
  await page.getByText('Only this gateway').waitFor(WAIT);
  const engines = (await (await fetch(`${server.url}/admin/engines`, { headers: admin })).json()) as { gateways: unknown; instance: string; engines: { id: string }[] };
  assert.equal(engines.gateways, null);
  assert.equal(engines.instance, server.app.services.instanceId);
  assert.deepEqual(engines.engines.map((e) => e.id).sort(), ['espeak', 'gpu', 'tone']);
  // The upstream pool's members, each with its health.
  const member = (url: string) => page.getByRole('listitem').filter({ hasText: `gpu: ${new URL(url).host}` });
  await member(upstream.url).getByText('healthy', { exact: true }).waitFor(WAIT);
  await member(deadUpstream).getByText('unhealthy', { exact: true }).waitFor(WAIT);
  assert.equal((await fetch(`${server.url}/admin/engines`, { headers: { authorization: `Bearer ${issuedKey}` } })).status, 401);

  // Import a Piper voice (its .onnx and .onnx.json) through the form, speak with it, delete it.
  const voiceDir = join(artefacts, 'piper-voice');
  mkdirSync(voiceDir, { recursive: true });
  writeFileSync(join(voiceDir, 'en_US-console-medium.onnx'), standInOnnx({ withoutMetadata: true }));
  writeFileSync(join(voiceDir, 'en_US-console-medium.onnx.json'), standInPiperJson());
  const importForm = page.getByRole('form', { name: 'Import model' });
  await importForm.getByLabel(/^Files/).setInputFiles([join(voiceDir, 'en_US-console-medium.onnx'), join(voiceDir, 'en_US-console-medium.onnx.json')]);
  await importForm.getByRole('button', { name: 'Import model' }).click();
  await page.getByText(/^Imported en_US-console-medium: 22,050 Hz, voices en_US-console-medium\./).waitFor({ timeout: 45_000 });
  await page.getByRole('cell', { name: 'en_US-console-medium', exact: true }).waitFor(WAIT);
  const imported = await fetch(`${server.url}/admin/voices/en_US-console-medium/preview`, { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ model_id: 'en_US-console-medium' }) });
  assert.equal(imported.status, 200, await imported.clone().text());
  await page.getByRole('button', { name: 'Delete model en_US-console-medium' }).click();
  await page.getByRole('cell', { name: 'en_US-console-medium', exact: true }).waitFor({ state: 'detached', ...WAIT });
  assert.ok(!server.app.services.models.get('en_US-console-medium'));

  await go('Cache');
  await page.getByRole('button', { name: 'Purge' }).click();
  await page.getByText(/^Purged \d+ entr/).waitFor(WAIT);
  await screenshot('cache');
  await signOut();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('voicegate.console.token')), null);
});

let orgA: TestOrg;
let orgB: TestOrg;
let jobId = '';
let voiceId = '';

test("an organisation's key: clone a voice from a clip and play it", T, async () => {
  orgA = await newOrg(server, { credits: 1_000_000 });
  orgB = await newOrg(server, { credits: 1_000 });
  const clipResponse = await server.post('/tts/bytes', ttsBody({ transcript: 'This is my voice, recorded for the console to clone.' }), orgA.auth);
  assert.equal(clipResponse.status, 200);
  const clip = join(artefacts, 'clip.wav');
  writeFileSync(clip, Buffer.from(await clipResponse.arrayBuffer()));

  await signIn(orgA.key);
  assert.match((await page.locator('#who').textContent()) ?? '', new RegExp(orgA.orgId));
  await go('Voices');
  await page.getByLabel('Clip (WAV or MP3, 1–120 s)').setInputFiles(clip);
  await page.getByLabel('Name', { exact: true }).fill('Console clone');
  await page.getByLabel('Transcript (what the clip says)').fill('This is my voice, recorded for the console to clone.');
  await page.getByRole('button', { name: 'Clone voice' }).click();
  await page.getByText(/^Cloned Console clone \(/).waitFor(WAIT);
  voiceId = (/\((.+)\)/.exec((await page.getByText(/^Cloned Console clone/).textContent()) ?? '') ?? [])[1];
  assert.ok(voiceId);
  await page.getByLabel('Model').selectOption('tone-clone');
  await page.getByRole('button', { name: 'Play Console clone' }).click();
  await page.getByText(/^Playing \d+ KiB/).waitFor(WAIT);
  await page.waitForFunction(() => {
    const audio = document.querySelector('#voice-player');
    return audio && audio.duration > 0.5 && audio.currentTime > 0;
  }, undefined, WAIT);
  await screenshot('voices');
});

test("an organisation's key: edit a dictionary's entries and speak with it", T, async () => {
  await go('Dictionaries');
  await page.getByText('No dictionaries yet.').waitFor(WAIT);
  await page.getByLabel('Name').fill('Brands');
  await page.getByRole('button', { name: 'Create dictionary' }).click();
  await page.getByRole('heading', { name: 'Brands' }).waitFor(WAIT);
  await page.getByRole('button', { name: 'Add entry' }).click();
  await page.getByLabel('Text', { exact: true }).fill('Voicegate');
  await page.getByLabel('Spoken as').fill('voice gate');
  await page.getByRole('button', { name: 'Save entries' }).click();
  await page.getByText('Saved 1 entry.').waitFor(WAIT);
  const dictId = decodeURIComponent(new URL(page.url()).hash.replace('#/dictionaries/', ''));
  const stored = await fetch(`${server.url}/pronunciation-dicts/${dictId}`, { headers: orgA.auth });
  assert.deepEqual(((await stored.json()) as { items: unknown[] }).items, [{ text: 'Voicegate', alias: 'voice gate', case_sensitive: false }]);
  await page.getByLabel('Sentence').fill('Voicegate speaks 21 words.');
  await page.getByLabel('Language').fill('de');
  await page.getByRole('button', { name: 'Speak' }).click();
  await page.getByText(/^Playing \d+ KiB/).waitFor(WAIT);
  // What the sentence was read as: the dictionary, then the normaliser in the language picked.
  await page.getByText('Read as (de): voice gate speaks einundzwanzig words.').waitFor(WAIT);
});

test("an organisation's key: follow a job's progress to its end and download it; cancel another", T, async () => {
  const transcript = Array.from({ length: 12 }, (_, i) => `Sentence number ${i + 1} of the long-form job is spoken here.`).join(' ');
  const submit = await server.post('/tts/jobs', { ...ttsBody({ transcript }), output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 16000 } }, orgA.auth);
  assert.equal(submit.status, 202, await submit.clone().text());
  jobId = ((await submit.json()) as { id: string }).id;
  await page.goto(`${server.url}/console#/jobs/${jobId}`);
  await loaded();
  const row = page.locator(`tr[data-job="${jobId}"]`);
  await page.waitForFunction((id) => document.querySelector(`tr[data-job="${id}"]`)?.dataset.status === 'succeeded', jobId, { timeout: 45_000 });
  const seen = await page.evaluate((id) => window.voicegate.jobs[id], jobId);
  console.log(`job statuses the page saw: ${seen.join(' → ')}`);
  assert.equal(seen.at(-1), 'succeeded');
  assert.equal(await row.locator('progress').evaluate((p: any) => p.value), 1);
  const [download] = await Promise.all([page.waitForEvent('download', WAIT), row.getByRole('button', { name: /^Download/ }).click()]);
  const file = join(artefacts, 'job.wav');
  await download.saveAs(file);
  const audio = await fetch(`${server.url}/tts/jobs/${jobId}/audio`, { headers: orgA.auth });
  assert.deepEqual(readFileSync(file), Buffer.from(await audio.arrayBuffer()));
  // Its captions, shown under the row and offered in both formats.
  await row.getByRole('button', { name: /^Captions/ }).click();
  const shown = page.getByLabel(`Captions of ${jobId}`);
  await shown.waitFor(WAIT);
  const vtt = await (await fetch(`${server.url}/tts/jobs/${jobId}/captions`, { headers: orgA.auth })).text();
  // (The job's engine, an upstream OpenAI-dialect server, reports no word timings: its captions have no cues.)
  assert.match(vtt, /^WEBVTT\n/);
  assert.equal(await shown.textContent(), vtt);
  const [srtDownload] = await Promise.all([page.waitForEvent('download', WAIT), page.getByRole('button', { name: 'Download SRT' }).click()]);
  assert.equal(srtDownload.suggestedFilename(), `${jobId}.srt`);
  const srtFile = join(artefacts, 'job.srt');
  await srtDownload.saveAs(srtFile);
  assert.equal(readFileSync(srtFile, 'utf8'), await (await fetch(`${server.url}/tts/jobs/${jobId}/captions?format=srt`, { headers: orgA.auth })).text());
  await screenshot('jobs');

  // A job submitted while the list is open appears in it without a reload (the list is read again every 10 s).
  await page.getByRole('link', { name: 'All jobs' }).click();
  await loaded();
  await row.waitFor(WAIT);
  const another = await server.post('/tts/jobs', { ...ttsBody({ transcript: 'A short job.' }), output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 16000 } }, orgA.auth);
  assert.equal(another.status, 202);
  const anotherId = ((await another.json()) as { id: string }).id;
  await page.locator(`tr[data-job="${anotherId}"]`).waitFor({ timeout: 20_000 });

  // Cancel: a long job, cancelled from its page while it runs.
  const long = Array.from({ length: 150 }, (_, i) => `Paragraph ${i + 1} is long enough to keep the engine busy for a while.`).join(' ');
  const started = await server.post('/tts/jobs', { ...ttsBody({ transcript: long }), output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 16000 } }, orgA.auth);
  assert.equal(started.status, 202);
  const longId = ((await started.json()) as { id: string }).id;
  await page.goto(`${server.url}/console#/jobs/${longId}`);
  await loaded();
  await page.getByRole('button', { name: `Cancel ${longId}` }).click();
  await page.waitForFunction((id) => document.querySelector(`tr[data-job="${id}"]`)?.dataset.status === 'cancelled', longId, WAIT);
  const job = (await (await fetch(`${server.url}/tts/jobs/${longId}`, { headers: orgA.auth })).json()) as { status: string };
  assert.equal(job.status, 'cancelled');
});

test("another organisation's data is 404 in the API and in the page", T, async () => {
  assert.equal((await fetch(`${server.url}/tts/jobs/${jobId}`, { headers: orgB.auth })).status, 404);
  assert.equal((await fetch(`${server.url}/voices/${voiceId}`, { headers: orgB.auth })).status, 404);
  assert.equal((await fetch(`${server.url}/admin/orgs/${orgA.orgId}`, { headers: orgB.auth })).status, 401);
  await signOut();
  await signIn(orgB.key);
  await page.goto(`${server.url}/console#/jobs/${jobId}`);
  await loaded();
  await page.getByText(/^404 job_not_found/).waitFor(WAIT);
  await page.goto(`${server.url}/console#/orgs/${orgA.orgId}`);
  await loaded();
  await page.getByText(/^404 org_not_found/).waitFor(WAIT);
  await go('Voices');
  assert.equal(await page.getByText('Console clone').count(), 0);
  await go('Organisations');
  await page.getByRole('heading', { name: 'test org' }).waitFor(WAIT);
  assert.match((await page.locator('main').textContent()) ?? '', new RegExp(orgB.orgId));
});

test("admin: an organisation's voices, dictionaries and jobs; cancel its job and delete its voice", T, async () => {
  // The API first: the admin routes answer what the organisation's own key lists, and nothing for a key.
  const own = (await (await fetch(`${server.url}/admin/orgs/${orgA.orgId}/voices`, { headers: admin })).json()) as { data: { id: string }[] };
  assert.deepEqual(own.data.map((v) => v.id), [voiceId]);
  assert.equal((await fetch(`${server.url}/admin/orgs/${orgB.orgId}/voices`, { headers: admin }).then((r) => r.json()) as { data: unknown[] }).data.length, 0);
  assert.equal((await fetch(`${server.url}/admin/orgs/org_nobody/voices`, { headers: admin })).status, 404);
  assert.equal((await fetch(`${server.url}/admin/orgs/${orgA.orgId}/jobs`, { headers: orgA.auth })).status, 401);
  assert.equal((await fetch(`${server.url}/admin/orgs/${orgB.orgId}/jobs/${jobId}`, { method: 'DELETE', headers: admin })).status, 404);

  await signOut();
  await signIn(ADMIN);
  await page.goto(`${server.url}/console#/voices/${orgA.orgId}`);
  await loaded();
  await page.getByRole('cell', { name: 'Console clone', exact: true }).waitFor(WAIT);
  await page.getByLabel('Organisation', { exact: true }).selectOption(orgB.orgId);
  await loaded();
  await page.getByText(/has cloned no voices/).waitFor(WAIT);

  await page.goto(`${server.url}/console#/dictionaries/${orgA.orgId}`);
  await loaded();
  const dictionary = page.getByRole('region', { name: 'Dictionary Brands' });
  await dictionary.getByRole('cell', { name: 'voice gate', exact: true }).waitFor(WAIT);

  // A long job of organisation A, followed from the admin's list of its jobs and cancelled there.
  const long = Array.from({ length: 150 }, (_, i) => `Paragraph ${i + 1} is long enough to keep the engine busy for a while.`).join(' ');
  const started = await server.post('/tts/jobs', { ...ttsBody({ transcript: long }), output_format: { container: 'wav', encoding: 'pcm_s16le', sample_rate: 16000 } }, orgA.auth);
  assert.equal(started.status, 202);
  const longId = ((await started.json()) as { id: string }).id;
  await page.goto(`${server.url}/console#/jobs/${orgA.orgId}`);
  await loaded();
  await page.getByRole('button', { name: `Cancel ${longId}` }).click();
  await page.waitForFunction((id) => document.querySelector(`tr[data-job="${id}"]`)?.dataset.status === 'cancelled', longId, WAIT);
  assert.equal(((await (await fetch(`${server.url}/tts/jobs/${longId}`, { headers: orgA.auth })).json()) as { status: string }).status, 'cancelled');
  // The admin token downloads nothing and follows no events: the finished job shows no Download button.
  assert.equal(await page.locator(`tr[data-job="${jobId}"]`).getByRole('button', { name: /^Download/ }).count(), 0);

  await page.goto(`${server.url}/console#/voices/${orgA.orgId}`);
  await loaded();
  await page.getByRole('button', { name: 'Delete Console clone' }).click();
  await page.getByText(/has cloned no voices/).waitFor(WAIT);
  assert.equal((await fetch(`${server.url}/voices/${voiceId}`, { headers: orgA.auth })).status, 404);
  await signOut();
  await signIn(orgB.key);
});

test('a tampered or expired token is sent back to sign-in', T, async () => {
  // Tampered: the stored token changed under the page.
  await page.evaluate((key) => sessionStorage.setItem('voicegate.console.token', key.slice(0, -2) + 'xx'), orgB.key);
  await page.reload();
  await page.getByLabel('Token').waitFor(WAIT);
  await page.getByText(/Sign in again/).waitFor(WAIT);

  // Expired: a key that expires a moment after sign-in; the next page it opens is refused.
  const expiresAt = Date.now() + 1500;
  const issued = await fetch(`${server.url}/admin/orgs/${orgB.orgId}/keys`, {
    method: 'POST',
    headers: { ...admin, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'brief', expires_at: new Date(expiresAt).toISOString() }),
  });
  assert.equal(issued.status, 201);
  await signIn(((await issued.json()) as { key: string }).key);
  await page.waitForFunction((at) => Date.now() > at + 100, expiresAt, WAIT);
  await page.getByRole('navigation').getByRole('link', { name: 'Usage', exact: true }).click();
  await page.getByLabel('Token').waitFor(WAIT);
  await page.getByText(/The token was refused \(401\)/).waitFor(WAIT);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('voicegate.console.token')), null);
  await screenshot('sign-in');
});

test('a failed sign-in shows the sign-in card alone, with the error of the token given', T, async () => {
  const attempt = async (token: string, code: string) => {
    await page.getByLabel('Token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#sign-in-error', { hasText: `401 ${code}` }).waitFor(WAIT);
    // Nothing of the signed-in console is drawn: no navigation, no main area, no Sign out.
    assert.equal(await page.getByRole('navigation').isVisible(), false, 'no navigation');
    assert.equal(await page.locator('#app').isVisible(), false, 'no app');
    assert.equal(await page.getByRole('button', { name: 'Sign out' }).isVisible(), false);
    assert.equal(await page.locator('#sign-in').isVisible(), true);
    return (await page.locator('#sign-in-error').textContent()) ?? '';
  };
  // A tampered organisation key: the key's error, not the admin token's.
  const key = await attempt(orgB.key.slice(0, -2) + 'xx', 'invalid_api_key');
  assert.match(key, /^401 invalid_api_key\b/);
  assert.doesNotMatch(key, /admin/);
  await screenshot('sign-in-failed');
  // A wrong admin token: the admin token's error.
  assert.match(await attempt(ADMIN + 'x', 'invalid_admin_token'), /^401 invalid_admin_token\b/);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('voicegate.console.token')), null);
});

test('admin: the built-in voices are listed and previewed, charged to no organisation', T, async () => {
  // The API first: a preview needs the admin token, renders a built-in voice only, and writes no ledger row.
  const sums = async () => Promise.all([orgA, orgB].map((org) => server.app.services.store.ledger.sum(org.orgId)));
  const before = await sums();
  const listed = (await (await fetch(`${server.url}/admin/voices?limit=100`, { headers: admin })).json()) as { data: { id: string; name: string; is_owner: boolean }[] };
  assert.ok(['sarah', 'michael', 'emma', 'oliver'].every((id) => listed.data.some((v) => v.id === id)), JSON.stringify(listed.data.map((v) => v.id)));
  const preview = (headers: Record<string, string>, voice = 'sarah', body: Record<string, unknown> = { model_id: 'gepard-1.0' }) =>
    fetch(`${server.url}/admin/voices/${voice}/preview`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const heard = await preview(admin);
  assert.equal(heard.status, 200, await heard.clone().text());
  assert.equal(heard.headers.get('content-type'), 'audio/wav');
  const wav = Buffer.from(await heard.arrayBuffer());
  assert.equal(wav.subarray(0, 4).toString(), 'RIFF');
  assert.ok(wav.length > 24_000, `a second of audio or so: ${wav.length} bytes`);
  assert.equal(heard.headers.get('x-request-credits'), null, 'no cost headers: nobody is charged');
  assert.equal(((await (await preview(orgA.auth)).json()) as { error_code: string }).error_code, 'invalid_admin_token');
  assert.equal((await preview({})).status, 401);
  const refused = async (response: Response) => [response.status, ((await response.json()) as { error_code: string }).error_code];
  assert.deepEqual(await refused(await preview(admin, 'no-such-voice')), [404, 'voice_not_found']);
  // An organisation's cloned voice is its own, heard with its key: the admin token does not preview it.
  const form = new FormData();
  form.append('clip', new Blob([readFileSync(join(artefacts, 'clip.wav'))], { type: 'audio/wav' }), 'clip.wav');
  form.append('name', 'Kept clone');
  form.append('language', 'en');
  const cloned = await fetch(`${server.url}/voices/clone`, { method: 'POST', headers: orgA.auth, body: form });
  assert.equal(cloned.status, 200, await cloned.clone().text());
  assert.deepEqual(await refused(await preview(admin, ((await cloned.json()) as { id: string }).id)), [404, 'voice_not_found']);
  assert.deepEqual(await refused(await preview(admin, 'sarah', { model_id: 'no-such-model' })), [404, 'model_not_found']);
  assert.deepEqual(await refused(await preview(admin, 'sarah', { model_id: 'gepard-1.0', transcript: 'Anything at all, for free.' })), [400, 'invalid_request']);
  assert.deepEqual(await sums(), before, 'no organisation is charged');

  // The page: the built-in voices beside the chosen organisation's own, each with Play.
  await signIn(ADMIN);
  await go('Voices');
  const builtIn = page.getByRole('region', { name: 'Built-in voices' });
  await builtIn.getByRole('cell', { name: 'sarah', exact: true }).waitFor(WAIT);
  assert.equal(await page.getByText(/Previews and cloning are done with/).count(), 0);
  // Every one, past the first page of the API's list.
  let all = 0;
  for (let after = '', more = true; more; ) {
    const page = (await (await fetch(`${server.url}/admin/voices?limit=100${after && `&starting_after=${after}`}`, { headers: admin })).json()) as { data: { id: string }[]; has_more: boolean };
    all += page.data.length;
    after = page.data.at(-1)?.id ?? '';
    more = page.has_more;
  }
  assert.ok(all > 100, `${all} built-in voices`);
  assert.equal(await builtIn.locator('tbody tr').count(), all);
  await builtIn.getByLabel('Model').selectOption('gepard-1.0');
  await builtIn.getByRole('button', { name: 'Play Sarah' }).click();
  await builtIn.getByText(/^Playing \d+ KiB/).waitFor(WAIT);
  await page.waitForFunction(() => {
    const audio = document.querySelector('#builtin-voice-player');
    return audio && audio.duration > 0.5 && audio.currentTime > 0;
  }, undefined, WAIT);
  await screenshot('admin-voices');
  assert.deepEqual(await sums(), before, 'no organisation is charged');
  await signOut();
});

test('with Redis, the engines page lists every gateway alive, with each one\'s engines; the cache page each one\'s cache', T, async () => {
  const keyPrefix = testPrefix();
  const shared = { accounts: { enabled: true, adminToken: ADMIN }, redis: { url: TEST_REDIS_URL, keyPrefix } };
  const [a, b] = [await startServer({ config: shared }), await startServer({ config: shared })];
  try {
    const heartbeatIds = async (gateway: TestServer) => ((await (await fetch(`${gateway.url}/admin/engines`, { headers: admin })).json()) as { gateway_id: string }).gateway_id;
    const ids = [await heartbeatIds(a), await heartbeatIds(b)].sort();
    assert.notEqual(ids[0], ids[1]);
    await page.goto(`${a.url}/console`);
    await signIn(ADMIN);
    await go('Engines');
    // Each gateway's first heartbeat is written as it starts: the list holds both, at once or at the next refresh.
    await page.waitForFunction((n) => document.querySelectorAll('#gateways li').length === n, 2, { timeout: 20_000 });
    const listed = (await page.locator('#gateways code').allTextContents()).sort();
    assert.deepEqual(listed, ids);
    assert.equal(await page.locator('#gateways li').filter({ hasText: '(this one)' }).locator('code').textContent(), await heartbeatIds(a));
    const answer = (await (await fetch(`${b.url}/admin/engines`, { headers: admin })).json()) as {
      gateways: string[];
      limits: { state: string };
      peers: { gateway_id: string; instance?: string; engines?: { id: string }[] }[];
    };
    assert.deepEqual([...answer.gateways].sort(), ids);
    assert.equal(answer.limits.state, 'shared');
    // The other gateway's card: its engines as it wrote them in Redis, under the id the heartbeat gives it.
    const idA = await heartbeatIds(a);
    assert.deepEqual(answer.peers.map((p) => p.gateway_id), [idA]);
    const fromA = (await (await fetch(`${a.url}/admin/engines`, { headers: admin })).json()) as { instance: string; engines: { id: string }[] };
    assert.equal(answer.peers[0].instance, fromA.instance);
    assert.deepEqual(answer.peers[0].engines?.map((e) => e.id), fromA.engines.map((e) => e.id));
    // On the page: a section for the other gateway, with its engines' table.
    const idB = await heartbeatIds(b);
    const peer = page.getByRole('region', { name: `Gateway ${idB}` });
    await peer.locator('tbody tr td:first-child', { hasText: fromA.engines[0].id }).first().waitFor({ timeout: 20_000 });
    await screenshot('engines');
    await go('Cache');
    await page.locator(`#peer-caches tr[data-gateway="${idB}"]`).waitFor(WAIT);
    // Leave the page before its servers close, so no refresh is sent to a closed port.
    await page.goto('about:blank');
  } finally {
    await a.close();
    await b.close();
    await deleteKeys(keyPrefix);
  }
});

test('no errors in the browser console beyond the refusals the steps asked for', T, async () => {
  assert.deepEqual(pageErrors, []);
  const unexpected = consoleErrors.filter((text) => !/^Failed to load resource: the server responded with a status of (401|404)/.test(text));
  assert.deepEqual(unexpected, []);
  console.log(`browser console errors (expected refusals): ${consoleErrors.length}`);
});
