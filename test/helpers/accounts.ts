/**
 * @module test/helpers/accounts
 * Organisations and keys for tests, made through the same admin operations
 * the CLI and admin API use.
 */
import type { TestServer } from './server.js';

export interface TestOrg {
  orgId: string;
  key: string;
  keyId: string;
  auth: Record<string, string>;
}

export async function newOrg(
  server: TestServer,
  options: { credits?: number; maxConcurrent?: number | null; rateLimit?: { requests: number; per_seconds: number } | null } = {},
): Promise<TestOrg> {
  const admin = server.app.services.accounts!.admin;
  const org = await admin.createOrg({
    name: 'test org',
    credits: options.credits ?? 100_000,
    limits: { max_concurrent: options.maxConcurrent ?? null, rate_limit: options.rateLimit ?? null },
  });
  const issued = await admin.issueKey(org.id, 'test');
  return { orgId: org.id, key: issued.key, keyId: issued.record.id, auth: { authorization: `Bearer ${issued.key}` } };
}

export async function balanceOf(server: TestServer, orgId: string): Promise<{ balance: number; sum: number }> {
  const { store } = server.app.services.accounts!;
  const org = await store.orgs.get(orgId);
  return { balance: org!.balance, sum: await store.ledger.sum(orgId) };
}
