/**
 * @module accounts/bootstrap
 * First start on an empty store: create a default organisation with the
 * configured starting credits and one API key, which is returned once for
 * the operator to copy and never shown again.
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
  const org = await admin.createOrg({ name: 'default', credits: config.startingCredits });
  const issued = await admin.issueKey(org.id, 'bootstrap');
  return { org, key: issued.key };
}
