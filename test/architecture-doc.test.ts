/**
 * @module test/architecture-doc
 * docs/ARCHITECTURE.md names every source file, so a new module cannot land
 * without a word on where it sits. A file counts as named when the document
 * gives its path (`src/api/jobs.ts`), or when the row of the Folders table
 * for its top folder names it (`jobs.ts`, `openai/parse.ts`) or names a
 * folder below the top one that holds it (`sections/`, `sherpa/`): such a
 * folder is described as one unit, its files by what they do together.
 * Unit tests (`*.test.ts`) and type declarations (`*.d.ts`) are left out.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const src = join(root, 'src');
const doc = readFileSync(join(root, 'docs/ARCHITECTURE.md'), 'utf8');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    const name = entry.name;
    return name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts') ? [relative(src, path).split(sep).join('/')] : [];
  });
}

/** Every `src/…` path the document writes, in backticks or not, without trailing punctuation. */
const docPaths = new Set([...doc.matchAll(/(?:^|[\s`(])(src\/[\w./-]*[\w/])/gm)].map((m) => m[1]!));

/** The backticked names of the Folders table's row for `src/<top>/`, after its first cell. */
function rowNames(top: string): string[] {
  const row = doc.split('\n').find((line) => line.startsWith('|') && line.split('|')[1]!.includes(`\`src/${top}/\``));
  if (row === undefined) return [];
  return [...row.split('|').slice(2).join('|').matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}

function named(file: string): boolean {
  if (docPaths.has(`src/${file}`)) return true;
  const [top, ...rest] = file.split('/');
  if (rest.length === 0) return false;
  // A folder below the top one, named by its path (`src/engines/worker-pool/`).
  if ([...docPaths].some((p) => p.endsWith('/') && p.split('/').length > 3 && `src/${file}`.startsWith(p))) return true;
  const inFolder = rest.join('/');
  return rowNames(top!).some((name) =>
    name.endsWith('/') ? inFolder.startsWith(name) || inFolder.includes(`/${name}`) : name === inFolder || inFolder.endsWith(`/${name}`),
  );
}

test('docs/ARCHITECTURE.md names every source file under src/', () => {
  const files = sources(src);
  assert.ok(files.length > 100, `found only ${files.length} source files under ${src}`);
  const missing = files.filter((file) => !named(file));
  assert.deepEqual(missing, [], `docs/ARCHITECTURE.md does not name these files (give the path, or the name in its folder's row):\n${missing.join('\n')}`);
});
