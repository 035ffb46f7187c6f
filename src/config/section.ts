/**
 * @module config/section
 * How a concern's settings plug into the configuration: the key of its
 * section, its zod schema (with its defaults), and the environment variables
 * that set its fields. `config/sections/` holds one file per concern and
 * `schema.ts` lists them, one line each; the config schema and the table of
 * environment variables `load.ts` reads are both built from that list, so a
 * variable cannot be read without being declared, and the README's table is
 * checked against the declarations (test/config-env.test.ts).
 */
import type { z } from 'zod';

/** How a variable's text becomes a value: a number, the text itself, on/off, or a comma-separated list. */
export type EnvKind = 'number' | 'string' | 'boolean' | 'list';

/** One environment variable: its name, the field it sets (a path from the config's root), and its kind. */
export interface EnvVariable {
  name: string;
  path: readonly string[];
  kind: EnvKind;
}

export interface ConfigSection<K extends string = string, S extends z.ZodType = z.ZodType> {
  key: K;
  schema: S;
  env: readonly EnvVariable[];
}

/** Declares a section; `env` maps each variable to `[field path within the section ([] for the section itself), kind]`. */
export function defineSection<K extends string, S extends z.ZodType>(key: K, schema: S, env: Record<string, [path: string | readonly string[], kind: EnvKind]> = {}): ConfigSection<K, S> {
  return {
    key,
    schema,
    env: Object.entries(env).map(([name, [path, kind]]) => ({ name, path: [key, ...(typeof path === 'string' ? [path] : path)], kind })),
  };
}
