/**
 * @module test/docs-links
 * Every relative link in the README, `docs/` and BENCHMARKS.md names a file
 * that exists and, with a `#fragment`, a heading that file has (GitHub's
 * anchors), so a renamed section or a lost heading cannot leave a link that
 * points nowhere.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const docsDir = join(root, 'docs');
const documents = [
  join(root, 'README.md'),
  join(root, 'BENCHMARKS.md'),
  ...readdirSync(docsDir)
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(docsDir, name)),
];

/** The text outside fenced code blocks, line by line (a `#` there is not a heading, a `[x](y)` not a link). */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** A heading's anchor as GitHub makes it: inline markup dropped, lower case, punctuation gone, each space a hyphen. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorsByFile = new Map<string, Set<string>>();

/** The anchors of a document's headings (read once per file); a repeated heading gets `-1`, `-2`, … as on GitHub. */
function anchors(path: string): Set<string> {
  const known = anchorsByFile.get(path);
  if (known) return known;
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of proseLines(readFileSync(path, 'utf8'))) {
    const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  anchorsByFile.set(path, out);
  return out;
}

/** Relative links of a document, without inline code spans (where `[x](y)` is an example). */
function links(path: string): string[] {
  const out: string[] = [];
  for (const line of proseLines(readFileSync(path, 'utf8'))) {
    for (const m of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
      out.push(target);
    }
  }
  return out;
}

test('slugs follow GitHub: markup, punctuation and case', () => {
  assert.equal(slug('Threads and cores'), 'threads-and-cores');
  assert.equal(slug('`GET /concurrency`'), 'get-concurrency');
  assert.equal(slug('Durable before it is reported'), 'durable-before-it-is-reported');
  assert.equal(slug('Intelligibility, and the default embedded engine'), 'intelligibility-and-the-default-embedded-engine');
  assert.equal(slug('PostgreSQL store (`store.databaseUrl`)'), 'postgresql-store-storedatabaseurl');
  assert.equal(slug('Redis: limits and account changes'), 'redis-limits-and-account-changes');
});

test('every relative link names a file that exists, and a heading it has', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const doc of documents) {
    for (const target of links(doc)) {
      checked++;
      const [pathPart, fragment] = target.split('#', 2) as [string, string | undefined];
      const file = pathPart === '' ? doc : resolve(dirname(doc), decodeURIComponent(pathPart));
      const where = `${relative(root, doc)} → ${target}`;
      if (!existsSync(file)) {
        broken.push(`${where}: no such file`);
        continue;
      }
      if (fragment === undefined || !file.endsWith('.md')) continue;
      if (!anchors(file).has(decodeURIComponent(fragment).toLowerCase())) broken.push(`${where}: no such heading`);
    }
  }
  assert.deepEqual(broken, []);
  // A pattern that stopped matching would pass with nothing checked.
  assert.ok(checked >= 30, `only ${checked} links found`);
});
