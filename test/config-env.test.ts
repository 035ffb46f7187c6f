/**
 * @module test/config-env
 * The environment variables the README's configuration table lists are the
 * ones the code reads, both ways: every variable a config section or engine
 * type declares (`ENVIRONMENT`, config/schema.ts) has its row, every row
 * names a declared variable or one the source reads itself (the TLS trio,
 * the config file's path, the models' download address), and each declared
 * variable sets the field it says it sets.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../src/config/load.js';
import { ENVIRONMENT } from '../src/config/schema.js';

const root = new URL('../../', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');

/** The variables named in the first column of the README's configuration table. */
function tableVariables(): Set<string> {
  const section = readme.slice(readme.indexOf('## Configuration'));
  const table = section.slice(section.indexOf('| variable |'), section.indexOf('\n\n', section.indexOf('| variable |')));
  const names = new Set<string>();
  for (const row of table.split('\n').slice(2)) {
    const first = row.split('|')[1] ?? '';
    for (const match of first.matchAll(/`((?:VOICEGATE_[A-Z0-9_]+)|PORT|HOST)(?:=[^`]*)?`/g)) names.add(match[1]);
  }
  return names;
}

/** `VOICEGATE_*` variables the source reads itself (`env.NAME`, `process.env.NAME`), outside the declarations. */
function readDirectly(): Set<string> {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [join(dir, entry.name)] : []));
  const names = new Set<string>();
  for (const file of files(new URL('src', root).pathname)) {
    for (const match of readFileSync(file, 'utf8').matchAll(/\benv\.(VOICEGATE_[A-Z0-9_]+)/g)) names.add(match[1]);
  }
  return names;
}

/** Read by the CLI's client commands (`say`): the caller's key, not the server's configuration. */
const CLIENT_VARIABLES = new Set(['VOICEGATE_API_KEY']);

test('the README lists every variable the configuration reads, and no other', () => {
  const listed = tableVariables();
  const declared = new Set(ENVIRONMENT.map((variable) => variable.name));
  const direct = new Set([...readDirectly()].filter((name) => !CLIENT_VARIABLES.has(name)));
  assert.deepEqual([...declared].filter((name) => !listed.has(name)).sort(), [], 'declared but missing from the README table');
  assert.deepEqual([...direct].filter((name) => !listed.has(name)).sort(), [], 'read by the source but missing from the README table');
  assert.deepEqual([...listed].filter((name) => !declared.has(name) && !direct.has(name)).sort(), [], 'in the README table but read by nothing');
  assert.equal(new Set(ENVIRONMENT.map((v) => v.name)).size, ENVIRONMENT.length, 'no variable declared twice');
});

test('each declared variable sets the field it names', () => {
  const sample = { number: '7', string: 'x', boolean: 'off', list: 'a,b' } as const;
  for (const { name, path, kind } of ENVIRONMENT) {
    // Values a field accepts may be narrower than its kind: only that the variable reaches its field is checked here.
    let config: unknown;
    try {
      config = loadConfig({ env: { [name]: sample[kind] } });
    } catch (err) {
      assert.match(String(err), new RegExp(`invalid configuration at ${path.join('\\.')}`), `${name} → ${path.join('.')}`);
      continue;
    }
    const value = path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], config);
    const expected = kind === 'number' ? 7 : kind === 'boolean' ? false : kind === 'list' ? ['a', 'b'] : 'x';
    assert.deepEqual(value, expected, `${name} → ${path.join('.')}`);
  }
});
