/**
 * @ars/client for browsers (the `browser` export condition): the same
 * surface as the Node.js entry, with every request over the global fetch and
 * no node: import anywhere in its module graph.
 */
import { bootstrapTokenWith } from './bootstrap.ts';
import { createClientWith } from './client.ts';
import { fetchTransport } from './transport-fetch.ts';

/** Creates a client; every method of the registry is `client.<family>.<name>(request)`. */
export const createClient = createClientWith(fetchTransport);
/** Mints a token from a dev-mode gateway (loopback only). */
export const bootstrapToken = bootstrapTokenWith(fetchTransport);

export * from './surface.ts';
