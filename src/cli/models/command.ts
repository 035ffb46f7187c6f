/**
 * @module cli/models/command
 * `voicegate models`: the local neural voices an operator installs for the
 * sherpa-onnx engine. `list` shows the catalogue and what is installed,
 * `pull` downloads (resumable), checks, unpacks and verifies a model into
 * `<dataDir>/models/<name>` and prints the configuration that serves it,
 * `pull --from` does the same from a file or URL (air-gapped installs),
 * `verify` re-checks installed models, `remove` deletes one. Only `pull`
 * touches the network.
 */
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../../config/schema.js';
import { UsageError } from '../accounts.js';
import { CATALOGUE, DEFAULT_BASE_URL, findEntry, languageGroup, type CatalogueEntry } from './catalogue.js';
import { speakerNames } from '../../engines/sherpa/speakers.js';
import { installedModels, modelsDir, verifyModel, type Verified } from './install.js';
import { ByteProgress } from './progress.js';
import { ModelsError, pullModel } from './pull.js';
import { IMPORT_USAGE, importModel } from './import.js';

export const MODELS_USAGE = `voicegate models list [--available]
  voicegate models pull <name> [--from <file|url>] [--sha256 <hex>] [--base-url <url>] [--force] [--progress]
  voicegate models verify [name]
  voicegate models remove <name>
  ${IMPORT_USAGE}
    Local neural voices for the sherpa-onnx engine, kept in <dataDir>/models/<name>.
    --available         the catalogue only, by language, with each archive's size and licence
    --from <file|url>   install from a downloaded archive (.tar.bz2) or another URL
    --sha256 <hex>      the archive's expected SHA-256 (default: the catalogue's, when known)
    --base-url <url>    where archives are fetched from (VOICEGATE_MODELS_BASE_URL;
                        default ${DEFAULT_BASE_URL})
    --force             replace an installed model of the same name
    --progress          draw the progress bar even when stderr is not a terminal`;

const OPTIONS = {
  from: { type: 'string' },
  sha256: { type: 'string' },
  'base-url': { type: 'string' },
  force: { type: 'boolean' },
  progress: { type: 'boolean' },
  available: { type: 'boolean' },
  config: { type: 'string' },
  id: { type: 'string' },
  url: { type: 'string' },
  target: { type: 'string' },
} as const;

export { ModelsError };

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

function checkName(name: string | undefined, what: string): string {
  if (!name) throw new UsageError(`${what} needs a model name\n\n${MODELS_USAGE}`);
  if (!NAME.test(name) || name.includes('..')) throw new UsageError(`${JSON.stringify(name)} is not a model name (letters, digits, ".", "_", "-")`);
  return name;
}

const mb = (bytes: number): string => `${Math.round(bytes / 1_000_000)} MB`;

function printTable(rows: string[][]): void {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd());
}

const languagesOf = (e: CatalogueEntry): string => (e.languages ? e.languages.join(' ') : e.language);

function list(config: Config): void {
  const installed = new Set(installedModels(config.dataDir));
  const rows = [['name', 'family', 'language', 'rate', 'speakers', 'size', 'licence', 'installed']];
  for (const e of CATALOGUE) rows.push([e.name, e.family, languagesOf(e), `${e.sampleRate}`, `${e.speakers}`, mb(e.size), e.licence, installed.has(e.name) ? 'yes' : '']);
  for (const name of installed) if (!findEntry(name)) rows.push([name, '', '', '', '', '', '', 'yes']);
  printTable(rows);
  console.log(`\nSource: ${DEFAULT_BASE_URL}/<name>.tar.bz2`);
  console.log(`Installed models live in ${resolve(modelsDir(config.dataDir))}`);
}

/** `list --available`: the catalogue by language (multilingual models last), nothing about what is installed. */
function listAvailable(): void {
  const groups = new Map<string, CatalogueEntry[]>();
  for (const e of CATALOGUE) groups.set(languageGroup(e), [...(groups.get(languageGroup(e)) ?? []), e]);
  const order = [...groups.keys()].sort((a, b) => Number(a === 'multilingual') - Number(b === 'multilingual') || a.localeCompare(b));
  for (const [i, group] of order.entries()) {
    if (i > 0) console.log('');
    console.log(`${group}:`);
    const rows = [['  name', 'language', 'family', 'speakers', 'size', 'sha256', 'licence']];
    for (const e of groups.get(group)!) rows.push([`  ${e.name}`, languagesOf(e), e.family, `${e.speakers}`, `~${mb(e.size)}`, e.sha256 ? e.sha256.slice(0, 12) : 'not published', e.licence]);
    printTable(rows);
  }
  console.log(`\nSource: ${DEFAULT_BASE_URL}/<name>.tar.bz2 (voicegate models pull <name>)`);
}

