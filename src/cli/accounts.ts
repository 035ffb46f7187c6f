/**
 * @module cli/accounts
 * Operator commands on the store the server uses (the same data directory,
 * or the same PostgreSQL database when `VOICEGATE_DATABASE_URL` is set):
 * organisations, keys, credits and usage. Output is JSON, so it pipes into
 * jq; a new key is also printed on its own line. With Redis configured
 * (`VOICEGATE_REDIS_URL`), each change is also announced on the change bus,
 * so running servers drop what they cached at once.
 */
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { AccountsAdmin } from '../accounts/admin.js';
import { UsageReports } from '../accounts/usage-reports.js';
import { ledgerView, orgView } from '../accounts/views.js';
import { openChangeBus } from '../cluster/open.js';
import type { Config } from '../config/schema.js';
import { ApiError } from '../errors/api-error.js';
import { openStore } from '../store/open.js';

export const ACCOUNTS_USAGE = `Accounts (operate on the configured store: the data directory, or VOICEGATE_DATABASE_URL):
  voicegate orgs create --name NAME [--credits N] [--max-concurrent N|none] [--rate N/SECONDS|none]
  voicegate orgs list
  voicegate orgs show ORG_ID
  voicegate orgs limits ORG_ID [--max-concurrent N|none] [--rate N/SECONDS|none]
  voicegate keys create --org ORG_ID [--name NAME] [KEY POLICY]
  voicegate keys update KEY_ID [--name NAME|none] [KEY POLICY]
  voicegate keys list --org ORG_ID
  voicegate keys revoke KEY_ID
  voicegate credits add --org ORG_ID --amount N --reason TEXT
  voicegate balance --org ORG_ID
  voicegate usage --org ORG_ID [--limit N] [--starting-after ENTRY_ID]
  voicegate usage summary [--from TIME] [--to TIME] [--group-by day,model,…] [--org ORG_ID]
  voicegate usage export [--from TIME] [--to TIME] [--format csv|jsonl] [--org ORG_ID] [--output FILE]
    (TIME: ISO 8601, e.g. 2026-11-01 or 2026-11-01T00:00:00Z; [from, to); defaults: the current UTC month until now;
     group-by: day, hour, model, endpoint, key, org)

KEY POLICY (each flag optional; none clears it on update; absent on create: no limit):
  --budget CREDITS/day|month|total|none   --scopes tts,voices:read,…|none
  --models MODEL,…|none   --expires ISO-8601-TIME|none   --networks CIDR,…|none`;

export const ACCOUNT_COMMANDS = new Set(['orgs', 'keys', 'credits', 'balance', 'usage']);

export class UsageError extends Error {}

function limitsInput(values: Record<string, unknown>): Record<string, unknown> {
  const limits: Record<string, unknown> = {};
  const concurrent = values['max-concurrent'];
  if (typeof concurrent === 'string') limits.max_concurrent = concurrent === 'none' ? null : Number(concurrent);
  const rate = values.rate;
  if (typeof rate === 'string') {
    if (rate === 'none') limits.rate_limit = null;
    else {
      const match = /^(\d+)\/(\d+)$/.exec(rate);
      if (!match) throw new UsageError('--rate takes REQUESTS/SECONDS, e.g. 600/60, or none');
      limits.rate_limit = { requests: Number(match[1]), per_seconds: Number(match[2]) };
    }
  }
  return limits;
}

/** A comma-separated flag as a list: `none` is null (no limit), an empty value the empty list. */
function listFlag(value: string): string[] | null {
  if (value === 'none') return null;
  return value.split(',').map((item) => item.trim()).filter(Boolean);
}

/** A key's name and policy from the flags given, in the admin API's fields (checked by `parseKeyInput`). */
export function keyInput(values: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const name = text('name');
  if (name !== undefined) input.name = name === 'none' ? null : name;
  const budget = text('budget');
  if (budget !== undefined) {
    if (budget === 'none') input.budget = null;
    else {
      const match = /^(\d+)\/(\w+)$/.exec(budget);
      if (!match) throw new UsageError('--budget takes CREDITS/day, CREDITS/month or CREDITS/total, e.g. 100000/month, or none');
      input.budget = { credits: Number(match[1]), period: match[2] };
    }
  }
  const scopes = text('scopes');
  if (scopes !== undefined) input.scopes = listFlag(scopes);
  const models = text('models');
  if (models !== undefined) input.models = listFlag(models);
  const expires = text('expires');
  if (expires !== undefined) input.expires_at = expires === 'none' ? null : expires;
  const networks = text('networks');
  if (networks !== undefined) input.allowed_networks = listFlag(networks);
  return input;
}

