/**
 * @module accounts/bootstrap
 * First start on an empty store: create a default organisation with the
 * configured starting credits and one API key, which is returned once for
 * the operator to copy and never shown again. Several servers starting at
 * once on one empty shared store make one organisation between them: the
 * store creates it only while it holds none, atomically.
 */
import type { AccountsConfig } from '../config/schema.js';
import type { Org, Store } from '../store/store.js';
import type { AccountsAdmin } from './admin.js';

export interface Bootstrap {
  org: Org;
  key: string;
}

export async function bootstrapAccounts(store: Store, admin: AccountsAdmin, config: AccountsConfig): Promise<Bootstrap | null> {
  if ((await store.orgs.count()) > 0) return null;
  const org = await admin.createFirstOrg({ name: 'default', credits: config.startingCredits });
  if (!org) return null;
  const issued = await admin.issueKey(org.id, 'bootstrap');
  return { org, key: issued.key };
}
