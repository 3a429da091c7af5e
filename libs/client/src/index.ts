/**
 * @ars/client: the TypeScript SDK of the Agent Run Service (calls over
 * node:http on Node.js, else fetch, and a resumable SSE reader; no other dependency). Used by the CLI, the console,
 * the e2e tests and the benchmarks.
 */
export { createClient } from './client.ts';
export type { ArsClient, CallOptions, ClientOptions } from './client.ts';
export { ArsError, isArsError } from './errors.ts';
export { bootstrapToken, BOOTSTRAP_PATH } from './bootstrap.ts';
export type { BootstrapRequest } from './bootstrap.ts';
export { EVENTS_PATH, isControlEvent } from './subscribe.ts';
export type { ReconnectOptions, StreamControlEvent, SubscribeOptions } from './subscribe.ts';
export { createSseParser } from './sse-parser.ts';
export type { SseMessage, SseParser } from './sse-parser.ts';