function need(value: unknown, flag: string): string {
  if (typeof value !== 'string' || !value) throw new UsageError(`${flag} is required`);
  return value;
}

export async function runAccountsCommand(config: Config, argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string' },
      name: { type: 'string' },
      credits: { type: 'string' },
      org: { type: 'string' },
      amount: { type: 'string' },
      reason: { type: 'string' },
      limit: { type: 'string' },
      'starting-after': { type: 'string' },
      'max-concurrent': { type: 'string' },
      rate: { type: 'string' },
      budget: { type: 'string' },
      scopes: { type: 'string' },
      models: { type: 'string' },
      expires: { type: 'string' },
      networks: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      'group-by': { type: 'string', multiple: true },
      format: { type: 'string' },
      output: { type: 'string' },
    },
  });
  const [group, action, target] = positionals;
  const store = await openStore(config);
  const admin = new AccountsAdmin(store, config.accounts);
  // With Redis, running servers hear of each change at once. The change is stored either way; servers see it when their caches expire.
  const bus = openChangeBus(config);
  const announced: Promise<void>[] = [];
  admin.onChange((change) =>
    announced.push(bus.publish(change).catch(() => void process.stderr.write('warning: Redis could not be reached, so running servers were not told at once; they see the change when their caches expire\n'))),
  );
  const pricing = { usdPerMillionCredits: config.accounts.usdPerMillionCredits, costHeaderAliasPrefix: null };
  const print = (value: unknown) => process.stdout.write(JSON.stringify(value, null, 2) + '\n');
  try {
    const usageReport = group === 'usage' && (action === 'summary' || action === 'export');
    switch (`${group} ${group === 'balance' || (group === 'usage' && !usageReport) ? '' : action ?? ''}`.trim()) {
      case 'orgs create': {
        const credits = values.credits === undefined ? undefined : Number(values.credits);
        print(orgView(await admin.createOrg({ name: values.name, credits, limits: limitsInput(values) }), pricing));
        break;
      }
      case 'orgs list':
        print((await admin.listOrgs()).map((o) => orgView(o, pricing)));
        break;
      case 'orgs show':
        print(orgView(await admin.getOrg(need(target, 'ORG_ID')), pricing));
        break;
      case 'orgs limits':
        print(orgView(await admin.setLimits(need(target, 'ORG_ID'), limitsInput(values)), pricing));
        break;
      case 'keys create': {
        const { name, ...policy } = keyInput(values);
        const issued = await admin.issueKey(need(values.org, '--org'), name, policy);
        process.stderr.write('New API key (shown once; store it now):\n');
        process.stdout.write(issued.key + '\n');
        process.stderr.write(JSON.stringify(await admin.viewKey(issued.record), null, 2) + '\n');
        break;
      }
      case 'keys update':
        print(await admin.viewKey(await admin.updateKey(need(target, 'KEY_ID'), keyInput(values))));
        break;
      case 'keys list':
        print(await admin.viewKeys(need(values.org, '--org')));
        break;
      case 'keys revoke':
        print(await admin.viewKey(await admin.revokeKey(need(target, 'KEY_ID'))));
        break;
      case 'credits add': {
        const { org, entry } = await admin.addCredits(need(values.org, '--org'), Number(need(values.amount, '--amount')), values.reason);
        print({ entry: ledgerView(entry, pricing), org: orgView(org, pricing) });
        break;
      }
      case 'balance':
        print(orgView(await admin.getOrg(need(values.org, '--org')), pricing).balance);
        break;
      case 'usage': {
        const page = await admin.usage(need(values.org, '--org'), { limit: values.limit, starting_after: values['starting-after'] });
        print({ data: page.data.map((e) => ledgerView(e, pricing)), has_more: page.hasMore });
        break;
      }
      case 'usage summary':
        print(await new UsageReports(store, pricing).summary({ from: values.from, to: values.to, group_by: values['group-by'], org: values.org }));
        break;
      case 'usage export': {
        const { chunks } = await new UsageReports(store, pricing).export({ from: values.from, to: values.to, format: values.format, org: values.org });
        // Written as the file or pipe takes it: the store is read a page at a time.
        await pipeline(Readable.from(chunks), values.output ? createWriteStream(values.output) : process.stdout, { end: values.output !== undefined });
        break;
      }
      default:
        throw new UsageError(`unknown command: ${positionals.join(' ')}\n\n${ACCOUNTS_USAGE}`);
    }
  } catch (err) {
    if (err instanceof ApiError) throw new UsageError(err.message);
    throw err;
  } finally {
    await Promise.all(announced);
    await bus.close();
    await store.close();
  }
}
