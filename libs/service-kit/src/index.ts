/**
 * @ars/service-kit: boots a service from its env config, serves every
 * registry method it owns over the NATS services API (built handlers behind
 * request validation, the rest answering `unimplemented`), answers `_health`
 * (and, with `HEALTH_PORT`, HTTP liveness and readiness probes), and shuts
 * down gracefully.
 */
export {
  BaseServiceConfig,
  ConfigError,
  LOG_LEVELS,
  METRICS_CONFIG_SHAPE,
  TELEMETRY_CONFIG_SHAPE,
  defineServiceConfig,
  loadConfig,
  telemetryOptionsOf,
} from './config.ts';
export type { ConfigProblem, Environment, TelemetryConfig, TelemetryIdentity } from './config.ts';
export { defineService } from './service-definition.ts';
export type {
  ServiceContext,
  ServiceDefinition,
  ServiceHandlers,
  ServiceImplementation,
} from './service-definition.ts';
export { buildMethodTable, describeFirstIssue } from './method-table.ts';
export type { MethodEndpoint } from './method-table.ts';
export { buildInternalTable, serveInternal } from './internal-handler.ts';
export type { InternalCall, InternalHandler, InternalHandlerFn } from './internal-handler.ts';
export { typedMethod } from './typed-method.ts';
export type { TypedCall, TypedHandlerFn } from './typed-method.ts';
export { DEFAULT_CHECK_TIMEOUT_MS, HEALTH_METHOD, checkDependencies, createHealthHandler } from './health.ts';
export type { CheckStatus, DependencyChecks, HealthOptions, HealthReport } from './health.ts';
export { trackReadiness } from './readiness.ts';
export type { Readiness, ReadinessOptions, ReadinessStatus, ReadinessTracker } from './readiness.ts';
export { LIVENESS_PATH, METRICS_PATH, ProbeListenError, READINESS_PATH, startProbeServer } from './probe-server.ts';
export { instrumentHandlers, observeConnection, observeStoreTransactions } from './service-metrics.ts';
export type { ProbeServer, ProbeServerOptions } from './probe-server.ts';
export { databaseName, startService } from './start-service.ts';
export type { RunningService, StartOverrides } from './start-service.ts';
export { EXIT_CODES, runService } from './run-service.ts';
export { literalPattern, pageOf, readPage } from './paging.ts';
export type { PageOf } from './paging.ts';
export { startPeriodic } from './periodic.ts';
export type { PeriodicJob, PeriodicOptions } from './periodic.ts';
export { reconcileIdentity, requireAdmin, requireOwnIdentity } from './authority.ts';
export { canonicalJson, contentHash } from './canonical-json.ts';
export { applyPatch, splitPatch } from './member-patch.ts';
export {
  ERASED_SESSIONS_COLLECTION,
  createErasedSessionMarkers,
  refuseWriteIfErased,
  sessionErasedError,
} from './erased-sessions.ts';
export type { ErasedSessionMarkers, ErasedSessionTriple } from './erased-sessions.ts';
export type { MemberPatch, PatchValues } from './member-patch.ts';
export {
  BROKER_FORMAT_VERSION,
  BrokerActor,
  BrokerAnswer,
  BrokerError,
  BrokerPurpose,
  BrokerRequestBody,
  BrokerSubject,
  CREDENTIAL_BROKER_CONFIG_SHAPE,
  brokerUrl,
  createCredentialBrokerClient,
  credentialBrokerOptionsOf,
  credentialFingerprint,
} from './credential-broker.ts';
export type {
  BrokerCredential,
  BrokerFailure,
  BrokerFetch,
  CredentialBrokerClient,
  CredentialBrokerOptions,
  CredentialRequest,
} from './credential-broker.ts';
export { createArtifactUploader, createObjectStores, objectStoreLocation } from './artifact-upload.ts';
export type {
  ArtifactOwner,
  ArtifactUploader,
  ArtifactUploaderOptions,
  NewArtifact,
  ObjectStores,
} from './artifact-upload.ts';
