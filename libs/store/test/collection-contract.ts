import { afterEach, beforeEach, describe } from 'vitest';
import type { Store } from '../src/index.ts';
import { crudContract } from './contract/crud.contract.ts';
import { findAndUpdateContract } from './contract/find-and-update.contract.ts';
import { indexContract } from './contract/index.contract.ts';
import { paginationContract } from './contract/pagination.contract.ts';
import { persistenceContract } from './contract/persistence.contract.ts';
import { queryContract } from './contract/query.contract.ts';
import { updateContract } from './contract/update.contract.ts';
import type { ContractContext, ContractTarget } from './contract/context.ts';

export type { ContractContext, ContractTarget } from './contract/context.ts';

/**
 * Makes a fresh, empty target for one test: a temporary directory, an
 * in-memory store, or a unique MongoDB database.
 */
export type ContractTargetFactory = () => Promise<ContractTarget>;

/**
 * The conformance suite of the store port. Every adapter runs it unchanged;
 * each test gets its own empty target from `openFactory`.
 */
export function describeCollectionContract(
  name: string,
  options: { readonly durable: boolean },
  openFactory: ContractTargetFactory,
): void {
  describe(name, () => {
    let target: ContractTarget | undefined;
    let store: Store | undefined;

    beforeEach(async () => {
      target = await openFactory();
      store = await target.open();
    });

    afterEach(async () => {
      await store?.close().catch(() => undefined);
      await target?.cleanup();
      store = undefined;
      target = undefined;
    });

    const context: ContractContext = {
      durable: options.durable,
      store() {
        if (store === undefined) throw new Error('no store open');
        return store;
      },
      target() {
        if (target === undefined) throw new Error('no target');
        return target;
      },
      async reopen() {
        await context.store().close();
        store = await context.target().open();
        return store;
      },
    };

    describe('insert, find, delete', () => crudContract(context));
    describe('query operators', () => queryContract(context));
    describe('update operators and upsert', () => updateContract(context));
    describe('findOneAndUpdate', () => findAndUpdateContract(context));
    describe('indexes', () => indexContract(context));
    describe('pagination', () => paginationContract(context));
    describe('persistence', () => persistenceContract(context));
  });
}
