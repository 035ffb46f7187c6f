/**
 * @module store/migration-files
 * A store's schema migrations, one `.sql` file a version in its
 * `migrations/` folder: `NNNN-<what>.sql`, whose first line is `-- <name>`
 * (recorded in `schema_migrations`) and the rest the statements, run in one
 * transaction with its record. Append only: a shipped file is never edited;
 * a change is a new version. The build copies the files beside the compiled
 * code (scripts/build-assets.mjs).
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The migrations in `dir`, in version order; versions run 1, 2, 3… with none missing. */
export function loadMigrations(dir: URL): Migration[] {
  const files = readdirSync(dir)
    .filter((file) => /^\d{4}-[a-z0-9-]+\.sql$/.test(file))
    .sort();
  return files.map((file, index) => {
    const version = Number(file.slice(0, 4));
    if (version !== index + 1) throw new Error(`${new URL(file, dir).pathname}: version ${version} where ${index + 1} was expected`);
    const text = readFileSync(new URL(file, dir), 'utf8');
    const newline = text.indexOf('\n');
    const first = text.slice(0, newline);
    if (!first.startsWith('-- ')) throw new Error(`${file}: the first line must be "-- <name>"`);
    return { version, name: first.slice(3).trim(), sql: text.slice(newline + 1) };
  });
}
