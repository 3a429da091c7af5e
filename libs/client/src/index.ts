/**
 * @ars/client: the TypeScript SDK of the Agent Run Service. The Node.js
 * entry: JSON calls over node:http(s) with keep-alive (the global fetch
 * elsewhere), the event stream over fetch. Browsers get `browser.ts` (the
 * `browser` export condition), with the same surface and no node: import.
 */
import { bootstrapTokenWith } from './bootstrap.ts';
import { createClientWith } from './client.ts';
import { defaultTransport } from './transport.ts';

/** Creates a client; every method of the registry is `client.<family>.<name>(request)`. */
export const createClient = createClientWith(defaultTransport);
/** Mints a token from a dev-mode gateway (loopback only). */
export const bootstrapToken = bootstrapTokenWith(defaultTransport);

export * from './surface.ts';