/** The configuration that binds a model id to the installed folder. */
function configLines(name: string, dir: string, verified: Verified): string {
  const voice = verified.numSpeakers > 1 ? (speakerNames(verified.layout.metadata, verified.numSpeakers)?.[0] ?? `${name}-0`) : name;
  const snippet = {
    engines: { [name]: { type: 'sherpa-onnx', model: resolve(dir), workers: 2, numThreads: 1 } },
    models: { [name]: { extends: 'gepard-1.0', engine: name, defaultVoice: voice } },
  };
  return JSON.stringify(snippet, null, 2);
}

function describe(verified: Verified): string {
  const speakers = verified.numSpeakers > 1 ? `, ${verified.numSpeakers} speakers` : '';
  return `${verified.layout.family}, ${verified.sampleRate} Hz${speakers}`;
}

async function pull(config: Config, name: string, values: Record<string, string | boolean | undefined>): Promise<void> {
  const from = values.from as string | undefined;
  if (!findEntry(name) && from === undefined) throw new UsageError(`${name} is not in the catalogue (see voicegate models list); install another archive with --from <file|url>`);
  const sha256 = values.sha256 as string | undefined;
  if (sha256 !== undefined && !/^[0-9a-fA-F]{64}$/.test(sha256)) throw new UsageError('--sha256 takes 64 hex digits');
  const dir = join(modelsDir(config.dataDir), name);
  if (existsSync(dir) && !values.force) throw new ModelsError(`${name} is already installed in ${resolve(dir)} (voicegate models remove ${name}, or pull with --force)`);
  const installed = await pullModel({
    dataDir: config.dataDir,
    name,
    from,
    sha256,
    baseUrl: values['base-url'] as string | undefined,
    force: Boolean(values.force),
    progress: (size) => new ByteProgress(size, Boolean(values.progress) || Boolean(process.stderr.isTTY)),
    say: (line) => console.error(line),
  });
  console.log(`Installed ${name} in ${installed.dir} (${describe(installed)}); verified.`);
  console.log(`\nAdd to the configuration to serve it as model "${name}":\n${configLines(name, installed.dir, installed)}`);
}

async function verify(config: Config, name: string | undefined): Promise<void> {
  const names = name === undefined ? installedModels(config.dataDir) : [checkName(name, 'verify')];
  if (names.length === 0) {
    console.log(`No models are installed in ${resolve(modelsDir(config.dataDir))}`);
    return;
  }
  let failed = 0;
  for (const n of names) {
    const dir = join(modelsDir(config.dataDir), n);
    if (!existsSync(dir)) {
      console.log(`${n}: not installed`);
      failed++;
      continue;
    }
    try {
      console.log(`${n}: ok (${describe(await verifyModel(dir, config.dataDir))})`);
    } catch (err) {
      console.log(`${n}: FAILED: ${(err as Error).message}`);
      failed++;
    }
  }
  if (failed) throw new ModelsError(`${failed} of ${names.length} model${names.length === 1 ? '' : 's'} failed verification`);
}

function remove(config: Config, name: string): void {
  const dir = join(modelsDir(config.dataDir), name);
  if (!existsSync(dir)) throw new ModelsError(`${name} is not installed`);
  rmSync(dir, { recursive: true, force: true });
  console.log(`Removed ${name} (${resolve(dir)}); engines configured with it will not start until it is installed again.`);
}

/** Runs `voicegate models <sub> …`; `argv` is the whole argument list after the program name. */
export async function runModels(config: Config, argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS, strict: true });
  const [, sub, name, ...rest] = positionals;
  if (sub === 'import') return importModel(config, positionals.slice(2), { id: values.id, url: values.url, target: values.target });
  if (rest.length) throw new UsageError(`unexpected ${rest.join(' ')}\n\n${MODELS_USAGE}`);
  if (sub === 'list' || sub === undefined) return values.available ? listAvailable() : list(config);
  if (sub === 'pull') return pull(config, checkName(name, 'pull'), values);
  if (sub === 'verify') return verify(config, name);
  if (sub === 'remove') return remove(config, checkName(name, 'remove'));
  throw new UsageError(`unknown models command ${sub}\n\n${MODELS_USAGE}`);
}
