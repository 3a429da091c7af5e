/**
 * What both entries of @ars/client export besides their transport-bound
 * `createClient` and `bootstrapToken`; nothing here imports from node:.
 */
export { createClientWith, TERMINAL_EVENT_TYPES } from './client.ts';
export type {
  ArsClient,
  CallOptions,
  ClientCore,
  ClientOptions,
  MethodFunction,
  MethodNamespace,
  MethodRequest,
  MethodResponse,
  RunOutcome,
  RunUntilDoneOptions,
  Subscribe,
  TerminalEventType,
} from './client.ts';
export {
  ArsError,
  AuthenticationError,
  ConflictError,
  InternalError,
  InvalidRequestError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitedError,
  UnavailableError,
  UnimplementedError,
  createArsError,
  isArsError,
} from './errors.ts';
export type { ArsErrorCode, ClientErrorCode } from './errors.ts';
export { BOOTSTRAP_PATH, bootstrapTokenWith } from './bootstrap.ts';
export type { BootstrapRequest, BootstrapToken } from './bootstrap.ts';
export { EVENTS_PATH, isControlEvent } from './subscribe.ts';
export type { ReconnectOptions, StreamControlEvent, SubscribeOptions } from './subscribe.ts';
export { createSseParser } from './sse-parser.ts';
export type { SseMessage, SseParser } from './sse-parser.ts';
export { fetchTransport } from './transport-fetch.ts';
export type { HttpAnswer, PostTransport } from './transport-fetch.ts';
export { ERROR_STATUSES, PROTOCOL_VERSION } from './generated/contract.ts';
export type * from './generated/contract.ts';
