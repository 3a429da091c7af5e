import type { Store } from '../src/index.ts';

/** The store with every collection keeping its reads (`cacheReads`): the whole contract must hold as without. */
export function keepingReads(store: Store): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'collection') return (name: string) => target.collection(name, { cacheReads: true });
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
