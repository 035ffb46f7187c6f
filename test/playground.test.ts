/**
 * @module test/playground
 * The browser playground in real headless Chromium (the build the npm
 * package `@sparticuz/chromium` carries, so `npm install` is all it needs;
 * driven by playwright-core): a pasted key is exchanged for an access
 * token, Speak streams over the WebSocket into Web Audio (scheduled and not
 * silent, also at the analyser), highlighted words progress with the
 * timestamps, cost and balance are shown, the WAV download decodes, and an
 * unknown voice shows its error on the page. Saves a screenshot.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import packagedChromium from '@sparticuz/chromium';
import { chromium, type Browser, type Page } from 'playwright-core';
import { decodeToFloat, rms } from '../src/audio/decode.js';
import { balanceOf, newOrg, type TestOrg } from './helpers/accounts.js';
import { startServer, tempDataDir, type TestServer } from './helpers/server.js';

/** Functions passed to page.evaluate run in the page; this project compiles without the DOM types. */
declare const window: any;
declare const document: any;

let server: TestServer;
let org: TestOrg;
let browser: Browser;
let page: Page;

before(async () => {
  server = await startServer({ config: { accounts: { enabled: true } } });
  org = await newOrg(server, { credits: 1_000_000 });
  browser = await chromium.launch({ executablePath: await packagedChromium.executablePath(), args: [...packagedChromium.args, '--autoplay-policy=no-user-gesture-required'] });
  page = await browser.newPage();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const status = () => page.evaluate(() => window.voicegate.status as string);

test('the page is served without a build step and holds no key', { timeout: 10_000 }, async () => {
  const response = await fetch(`${server.url}/playground`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
  const html = await response.text();
  assert.match(html, /<title>Voicegate playground<\/title>/);
  assert.doesNotMatch(html, /sk_[0-9a-f]{16}_/);
});

test('speak: token, streamed audio that is not silent, word highlighting, cost, balance, WAV download; then an unknown voice', { timeout: 60_000 }, async () => {
  await page.goto(`${server.url}/playground`);
  await page.fill('#key', org.key);
  await page.click('#connect');
  await page.waitForFunction(() => window.voicegate.status === 'connected', undefined, { timeout: 10_000 });
  assert.equal(await page.textContent('#auth-status'), 'connected (access token)');

  const before = await balanceOf(server, org.orgId);
  const text = 'The quick brown fox jumps over the lazy dog, and then it runs far away into the green forest.';
  await page.fill('#text', text);
  await page.click('#speak');
  // While it plays: the analyser hears sound, and the highlighted words move forward.
  const heard: number[] = [];
  const spoken: number[] = [];
  /** Highlighted words seen after every word (and all audio) had arrived: playback, not arrival, moves them. */
  const spokenAfterDone: number[] = [];
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const sample = await page.evaluate(() => {
      const vg = window.voicegate;
      let level = 0;
      if (vg.analyser) {
        const data = new Float32Array(vg.analyser.fftSize);
        vg.analyser.getFloatTimeDomainData(data);
        for (const v of data) level = Math.max(level, Math.abs(v));
      }
      return { level, spoken: document.querySelectorAll('#words span.spoken').length, total: document.querySelectorAll('#words span').length, status: vg.status };
    });
    heard.push(sample.level);
    spoken.push(sample.spoken);
    if (sample.status === 'done') spokenAfterDone.push(sample.spoken);
    if (sample.status === 'done' && sample.total > 0 && sample.spoken === sample.total) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(await status(), 'done', await page.textContent('#error') ?? '');
  const vg = await page.evaluate(() => {
    const { scheduledSamples, peak, chunks } = window.voicegate;
    return { scheduledSamples, peak, chunks };
  });
  const rate = 24000;
  assert.ok(vg.scheduledSamples / rate > 3, `${vg.scheduledSamples} samples scheduled in ${vg.chunks} chunks`);
  assert.ok(vg.peak > 0.1, `decoded peak ${vg.peak}`);
  assert.ok(Math.max(...heard) > 0.01, `the analyser heard ${Math.max(...heard)}`);
  const total = await page.locator('#words span').count();
  assert.ok(total >= 15, `${total} words`);
  const partial = new Set(spokenAfterDone.filter((n) => n > 0 && n < total));
  assert.ok(partial.size >= 3, `highlighting followed playback: ${spokenAfterDone.join(',')}`);
  assert.deepEqual(spoken, [...spoken].sort((a, b) => a - b), 'highlighting only moves forward');
  assert.equal(spoken.at(-1), total);

  assert.match((await page.textContent('#ttfa')) ?? '', /^\d+ ms$/);
  const afterwards = await balanceOf(server, org.orgId);
  const cost = before.balance - afterwards.balance;
  assert.equal(cost, [...text].length);
  assert.equal(await page.textContent('#cost'), `${cost} credits ($${Number(((cost * 30) / 1e6).toFixed(8))})`);
  assert.match((await page.textContent('#balance')) ?? '', new RegExp(`^${afterwards.balance.toLocaleString('en-US')} credits`));

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  const file = join(tempDataDir(), 'clip.wav');
  await download.saveAs(file);
  const decoded = await decodeToFloat(await import('node:fs').then((fs) => fs.readFileSync(file)), { container: 'wav', encoding: 'pcm_s16le', sampleRate: rate });
  assert.equal(decoded.samples.length, vg.scheduledSamples);
  assert.ok(rms(decoded.samples) > 0.02);

  const screenshot = join(tempDataDir(), 'playground.png');
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`playground screenshot: ${screenshot}`);

  await page.fill('#voice', 'no-such-voice');
  await page.click('#speak');
  await page.waitForFunction(() => window.voicegate.status === 'error', undefined, { timeout: 10_000 });
  assert.match((await page.textContent('#error')) ?? '', /voice_not_found/);

  // The language picked is sent with the request: one that is no language tag is refused.
  await page.fill('#voice', 'sarah');
  await page.fill('#language', 'not a language!');
  await page.click('#speak');
  await page.waitForFunction(() => /language must be a language code/.test(document.querySelector('#error')?.textContent ?? ''), undefined, { timeout: 10_000 });
});
