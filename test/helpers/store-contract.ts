/**
 * @module test/helpers/store-contract
 * The contract every `Store` passes, whatever database is under it: one
 * suite per repository (`store-contract/`: organisations, keys, voices,
 * dictionaries, the ledger, key budgets, usage, usage alerts; the job queue's is job-store-contract.ts), run
 * here against one store opened for the backend.
 */
import { after, before, describe } from 'node:test';
import { Subject, type OpenedStore } from './store-contract/common.js';
import { alertsContract } from './store-contract/alerts.js';
import { budgetsContract } from './store-contract/budgets.js';
import { dictionariesContract } from './store-contract/dictionaries.js';
import { keysContract } from './store-contract/keys.js';
import { ledgerContract } from './store-contract/ledger.js';
import { orgsContract } from './store-contract/orgs.js';
import { usageContract } from './store-contract/usage.js';
import { voicesContract } from './store-contract/voices.js';

export type { OpenedStore };

export function storeContract(name: string, open: () => Promise<OpenedStore>): void {
  describe(`store contract: ${name}`, () => {
    const subject = new Subject(open);
    before(async () => {
      subject.opened = await open();
    });
    after(() => subject.opened?.cleanup());
    for (const [repository, contract] of [
      ['organisations', orgsContract],
      ['keys', keysContract],
      ['voices', voicesContract],
      ['dictionaries', dictionariesContract],
      ['ledger', ledgerContract],
      ['key budgets', budgetsContract],
      ['usage alerts', alertsContract],
      ['usage', usageContract],
    ] as const) {
      describe(repository, () => contract(subject));
    }
  });
}
