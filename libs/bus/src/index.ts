/**
 * @ars/bus: the service's NATS layer, and the only package importing
 * `@nats-io/*`. Connection, subject layout, JetStream infrastructure, RPC over
 * the NATS services API with identity and trace headers (and `callInternal`,
 * the typed client of the internal endpoint registry), discovery, the event
 * publisher with its redactor, and local nats-server processes for tests.
 */
export { connectBus, flushNow, isConnectionUp, maxPayloadOf } from './connection.ts';
export { CONFIG_CHANGED_SUBJECT, createConfigChangeAnnouncer, watchConfigChanges } from './config-changes.ts';
export type { ConfigChangeAnnouncer, ConfigChangeWatch } from './config-changes.ts';
export { ControlDeliveryError, requestControl, serveControlInbox } from './control-inbox.ts';
export type {
  ControlDeliveryFailure,
  ControlInbox,
  ControlInboxReply,
  ControlRequestOptions,
} from './control-inbox.ts';
export type { Bus, BusOptions } from './connection.ts';
export {
  CONTROL_SUBJECT_PREFIX,
  EMPTY_TOKEN,
  EVENT_RUN_HEADER,
  EVENT_SUBJECT_PREFIX,
  MAX_SUBJECT_LENGTH,
  RPC_SUBJECT_PREFIX,
  RUNS_SUBJECT_PREFIX,
  controlSubject,
  decodeToken,
  encodeToken,
  eventFilterSubject,
  eventSubject,
  parseEventSubject,
  rpcSubject,
  runsSubject,
} from './subjects.ts';
export type { EventFilter, EventSubjectParts } from './subjects.ts';
export {
  ARTIFACTS_OBJECT_STORE,
  DEFAULT_EVENTS_MAX_AGE_MS,
  DUPLICATE_WINDOW_MS,
  EVENTS_STREAM,
  FLEET_BUCKET,
  REVOCATIONS_BUCKET,
  RUNS_STREAM,
  ensureInfrastructure,
  openKv,
  openObjectStore,
} from './infrastructure.ts';
export type { InfrastructureOptions, InfrastructureReport, StreamOutcome } from './infrastructure.ts';
export { IDENTITY_HEADERS, decodeIdentityHeaders, encodeIdentityHeaders } from './rpc-headers.ts';
export { utf8 } from './utf8.ts';
export { endpointName, isPublicMethod, serveService } from './rpc-server.ts';
export type { RpcHandler, RpcReply, RpcRequest, ServedService, ServeOptions } from './rpc-server.ts';
export { DEFAULT_RPC_TIMEOUT_MS, createRpcClient } from './rpc-client.ts';
export { callInternal, callInternalWithinBudget } from './internal-client.ts';
export type { BudgetOptions, InternalCaller } from './internal-client.ts';
export { isStreamUnreachable, MESSAGE_ID_HEADER, publishToStream, StreamPublishError } from './stream-publish.ts';
export type { StreamAck, StreamPublishOptions } from './stream-publish.ts';
export { PUBLISH_DURATION, publishTimer } from './publish-metrics.ts';
export type { PublishTimer } from './publish-metrics.ts';
export type { CallOptions, RpcClient, RpcClientOptions } from './rpc-client.ts';
export { pingServices } from './discovery.ts';
export type { PingOptions, ServiceEndpointInfo, ServiceInfo } from './discovery.ts';
export { REDACTION_FAILED_TYPE, SOURCE_HEADER, createEventPublisher } from './event-publisher.ts';
export type {
  EventLookup,
  EventPublisher,
  EventPublisherOptions,
  PublishEventInput,
  PublishResult,
} from './event-publisher.ts';
export { MAX_REDACTION_DEPTH, REDACTED, redactPayload, scrubString, scrubValue } from './redactor.ts';
export { decodeEventMessage, decodeStoredEvent, encodeStoredEvent, traceIdOf } from './event-codec.ts';
export type { StoredEvent } from './event-codec.ts';
export {
  ALL_EVENTS_FILTER,
  LAGGING_REPLICA_RETRIES,
  LAGGING_REPLICA_RETRY_MS,
  READ_STALL_MS,
  eventStreamBounds,
  nextStoredEvent,
  readEvents,
  storedEventIdAt,
  tailEvents,
} from './event-reader.ts';
export { addEphemeralConsumer } from './ephemeral-consumer.ts';
export type { EphemeralConsumerOptions } from './ephemeral-consumer.ts';
export type {
  EventRangeReader,
  EventRecord,
  EventStreamBounds,
  EventTail,
  StoredPosition,
  ReadEventsOptions,
  TailEventsOptions,
} from './event-reader.ts';
export {
  findFreePort,
  goMemoryEnvironment,
  serverEnvironment,
  resolveNatsServerBinary,
  startNatsCluster,
  startNatsServer,
} from './nats-server.ts';
export type {
  NatsClusterHandle,
  NatsClusterMembership,
  NatsClusterOptions,
  NatsServerHandle,
  NatsServerOptions,
} from './nats-server.ts';
export { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
export type { ConsumerMessages, JetStreamClient, JetStreamManager, JsMsg, PubAck } from '@nats-io/jetstream';
export { headers } from '@nats-io/transport-node';
export { OutgoingHeaders, outgoingHeaders } from './outgoing-headers.ts';
export { headerOf } from './incoming-headers.ts';
export type { Msg, MsgHdrs, NatsConnection, Subscription } from '@nats-io/transport-node';
export type { KV, KvEntry } from '@nats-io/kv';
export type { ObjectStore, ObjectInfo } from '@nats-io/obj';
export { broadcastSubject, publishBroadcast, subscribeBroadcast } from './broadcast.ts';
