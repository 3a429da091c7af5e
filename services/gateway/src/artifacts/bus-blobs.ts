import { openObjectStore } from '@ars/bus';
import type { Bus, ObjectStore } from '@ars/bus';
import type { BlobLocation, BlobTransfer } from '../ports.ts';

/** The JetStream object stores named by upload and download locations, opened once per bucket. */
export function createBusBlobs(bus: Bus): BlobTransfer {
  const stores = new Map<string, Promise<ObjectStore>>();
  const storeOf = (location: BlobLocation): Promise<ObjectStore> => {
    if (location.transport !== 'nats_object_store') {
      return Promise.reject(new Error(`unsupported blob transport ${location.transport}`));
    }
    let store = stores.get(location.bucket);
    if (store === undefined) {
      store = openObjectStore(bus, location.bucket);
      store.catch(() => stores.delete(location.bucket));
      stores.set(location.bucket, store);
    }
    return store;
  };
  return {
    async put(location, data) {
      const info = await (await storeOf(location)).put({ name: location.object_name }, data);
      return { size: info.size };
    },
    async get(location) {
      const result = await (await storeOf(location)).get(location.object_name);
      return result === null ? null : result.data;
    },
  };
}
